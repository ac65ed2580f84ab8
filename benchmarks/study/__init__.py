"""The papers' claims in miniature, with error bars: a multi-seed, compute-matched study of SFT, GRPO,
Dr. GRPO, DAPO and its four techniques, a shuffled-reward control, STaR's filter and rationalization, and
the policy-gradient family around GRPO (RLOO, REINFORCE++, REINFORCE++-baseline; GSPO and CISPO with
``mu`` = 4 updates per batch, paired against GRPO with the same ``mu``, since their claims are about clipping).

Every arm starts from the same warm start per seed (the ``tiny`` preset's SFT on reference solutions of
Arithmetic-v0 level 1, a quarter of them also shown with the hint so that STaR's hinted prompts mean
something to the model, stopped once a held-out probe reaches 40%), trains until it has SAMPLED the same
number of completion tokens (``--budget-tokens``; the SFT reference instead trains on as many tokens of gold
solutions), and is scored by greedy pass@1 on the first ``--eval-problems`` test problems, at a quarter,
half, three quarters and all of the budget. Sampled tokens, not CPU-seconds, are the matched quantity: a
token budget stops every run at the same point on any machine, where a time budget would make the stop
itself depend on the machine (issue 15 item 3). CPU-seconds at one thread are recorded beside it.

    OMP_NUM_THREADS=1 python -m benchmarks.study --out study_out              # every arm (18) x 3 seeds, ~100 CPU-min
    OMP_NUM_THREADS=1 python -m benchmarks.study --out study_out --quick      # 3 arms x 3 seeds, ~18 CPU-min
    OMP_NUM_THREADS=1 python -m benchmarks.study --out family_out --family    # GRPO + 6 family arms x 3 seeds
    OMP_NUM_THREADS=1 python -m benchmarks.study --out big --seeds 0-9 --budget-tokens 600000   # a bigger machine
    OMP_NUM_THREADS=1 python -m benchmarks.study --out t07 --tempered   # issue 42: tempered vs untempered log-probs
    OMP_NUM_THREADS=1 python -m benchmarks.study --out async_out --async   # issue 38: the sampler one version ahead

Resumable per arm and seed: ``results.jsonl`` gets one line per finished (arm, seed), and a second run with
the same settings skips those (warm starts are cached in ``warm/``). Writes ``table.md`` (mean and 95%
t-interval over seeds, and each arm's paired difference to its baseline), ``diagnostics.md`` (the RL arms'
clip fractions, largest ratio and share of zero-variance groups), ``accuracy_vs_tokens.png``, and ends with
one JSON line. ``--arms`` picks arms by name (see ``ARMS``).

Wall seconds are recorded beside tokens (issue 38): each point of the curve keeps the wall seconds since the
arm's start at which its weights were reached (``wall_s``, earlier evaluations included; ``train_wall_s``
without them), and ``wall.md`` and ``accuracy_vs_wall.png`` set them out with each arm's load average at its
start and end. With ``max_staleness`` >= 1 (``grpo_async``) a sampler process draws the batches, so the
trainer's CPU-seconds leave it out: its own are ``sampler_cpu_s``. The token budget stops every RL arm the
same way whatever its K: after the step whose trained batch passes it (`TokenBudget`, a step hook).
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads

from benchmarks.study.arms import run_rl, run_sft, run_star, warm_model  # noqa: E402
from benchmarks.study.measuring import Meter, TokenBudget  # noqa: E402
from benchmarks.study.run import load_records, main, seeds_from  # noqa: E402
from benchmarks.study.setting import (  # noqa: E402
    ARMS,
    CURVE,
    DIFFICULTY,
    ENV,
    MAX_NEW_TOKENS,
    WARM_PAIRS,
    StudySetting,
    dry,
)
from benchmarks.study.summary import seed_mean_line, summarize  # noqa: E402

__all__ = [
    "ARMS",
    "CURVE",
    "DIFFICULTY",
    "ENV",
    "MAX_NEW_TOKENS",
    "Meter",
    "StudySetting",
    "TokenBudget",
    "WARM_PAIRS",
    "dry",
    "load_records",
    "main",
    "run_rl",
    "run_sft",
    "run_star",
    "seed_mean_line",
    "seeds_from",
    "summarize",
    "warm_model",
]
