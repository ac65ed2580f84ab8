"""STaR on CommonsenseQA with rationales (issue 39): do a small model's own chains of thought teach it?

The setting: SmolLM2-135M-Instruct answers ``reasongym/CommonsenseQA-v0`` (five options A-E) through its chat
template, told to reason step by step and end with "The answer is (X)". Training problems come from the train
split (from index ``TRAIN_START``: the few-shot exemplars sit before it); the held-out set is the first
``eval_problems`` problems of the validation split (400: a 95% interval of about +-5 points), answered greedily.

Arms (``ARMS``), the trained ones given the same number of sampled completion tokens (``budget_tokens``):

- ``zero_shot_cot``, ``few_shot_cot``: evaluation only, zero-shot and with Wei et al.'s (2022) seven
  CommonsenseQA exemplars (`EXEMPLARS`), seed-independent (greedy): run once;
- ``direct_sft``: fine-tuning on the gold letters ("The answer is (X)."), for as many optimizer steps as STaR's
  fine-tunes take in all (`star_total_sft_steps`), on that many distinct training problems; samples nothing;
- ``star_no_rationalization``, ``star``: STaR (`reasongym.agents.star`), without and with rationalization;
- ``star_random_filter``: the control of ``star_no_rationalization``: each sampling call keeps as many
  rationales as the verifier would have kept, chosen at random among those with a readable letter
  (`RandomFilter`), so the filter's count and the format are kept and the verifier's choice is not;
- ``grpo_cot``: GRPO with a chain of thought on the same environment (`real_learning.rl_arm`).

Compute matching: STaR's rationale sampler is wrapped in `RationaleBudget`, which samples in calls of at most
``budget_chunk`` prompts, checks the budget before each, and once it is spent hands empty (unfinished)
completions to the rest of the iteration, which then fine-tunes on what it kept; the next iteration stops
before sampling (its ``on_step`` hook returns True). So no STaR arm passes its budget by more than one chunk (issue 27's STaR
checked per iteration and overran by 1.5x). GRPO checks before each step's sampling call (`real_learning.Budget`).

Held-out accuracy is measured before training (the ``zero_shot_cot`` arm), half-way through the budget and at its
end. Each (arm, seed) writes ``OUT/runs/ARM-sSEED.json`` when done (evaluation-only arms ``OUT/runs/ARM.json``);
a rerun skips it, and a rerun with another setting is refused. The summary (``OUT/summary.json``, ``OUT/table.md``,
``OUT/rationales.md``, ``OUT/accuracy.png``) gives per arm the held-out accuracy with a 95% bootstrap interval
(seeds and problems resampled, paired: `real_learning.interval`), the share of training problems kept per
iteration, the lucky-guess diagnostics of the kept rationales (`lucky_guess`), the answer-letter distribution
before and after, and 10 held-out rationales before and after, as they are.

`pilot.py` measures what the arms cost; ``--gpu`` swaps in Qwen2.5-0.5B-Instruct
with the vLLM engine (``--model`` names a local folder where no hub is reachable); ``--dry`` shrinks any of it to
seconds on the tiny random model. One file past the usual size, on purpose: the arms, the control and the
diagnostics of one experiment, in run order.

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.star_csqa --model $REASONGYM_SMOLLM2_GGUF --seeds 0 1

Last line: one JSON object (the summary).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.star_csqa.arms import (  # noqa: E402
    direct_sft_arm,
    grpo_arm,
    run_arm,
    smoke,
    star_configs,
    star_problems,
    star_record,
    star_total_sft_steps,
)
from benchmarks.star_csqa.budget import RationaleBudget  # noqa: E402
from benchmarks.star_csqa.control import RandomFilter  # noqa: E402
from benchmarks.star_csqa.diagnostics import lucky_guess  # noqa: E402
from benchmarks.star_csqa.evaluation import held_out, make_env  # noqa: E402
from benchmarks.star_csqa.run import main  # noqa: E402
from benchmarks.star_csqa.setting import ARMS, ENV_ID, EVAL_ARMS, PRESETS, TRAINED_ARMS, Setting, dry  # noqa: E402
from benchmarks.star_csqa.summary import summarize  # noqa: E402

__all__ = [
    "ARMS",
    "ENV_ID",
    "EVAL_ARMS",
    "PRESETS",
    "RandomFilter",
    "RationaleBudget",
    "Setting",
    "TRAINED_ARMS",
    "direct_sft_arm",
    "dry",
    "grpo_arm",
    "held_out",
    "lucky_guess",
    "main",
    "make_env",
    "run_arm",
    "smoke",
    "star_configs",
    "star_problems",
    "star_record",
    "star_total_sft_steps",
    "summarize",
]
