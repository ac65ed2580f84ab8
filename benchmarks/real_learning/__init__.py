"""Does a real model get better from a verifier alone? STaR, GRPO and DAPO on SmolLM2, compute-matched.

The setting (how it was chosen, and the results: benchmarks/real_learning/README.md):
SmolLM2-135M-Instruct answers 2-digit additions (``reasongym/Arithmetic-v0`` level 1) told to reply with
the number only, through its chat template; completions of at most 16 tokens (its answers take 5-12). It
starts at 18% greedy accuracy on held-out problems, and its samples at temperature 0.7 are right often
enough (7%) for groups of 8 to disagree. Full fine-tuning for every arm (SFT and STaR's fine-tuning take no
LoRA yet; 135M parameters fit easily).

Arms, each given the same number of sampled completion tokens (``budget_tokens``; CPU-seconds beside):

- ``grpo``, ``dapo``: the library's trainers on the verifier's reward;
- ``star``: STaR's filter loop (rationalization off: only verified samples of the policy are kept);
- ``grpo_shuffled``, ``dapo_shuffled``, ``star_shuffled``: the same, but every verdict is replaced by one
  drawn from the earlier verdicts of the run (``benchmarks/controls.py``: same reward rate, no relation to
  the completion);
- ``sft``: the reference: supervised fine-tuning on gold answers (``The answer is N.``).
- ``grpo_async`` (not run by default; issue 38): ``grpo`` with ``max_staleness`` = 1, its batches drawn by a
  sampler process at most one version behind. Every RL arm checks its budget before each step and counts
  each rollout batch's tokens after it (`SessionBudget`, a step hook), so K = 0 and K = 1 stop alike;
  each evaluation records the wall seconds since the arm's start, and ``OUT/accuracy_vs_wall.png`` plots
  them (``--arms grpo grpo_async``: both in one sitting, as a wall-time comparison needs).

Held-out greedy accuracy on the first ``eval_problems`` test problems is measured before training (once; all
arms start from the same model), half-way through the budget and at its end. Each (arm, seed) writes
``OUT/runs/ARM-sSEED.json`` when it ends, so a rerun skips what is done (resumable per arm and seed). The
summary compares each verifier-only arm with its control and with the start: the mean difference over
seeds with a 95% bootstrap interval (resampling seeds within each arm and problems, paired), written to
``OUT/summary.json``, with ``OUT/accuracy.png`` (held-out accuracy against sampled tokens, per arm).

``--preset chain`` (issue 39, item 2) asks whether RL after SFT beats more SFT, as DeepSeekMath reports: on
3-digit additions and subtractions with the env's own step-by-step prompt, every arm starts from SmolLM2
fine-tuned on the generator's column-by-column solutions (`warm_started`), then ``grpo`` and ``dapo`` spend the
budget against ``sft_more``, the same SFT on fresh problems for the same compute (`RL_ROW_COST_IN_SFT_ROWS`);
the summary's ``rl_vs_more_sft`` holds the two differences with their intervals.

``--gpu`` swaps in the preset for one large GPU (an 0.5B instruct model from the hub, GSM8K for training,
GSM8K and MATH-500 test for evaluation, bf16, the vLLM engine); ``--smoke STEPS`` runs only a few GRPO steps
of a preset and prints step time, tokens/s and the reward curve (what ``gpu_check.py --learning`` runs);
``--dry`` shrinks any of it to seconds on a CPU with the tiny random model, so tests keep the script working.
Any field of `Setting` is a flag too (``--budget-tokens 4000``, ``--warm-start None``: `benchmarks.harness.settings`).

A package read in run order: `setting` (arms, presets, dry pass), `evaluation`, `budget`, `arms`, `summary`,
`run` (the command).

Run (from the repository root)::

    OMP_NUM_THREADS=1 python -m benchmarks.real_learning --model PATH/TO/SmolLM2-135M-Instruct.Q4_1.gguf

Last line: one JSON object (the summary).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.real_learning.arms import rl_arm, rl_configs, run_arm  # noqa: E402
from benchmarks.real_learning.budget import ArmRun  # noqa: E402
from benchmarks.real_learning.evaluation import held_out, load, make_env  # noqa: E402
from benchmarks.real_learning.run import check_same_setting, main, smoke, warm_started  # noqa: E402
from benchmarks.real_learning.setting import (  # noqa: E402
    ARMS,
    ASYNC_ARMS,
    CHAIN_ARMS,
    GPU_ARMS,
    KIT_MODEL_ENV,
    PRESETS,
    Setting,
    dry,
    resolve_offline,
)
from benchmarks.real_learning.summary import accuracy_interval, interval, summarize  # noqa: E402

__all__ = [
    "ARMS",
    "ASYNC_ARMS",
    "ArmRun",
    "CHAIN_ARMS",
    "GPU_ARMS",
    "KIT_MODEL_ENV",
    "PRESETS",
    "Setting",
    "accuracy_interval",
    "check_same_setting",
    "dry",
    "held_out",
    "interval",
    "load",
    "main",
    "make_env",
    "resolve_offline",
    "rl_arm",
    "rl_configs",
    "run_arm",
    "smoke",
    "summarize",
    "warm_started",
]
