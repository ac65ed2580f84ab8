"""The open registries of the trainers' named choices: policy losses, advantage estimators, divergences.

A config names its choice (``GRPOConfig(policy_loss="gspo")``); the registry maps the name to its function, and
the list of valid names is the registry's, so a function a user registers is a choice like the built-in ones,
from Python and from a config file, with nothing else to change (verl's ``register_policy_loss`` in
``core_algos``)::

    from reasongym.agents import register_policy_loss
    from reasongym.agents.policy_losses import Surrogate

    @register_policy_loss("clipped_reinforce")
    def clipped_reinforce(logp, old_logp, adv, mask, cfg):
        ratio = torch.exp(logp - old_logp)  # [B, T]
        ...
        return Surrogate(per_token, ratio, clipped_low, clipped_high)

    train_grpo(GRPOConfig(policy_loss="clipped_reinforce"), model, tokenizer, env)

The built-in choices are registered by entry point (``"module:function"``) in this one table, loaded on first
use: a config checks its names when it is built, and this module imports no torch, so the command line parses
flags and config files (and answers ``--help``) before torch loads. Each function's signature and shape
legend are its module's: `reasongym.agents.policy_losses`, `reasongym.agents.advantages`,
`reasongym.agents.distill`. A registry is the only module-level mutable state here; registering a name twice
is refused, and `Registry.unregister` takes a user's name back.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from reasongym.agents.choices import check_choice
from reasongym.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


class Registry(Mapping[str, Callable[..., Any]]):
    """Names of one choice -> functions, in the order they were registered; built-ins load on first use."""

    def __init__(self, field: str, builtins: Mapping[str, str], traits: Mapping[str, frozenset[str]]) -> None:
        """``field``: the config field that names the choice (error messages); ``builtins``: name ->
        ``"module:function"``; ``traits``: name -> what the trainer must know of it (see `has`)."""
        self.field = field
        self._builtins = frozenset(builtins)
        self._entries: dict[str, str | Callable[..., Any]] = dict(builtins)
        self._traits = {name: frozenset(traits.get(name, ())) for name in builtins}

    def register(self, name: str, **traits: bool) -> Callable[[F], F]:
        """A decorator that registers its function under ``name``; ``traits`` are flags the trainers read
        (`has`): an advantage estimator's ``batch_level``, a divergence's ``token_level``.

        Raises:
            ConfigError: ``name`` is taken, or is not a non-empty string.
        """
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{self.field} name must be a non-empty string, got {name!r}")
        if name in self._entries:
            raise ConfigError(f"{self.field}={name!r} is registered already; choose another name")

        def add(function: F) -> F:
            self._entries[name] = function
            self._traits[name] = frozenset(trait for trait, on in traits.items() if on)
            return function

        return add

    def unregister(self, name: str) -> None:
        """Take back a name `register` added (a built-in stays).

        Raises:
            ConfigError: ``name`` is a built-in or was not registered.
        """
        if name in self._builtins or name not in self._entries:
            raise ConfigError(
                f"{self.field}={name!r} was not registered with register(); nothing to take back"
            )
        del self._entries[name], self._traits[name]

    def check(self, name: str) -> None:
        """Raise ConfigError naming the field, the valid names and the nearest one, unless ``name`` is one."""
        check_choice(name, self.field, self._entries)

    def has(self, name: str, trait: str) -> bool:
        """Whether the choice ``name`` was registered with ``trait``."""
        self.check(name)
        return trait in self._traits[name]

    def __getitem__(self, name: str) -> Callable[..., Any]:
        """The function registered as ``name`` (a built-in is imported now).

        Raises:
            ConfigError: ``name`` is not registered (naming the valid names and the nearest one).
        """
        self.check(name)
        entry = self._entries[name]
        if isinstance(entry, str):
            module, function = entry.split(":")
            entry = self._entries[name] = getattr(importlib.import_module(module), function)
        return entry

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)


POLICY_LOSSES = Registry(
    "policy_loss",
    {
        "ppo_clip": "reasongym.agents.policy_losses:ppo_clip",
        "gspo": "reasongym.agents.policy_losses:gspo",
        "gspo_token": "reasongym.agents.policy_losses:gspo_token",
        "cispo": "reasongym.agents.policy_losses:cispo",
    },
    {},
)
"""Policy losses (``policy_loss``): ``(logp [B, T], old_logp [B, T], adv [B, 1], mask [B, T], cfg) -> Surrogate``."""

ADVANTAGE_ESTIMATORS = Registry(
    "advantage_normalization",
    {
        "group_std": "reasongym.agents.advantages:normalize_by_group_std",
        "batch_std": "reasongym.agents.advantages:normalize_by_batch_std",
        "none": "reasongym.agents.advantages:no_normalization",
        "rloo": "reasongym.agents.advantages:leave_one_out",
        "reinforce_plus_plus": "reasongym.agents.advantages:reinforce_plus_plus",
        "reinforce_plus_plus_baseline": "reasongym.agents.advantages:reinforce_plus_plus_baseline",
    },
    {
        name: frozenset({"batch_level"})
        for name in ("batch_std", "reinforce_plus_plus", "reinforce_plus_plus_baseline")
    },
)
"""Advantage estimators (``advantage_normalization``): ``(rewards [B], G, valid [B]) -> [B]`` advantages, 0 on
rows left out. ``batch_level``: a sample's advantage depends on other groups' rewards (the whole batch)."""

DIVERGENCES = Registry(
    "divergence",
    {
        "reverse_kl": "reasongym.agents.distill:reverse_kl",
        "forward_kl": "reasongym.agents.distill:forward_kl",
        "jsd": "reasongym.agents.distill:generalized_jsd",
        "sampled_reverse_kl": "reasongym.agents.distill:sampled_reverse_kl",
    },
    {"sampled_reverse_kl": frozenset({"token_level"})},
)
"""On-policy distillation's divergences (``divergence``): ``(student [b, T, V], teacher [b, T, V] (or [b, T]
when ``token_level``), tokens [b, T], jsd_beta) -> Divergence``. ``token_level``: it needs the teacher's
log-probs of the sampled tokens only (a served teacher can give those)."""

register_policy_loss = POLICY_LOSSES.register
"""``@register_policy_loss(name)``: a user's policy loss, selectable as ``policy_loss=name``."""
register_advantage_estimator = ADVANTAGE_ESTIMATORS.register
"""``@register_advantage_estimator(name, batch_level=False)``: selectable as ``advantage_normalization=name``."""
register_divergence = DIVERGENCES.register
"""``@register_divergence(name, token_level=False)``: selectable as ``divergence=name``."""
