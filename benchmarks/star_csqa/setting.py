"""The study's arms and comparisons, the task and its few-shot exemplars, its `Setting`, the presets (CPU,
small CPU, GPU) and its dry pass."""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.harness import settings

EVAL_ARMS = ("zero_shot_cot", "few_shot_cot")
TRAINED_ARMS = ("direct_sft", "star_no_rationalization", "star", "star_random_filter", "grpo_cot")
ARMS = EVAL_ARMS + TRAINED_ARMS
COMPARISONS = (
    ("star", "direct_sft"),
    ("star", "star_no_rationalization"),
    ("star_no_rationalization", "star_random_filter"),
    ("star", "zero_shot_cot"),
    ("grpo_cot", "zero_shot_cot"),
    ("direct_sft", "zero_shot_cot"),
)
"""The questions the table answers (arm minus baseline): the paper's claims and their controls."""
ENV_ID = "reasongym/CommonsenseQA-v0"
TRAIN_START = 12
"""Training problems start here: the few-shot exemplars (`EXEMPLARS`) are train problems 1-11."""
EXEMPLARS = {
    8: "The answer must be an item that can absorb ink. Of the above choices, only blotters are used to absorb ink.",
    5: "The answer must require cable. Of the above choices, only television requires cable.",
    4: "The answer must be something in the forest. Of the above choices, only natural habitat is in the forest.",
    1: "The answer must be a place with a lot of people. Of the above choices, only populated areas have a lot "
    "of people.",
    10: "The answer should be the place where grocery items are placed before checking out. Of the above "
    "choices, grocery cart makes the most sense for holding grocery items.",
    3: "The answer must be something that used to do what Google Maps and GPS services do, which is to give "
    "directions. Of the above choices, only atlases are used to give directions.",
    11: "The answer should be the feeling of someone getting divorced who was doing all the work. Of the above "
    "choices, the closest feeling is bitterness.",
}
"""The CommonsenseQA exemplars of Wei et al. (2022, chain-of-thought prompting, appendix), in their order: train
index -> rationale; the final sentence is added in the environment's format, with the letter of this copy's option
order (their copies list the options in another order, some with four options)."""


@dataclass(frozen=True)
class Setting:
    """One study's model and sizes; `PRESETS` names the CPU one and the GPU one."""

    model: str
    """A .gguf file, a model folder or a hub id."""
    budget_tokens: int
    """Sampled completion tokens per trained arm."""
    eval_problems: int = 400
    """Held-out problems: the first ones of the validation split."""
    max_new_tokens: int = 160
    """Longest completion (rationale and answer), in training and evaluation."""
    temperature: float = 0.7
    """Sampling temperature of GRPO's rollouts (evaluation is greedy)."""
    star_temperature: float = 0.0
    """Temperature of STaR's rationales (paper, Sec. 3: greedy; hotter gave more right answers from wrong reasoning)."""
    star_samples: int = 1
    """Rationales sampled per training problem and STaR iteration (paper: one)."""
    star_iterations: int = 4
    """STaR iterations the budget is sized for (each covers ``budget_tokens / star_iterations`` tokens of
    problems), and the most a STaR arm runs: once SmolLM2's fine-tuned rationales shrink to a bare letter an
    iteration samples about a fifth of its share, and without this cap an arm would run on for ever more, ever
    longer fine-tunes of the same kept set (seen: the same 16 kept from iteration 3 to 7)."""
    star_sft_steps: int = 40
    """Fine-tuning steps of STaR's first iteration (paper: 40 of batch 8, growing 20% an iteration)."""
    mean_completion_tokens: int = 50
    """Expected tokens of one rationale, to size STaR's training problems per iteration (pilot: 47 for SmolLM2's
    own greedy rationales, 124 for its hinted ones)."""
    budget_chunk: int = 8
    """Prompts per sampling call of STaR: the budget is checked before each, so the most an arm overruns."""
    num_prompts: int = 8
    """Prompts per GRPO step."""
    group_size: int = 8
    """Samples per prompt of GRPO."""
    lr: float = 1e-5
    """Learning rate of every trained arm (full fine-tuning)."""
    generation_batch: int = 16
    """Rows decoded together by the in-process sampler (held-out and training)."""
    autocast: str = "off"
    """Mixed precision of the updates (``bf16`` on a GPU)."""
    engine: str = "hf"
    """Sampler of STaR's rationales and GRPO's rollouts: ``hf``, ``vllm`` or ``auto`` (decided before any run:
    `real_learning.resolve_offline`)."""
    sampler_weights: str = "policy"
    """What our sampler decodes GRPO's rollouts with (`RolloutConfig.sampler_weights`): ``bf16`` on a GPU."""
    env_id: str = ENV_ID
    """The environment (what `real_learning.rl_arm` reads, with the next three fields)."""
    instruction: str | None = None
    """Answer-format instruction (None: the environment's own, which asks for a chain of thought)."""
    difficulty: int | None = None
    """Unused by CommonsenseQA (no levels)."""
    tempered_logprobs: bool = True
    """GRPO's log-probs at the sampling temperature."""
    halfway_eval: bool = True
    """Also evaluate each trained arm halfway through its budget (a middle point on the plot's curves; on the
    CPU a held-out pass costs about as much as 20 fine-tuning steps)."""


PRESETS = {
    "cpu": Setting(model="", budget_tokens=60_000),
    # What one 3-hour session on 2 cores can run: a third of the budget, 300 held-out problems (about +-5
    # points below accuracy 0.3), half of STaR's fine-tuning steps, no halfway evaluation (~3 CPU-hours a seed).
    "cpu-small": Setting(
        model="", budget_tokens=20_000, eval_problems=300, star_sft_steps=20, halfway_eval=False
    ),
    # One GPU window, offline (README "Running a GPU window"): SmolLM2-135M-Instruct from the device kit (--model,
    # or $REASONGYM_KIT_MODEL), 256 new tokens, lr 1e-5 (the CPU preset's), our sampler unless vLLM is there
    # (decided before any evaluation), the bf16 sampler copy; a budget of about 3 GPU-minutes an arm.
    "gpu": Setting(
        model="",
        budget_tokens=200_000,
        max_new_tokens=256,
        mean_completion_tokens=60,
        star_iterations=3,
        budget_chunk=64,
        num_prompts=16,
        lr=1e-5,
        generation_batch=128,
        autocast="bf16",
        engine="auto",
        sampler_weights="bf16",
    ),
}


def dry(setting: Setting) -> Setting:
    """``setting`` shrunk to seconds on a CPU: the tiny random model, a few short samples, our sampler."""
    return settings.dry(
        setting,
        dict(
            model="tiny",
            budget_tokens=48,
            eval_problems=4,
            max_new_tokens=8,
            mean_completion_tokens=4,
            star_iterations=2,
            star_sft_steps=2,
            budget_chunk=2,
            num_prompts=2,
            group_size=2,
            autocast="off",
            engine="hf",
            sampler_weights="policy",
        ),
    )
