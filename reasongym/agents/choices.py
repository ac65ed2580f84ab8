"""The closed named choices of the trainers' configs, as names alone (no torch), and `check_choice`.

A config checks its choices when it is built (`check_choice`), so the command line parses flags and config
files before torch loads. The choices a user may extend (policy losses, advantage estimators, divergences) are
open registries (`reasongym.agents.registries`); the closed ones below are part of their algorithm's
mathematics, each function in a table whose keys a test holds to these names, in order: GRPO's
`LOSS_AGGREGATIONS` and `KL_MODES`, and `reasongym.agents.offpolicy.IMPORTANCE_SAMPLING_CORRECTIONS`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Literal

from reasongym.errors import ConfigError

LossAggregationName = Literal["seq_mean_token_mean", "token_mean", "constant"]
"""GRPO's loss aggregations (``loss_aggregation``)."""
KLPlacement = Literal["off", "k3_loss", "k1_reward"]
"""Where GRPO's KL to the reference goes (``kl``)."""
CorrectionName = Literal["off", "token_truncate", "token_mask", "sequence_truncate", "sequence_mask"]
"""The off-policy corrections (``importance_sampling.mode``)."""


def check_choice(name: str, field: str, names: Iterable[str]) -> None:
    """Raise ConfigError naming ``field``, the valid names and the nearest one, unless ``name`` is one of ``names``."""
    valid = list(names)
    if name in valid:
        return
    nearest = difflib.get_close_matches(str(name), valid, n=1, cutoff=0.4)
    hint = f"; did you mean {nearest[0]!r}?" if nearest else ""
    raise ConfigError(f"{field}={name!r} is not allowed; valid names: {sorted(valid)}{hint}")
