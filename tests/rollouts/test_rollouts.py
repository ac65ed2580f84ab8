"""collect_rollouts and RolloutBatch on the tiny model: layout, masks, log-probs, rewards, multi-turn."""

from __future__ import annotations

import math
import re
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import pytest
import torch

import reasongym
from reasongym.agents.common import token_logprobs
from reasongym.envs.core import TextSpace, format_final_answer
from reasongym.errors import ConfigError
from reasongym.generation import Completion, HFGenerator, SamplingParams
from reasongym.policy.loading import format_prompt
from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model
from reasongym.rollouts.batch import TURN_CAP_OUTCOME, RolloutBatch, collect_rollouts
from reasongym.rollouts.env_pool import EnvPool, step_all
from reasongym.rollouts.env_pool import episode_envs as _episode_envs
from reasongym.rollouts.metrics import batch_rows, rollout_metrics
from tests.conftest import TINY_SHAPE

torch.set_num_threads(1)

ENV_ID = "reasongym/Arithmetic-v0"
INDICES = [0, 1, 2]
G = 3
MAX_NEW = 12


@pytest.fixture(scope="module")
def tokenizer():
    return make_char_tokenizer()


@pytest.fixture(scope="module")
def model(tokenizer):
    return make_tiny_model(tokenizer, **TINY_SHAPE)


@pytest.fixture(scope="module")
def sampled(model, tokenizer) -> RolloutBatch:
    """One rollout of the random tiny model, shared by the tests that only read it."""
    params = SamplingParams(max_new_tokens=MAX_NEW, seed=0, n=G)
    generator = HFGenerator(model, tokenizer)
    return collect_rollouts(ENV_ID, generator, tokenizer, INDICES, params=params, difficulty=1)


class ScriptedGenerator:
    """A `Generator` without ``generate_batch``: ``script(prompt, sample)`` gives each completion's text.

    With ``logprob`` set, completions carry their token ids and that log-prob per token; otherwise only
    text (the rollout then tokenizes it). Every call's params are recorded.
    """

    def __init__(self, tokenizer: Any, script: Callable[[str, int], str], logprob: float | None = None):
        self.tokenizer, self.script, self.logprob = tokenizer, script, logprob
        self.calls: list[SamplingParams] = []

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        self.calls.append(params)
        return [[self._completion(self.script(p, k)) for k in range(params.n)] for p in prompts]

    def _completion(self, text: str) -> Completion:
        if self.logprob is None:
            return Completion(text, None, None, "stop")
        ids = tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])
        return Completion(text, ids, (self.logprob,) * len(ids), "stop")


def _gold_texts(tokenizer: Any, env: gymnasium.Env, indices: Sequence[int]) -> dict[str, str]:
    """Formatted prompt -> a completion stating the gold answer as the prompt asks."""
    base = env.unwrapped
    golds = {}
    for index in indices:
        problem = base.problem_at(index, split="train", difficulty=1)
        prompt = format_prompt(tokenizer, base.messages(problem))
        golds[prompt] = f"Adding up. {format_final_answer(problem.answer_type, problem.answer)}"
    return golds


def _real_tokens(batch: RolloutBatch, row: int) -> tuple[list[int], list[int], list[int], list[float]]:
    """A row's prompt tokens, completion tokens, completion mask and old log-probs, padding removed."""
    start = batch.completion_start
    prompt = batch.input_ids[row, :start][batch.attention_mask[row, :start].bool()].tolist()
    used = batch.attention_mask[row, start:].bool()
    completion = batch.completion_ids[row][used].tolist()
    return prompt, completion, batch.completion_mask[row][used].tolist(), batch.old_logp[row][used].tolist()


def test_group_layout_and_shapes(sampled: RolloutBatch) -> None:
    rows = len(INDICES) * G
    width = sampled.input_ids.shape[1]
    start = sampled.completion_start
    assert len(sampled) == rows and sampled.num_groups == len(INDICES) and sampled.group_size == G
    assert sampled.attention_mask.shape == (rows, width)
    for name in ("completion_ids", "completion_mask", "old_logp"):
        assert getattr(sampled, name).shape == (rows, width - start)
    for name in ("rewards", "correct", "gradable", "truncated", "lengths", "turns"):
        assert getattr(sampled, name).shape == (rows,)
    assert torch.equal(sampled.input_ids[:, start:], sampled.completion_ids)
    for name in ("texts", "prompts", "problem_ids", "outcomes", "extracted"):
        assert len(getattr(sampled, name)) == rows
    for row in range(rows):
        assert sampled.problem_ids[row] == sampled.problem_ids[row - row % G]
        assert sampled.prompts[row] == sampled.prompts[row - row % G]
    assert len(set(sampled.problem_ids)) == len(INDICES)
    assert sampled.turns.tolist() == [1] * rows


def test_masks_and_tokens_match_a_direct_generation(sampled, model, tokenizer) -> None:
    params = SamplingParams(max_new_tokens=MAX_NEW, seed=0, n=G)
    direct = HFGenerator(model, tokenizer).generate_batch(sampled.prompts[::G], params)
    assert torch.equal(sampled.input_ids, direct.input_ids)
    assert torch.equal(sampled.attention_mask, direct.attention_mask)
    assert torch.equal(sampled.completion_mask, direct.completion_mask)
    assert torch.equal(sampled.lengths, direct.completion_mask.sum(dim=1))
    assert sampled.texts == list(direct.texts)
    assert sampled.truncated.tolist() == [reason == "length" for reason in direct.finish_reasons]


def test_old_logp_equals_a_separate_forward_pass(sampled, model) -> None:
    with torch.no_grad():
        logp, _ = token_logprobs(model, sampled.input_ids, sampled.attention_mask, sampled.completion_start)
    mask = sampled.completion_mask.bool()
    torch.testing.assert_close(sampled.old_logp[mask], logp[mask], atol=1e-4, rtol=0)
    assert torch.all(sampled.old_logp[~mask] == 0)


def test_rewards_equal_stepping_the_env(sampled) -> None:
    env = reasongym.make(ENV_ID)
    for row in range(len(sampled)):
        env.reset(options={"index": INDICES[row // G], "split": "train", "difficulty": 1})
        _, reward, terminated, _, info = env.step(sampled.texts[row])
        assert terminated
        assert sampled.rewards[row].item() == reward
        assert sampled.correct[row].item() == bool(info["correct"])
        assert (sampled.outcomes[row], sampled.extracted[row]) == (info["outcome"], info["extracted"])


def test_gold_completion_gets_reward_one(tokenizer) -> None:
    env = reasongym.make(ENV_ID)
    golds = _gold_texts(tokenizer, env, INDICES)
    generator = ScriptedGenerator(tokenizer, lambda prompt, k: golds[prompt] if k == 0 else "No idea.", -0.5)
    batch = collect_rollouts(
        env, generator, tokenizer, INDICES, params=SamplingParams(seed=3, n=2), difficulty=1
    )
    assert batch.rewards.tolist() == [1.0, 0.0] * len(INDICES)
    assert batch.correct.tolist() == [True, False] * len(INDICES)
    assert batch.outcomes[::2] == ["correct"] * len(INDICES)
    assert batch.gradable.all() and not batch.truncated.any()
    assert [params.n for params in generator.calls] == [2]  # one call, G samples per prompt
    for row, text in enumerate(batch.texts):
        prompt, completion, mask, logp = _real_tokens(batch, row)
        assert prompt == tokenizer(batch.prompts[row], add_special_tokens=False)["input_ids"]
        assert completion == tokenizer(text, add_special_tokens=False)["input_ids"]
        assert mask == [1] * len(completion) and logp == [-0.5] * len(completion)


def test_a_pool_reuses_its_env_copies_from_batch_to_batch(tokenizer) -> None:
    env = reasongym.make(ENV_ID)
    pool = EnvPool(env)
    golds = _gold_texts(tokenizer, env, range(4))
    generator = ScriptedGenerator(tokenizer, lambda prompt, k: golds[prompt] if k == 0 else "No idea.", -0.5)
    seen = []
    for indices in ([0, 1], [2, 3], [1]):  # the last batch is narrower than the pool
        batch = collect_rollouts(
            env, generator, tokenizer, indices, params=SamplingParams(n=2), difficulty=1, pool=pool
        )
        assert batch.rewards.tolist() == [1.0, 0.0] * len(
            indices
        )  # each copy was reset onto its row's problem
        seen.append([id(copy) for copy in pool.copies])
    assert seen[0] == seen[1] == seen[2] and len(seen[0]) == 4  # made once, never closed in between
    copies = list(pool.copies)
    pool.close()
    assert pool.copies == [] and all(copy.unwrapped._problem is not None for copy in copies)


def test_wrappers_and_shaping_apply_as_in_step(tokenizer) -> None:
    def make_env() -> gymnasium.Env:
        env = reasongym.make(ENV_ID, difficulty=1, format_reward=0.25, length_budget=20, length_penalty=0.5)
        return gymnasium.wrappers.TransformReward(env, lambda reward: 2 * reward - 1)

    golds = _gold_texts(tokenizer, make_env(), INDICES)
    texts = ["\\boxed{7}", "no answer at all", "The final answer is 10 maybe"]
    generator = ScriptedGenerator(tokenizer, lambda prompt, k: golds[prompt] if k == 3 else texts[k])
    batch = collect_rollouts(make_env(), generator, tokenizer, INDICES, params=SamplingParams(n=4))
    reference = make_env()
    for row in range(len(batch)):
        reference.reset(options={"index": INDICES[row // 4], "split": "train"})
        assert batch.rewards[row].item() == pytest.approx(reference.step(batch.texts[row])[1])
    assert len(set(batch.rewards.tolist())) >= 3  # shaping and the wrapper made the rewards differ
    assert not batch.old_logp_known  # text-only completions carry no sampler log-probs: a trainer recomputes
    eos = tokenizer.eos_token_id
    assert all(
        batch.completion_ids[row][batch.completion_mask[row].bool()][-1] == eos for row in range(len(batch))
    )


class CountingToolEnv(gymnasium.Env):
    """A multi-turn env: the first ``tool_turns`` steps answer with a tool result, the next one is graded.

    The prompt asks for ``index + 1``; the final turn is correct when it contains that number.
    """

    stop_strings = ("</calc>",)
    RESULT = "\n<result>ok</result>\n"

    def __init__(self, tool_turns: int = 2) -> None:
        self.observation_space, self.action_space = TextSpace(10_000), TextSpace(10_000)
        self.tool_turns, self.turn, self.index = tool_turns, 0, 0
        self.seen: list[str] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.index, self.turn, self.seen = int((options or {})["index"]), 0, []
        prompt = f"Question {self.index}: what is {self.index} + 1?"
        return prompt, {"problem_id": f"q{self.index}", "messages": [{"role": "user", "content": prompt}]}

    def step(self, action: str):
        self.seen.append(action)
        self.turn += 1
        if self.turn <= self.tool_turns:
            return self.RESULT, 0.25, False, False, {"problem_id": f"q{self.index}"}
        correct = str(self.index + 1) in action
        info = {"correct": correct, "outcome": "correct" if correct else "wrong", "extracted": action[-3:]}
        return "", float(correct), True, False, info


def _observation_spans(batch: RolloutBatch, row: int, tokenizer: Any) -> list[str]:
    """Decoded runs of consecutive mask-0 tokens inside a row's completion."""
    _, completion, mask, _ = _real_tokens(batch, row)
    spans, current = [], []
    for token, is_model in zip(completion, mask, strict=True):
        if is_model:
            if current:
                spans.append(tokenizer.decode(current))
            current = []
        else:
            current.append(token)
    return spans + ([tokenizer.decode(current)] if current else [])


def test_multi_turn_masks_observations_and_keeps_old_logp(model, tokenizer) -> None:
    generator = HFGenerator(model, tokenizer)
    params = SamplingParams(max_new_tokens=5, seed=1, n=2)
    batch = collect_rollouts(CountingToolEnv(), generator, tokenizer, [4, 7], params=params)
    assert batch.turns.tolist() == [3] * 4
    for row in range(len(batch)):
        assert _observation_spans(batch, row, tokenizer) == [CountingToolEnv.RESULT] * 2
        assert batch.texts[row].count(CountingToolEnv.RESULT) == 2
    observation_tokens = len(tokenizer(CountingToolEnv.RESULT)["input_ids"]) * 2
    used = batch.attention_mask[:, batch.completion_start :].sum(dim=1)
    assert torch.equal(used - batch.lengths, torch.full_like(used, observation_tokens))
    assert torch.equal(batch.lengths, batch.completion_mask.sum(dim=1))
    with torch.no_grad():
        logp, _ = token_logprobs(model, batch.input_ids, batch.attention_mask, batch.completion_start)
    mask = batch.completion_mask.bool()
    torch.testing.assert_close(batch.old_logp[mask], logp[mask], atol=1e-4, rtol=0)
    assert torch.all(batch.old_logp[~mask] == 0)


def _tool_script(context: str, sample: int) -> str:
    """Call the tool until a result is in the context, then answer index + 1."""
    if "<result>" not in context:
        return "Let me check <calc>1+1</calc>"
    index = int(context.split("Question ")[1].split(":")[0])
    return f"So it is {index + 1}."


def test_multi_turn_scripted_episode(tokenizer) -> None:
    env = CountingToolEnv(tool_turns=1)
    generator = ScriptedGenerator(tokenizer, _tool_script, -1.0)
    batch = collect_rollouts(env, generator, tokenizer, [5], params=SamplingParams(stop=("END",)))
    assert batch.texts == ["Let me check <calc>1+1</calc>" + CountingToolEnv.RESULT + "So it is 6."]
    assert batch.rewards.tolist() == [1.25] and batch.correct.tolist() == [True]
    assert batch.turns.tolist() == [2] and not batch.truncated.any()
    assert all(params.stop == ("END", "</calc>") for params in generator.calls)
    assert _observation_spans(batch, 0, tokenizer) == [CountingToolEnv.RESULT]
    assert env.seen == []  # the env given is copied per episode, never stepped itself


def test_turn_cap_and_length_truncation(model, tokenizer) -> None:
    generator = ScriptedGenerator(tokenizer, lambda prompt, k: "thinking", -1.0)
    batch = collect_rollouts(
        CountingToolEnv(tool_turns=3),
        generator,
        tokenizer,
        [1],
        params=SamplingParams(n=2),
        max_turns=2,
    )
    assert batch.truncated.tolist() == [True, True] and batch.turns.tolist() == [2, 2]
    assert batch.outcomes == [TURN_CAP_OUTCOME] * 2 and not batch.correct.any() and batch.gradable.all()
    assert batch.rewards.tolist() == [0.5, 0.5]  # the two tool steps' rewards, summed
    short = collect_rollouts(
        ENV_ID,
        HFGenerator(model, tokenizer),
        tokenizer,
        [0],
        params=SamplingParams(max_new_tokens=2, seed=0, n=4),
    )
    assert torch.equal(short.truncated, short.lengths == 2)
    assert short.truncated.any()


def test_tool_env_of_the_library(tokenizer) -> None:
    multiturn = pytest.importorskip("reasongym.envs.multiturn")
    env = multiturn.make_tool_env(ENV_ID, difficulty=1, max_turns=3)
    golds = {}
    for index in (0, 1):
        problem = env.problem_at(index, split="train")
        golds[format_prompt(tokenizer, env.messages(problem))] = format_final_answer("math", problem.answer)

    def script(context: str, sample: int) -> str:
        prompt = next(p for p in golds if context.startswith(p))
        return "<calc>2*3</calc>" if context == prompt else golds[prompt]

    generator = ScriptedGenerator(tokenizer, script, -1.0)
    batch = collect_rollouts(env, generator, tokenizer, [0, 1], params=SamplingParams(n=2))
    assert batch.rewards.tolist() == [1.0] * 4 and batch.turns.tolist() == [2] * 4
    assert all("</calc>" in params.stop for params in generator.calls)
    assert _observation_spans(batch, 0, tokenizer) == ["\n<result>6</result>\n"]


def _rows(batch: RolloutBatch) -> list[tuple[Any, ...]]:
    per_row = [_real_tokens(batch, row) for row in range(len(batch))]
    lists = zip(batch.texts, batch.prompts, batch.problem_ids, batch.outcomes, batch.extracted, strict=True)
    scalars = zip(batch.rewards.tolist(), batch.correct.tolist(), batch.lengths.tolist(), strict=True)
    return [
        (*tokens, *listed, *values) for tokens, listed, values in zip(per_row, lists, scalars, strict=True)
    ]


def test_select_groups_and_concat_round_trip(sampled, model, tokenizer) -> None:
    selected = sampled.select_groups(torch.tensor([True, False, True]))
    assert _rows(selected) == [row for i, row in enumerate(_rows(sampled)) if i // G != 1]
    singles = [sampled.select_groups(torch.arange(3) == g) for g in range(3)]
    rebuilt = RolloutBatch.concat(singles)
    for name in ("input_ids", "attention_mask", "completion_ids", "completion_mask", "old_logp", "rewards"):
        assert torch.equal(getattr(rebuilt, name), getattr(sampled, name)), name
    assert rebuilt.completion_start == sampled.completion_start and rebuilt.texts == sampled.texts
    params = SamplingParams(max_new_tokens=4, seed=5, n=G)
    other = collect_rollouts(ENV_ID, HFGenerator(model, tokenizer), tokenizer, [9], params=params)
    empty = sampled.select_groups(torch.zeros(3, dtype=torch.bool))
    mixed = RolloutBatch.concat([other, empty, sampled])
    assert len(empty) == 0 and _rows(mixed) == _rows(other) + _rows(sampled)
    with torch.no_grad():
        logp, _ = token_logprobs(model, mixed.input_ids, mixed.attention_mask, mixed.completion_start)
    mask = mixed.completion_mask.bool()
    torch.testing.assert_close(mixed.old_logp[mask], logp[mask], atol=1e-4, rtol=0)


def _metrics(batch: RolloutBatch) -> dict[str, float]:
    return rollout_metrics(batch_rows([batch]), batch.group_size)


def _hand_batch(rewards, correct, gradable, truncated, lengths, group_size=2) -> RolloutBatch:
    rows, width = len(rewards), max(lengths)
    mask = (torch.arange(width)[None, :] < torch.tensor(lengths)[:, None]).long()
    return RolloutBatch(
        input_ids=torch.cat([torch.ones(rows, 1, dtype=torch.long), mask], dim=1),
        attention_mask=torch.cat([torch.ones(rows, 1, dtype=torch.long), mask], dim=1),
        completion_start=1,
        completion_ids=mask.clone(),
        completion_mask=mask,
        old_logp=torch.zeros(rows, width),
        rewards=torch.tensor(rewards, dtype=torch.float32),
        correct=torch.tensor(correct),
        gradable=torch.tensor(gradable),
        truncated=torch.tensor(truncated),
        lengths=torch.tensor(lengths),
        group_size=group_size,
        texts=[""] * rows,
        prompts=[""] * rows,
        problem_ids=[str(i // group_size) for i in range(rows)],
        outcomes=[""] * rows,
        extracted=[None] * rows,
    )


def test_metrics_by_hand() -> None:
    rewards, lengths = [1.0, 0.0, 0.5, 0.5 + 1e-8], [3, 5, 2, 4]
    correct, gradable = [True, False, False, False], [True, True, True, False]
    metrics = _metrics(_hand_batch(rewards, correct, gradable, [False, True, False, False], lengths))
    expected = {
        "reward_mean": statistics.fmean(rewards),
        "reward_std": statistics.pstdev(rewards),
        "correct_rate": 1 / 4,
        "len_mean": statistics.fmean(lengths),
        "len_max": 5,
        "truncation_rate": 1 / 4,
        "zero_std_group_frac": 1 / 2,  # group 2's rewards differ by 1e-8 only
        "all_correct_group_frac": 0.0,  # group 1 has one right of two
        "all_wrong_group_frac": 1 / 2,  # group 2: none right (one wrong, one ungradable)
        "len_correct_mean": 3,
        "len_wrong_mean": statistics.fmean([5, 2]),  # gradable and not correct
        "ungradable_frac": 1 / 4,
    }
    assert set(metrics) == {f"rollout/{name}" for name in expected}
    for name, value in expected.items():
        assert metrics[f"rollout/{name}"] == pytest.approx(value, abs=1e-6), name
    none_correct = _metrics(_hand_batch([0.0, 0.0], [False, False], [True, True], [False, False], [1, 2]))
    assert math.isnan(none_correct["rollout/len_correct_mean"])


def test_to_moves_every_tensor(sampled) -> None:
    moved = sampled.to("cpu")
    assert moved is not sampled and torch.equal(moved.input_ids, sampled.input_ids)
    assert moved.texts == sampled.texts and moved.turns is not None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"indices": []}, "indices=[]"),
        ({"max_turns": 0}, "max_turns=0"),
        ({"params": {"max_new_tokens": 4}}, "SamplingParams"),
    ],
)
def test_bad_arguments_are_named(tokenizer, kwargs, message) -> None:
    arguments = {"indices": [0], "params": SamplingParams(n=2), **kwargs}
    generator = ScriptedGenerator(tokenizer, lambda prompt, k: "x")
    with pytest.raises(ConfigError, match=re.escape(message)):
        collect_rollouts(ENV_ID, generator, tokenizer, **arguments)


def test_batch_operations_reject_bad_input(sampled) -> None:
    with pytest.raises(ConfigError, match=r"shape \(3,\)"):
        sampled.select_groups(torch.tensor([True, False]))
    with pytest.raises(ConfigError, match="group_size"):
        RolloutBatch.concat([sampled, _hand_batch([0.0], [False], [True], [False], [1], group_size=1)])
    with pytest.raises(ConfigError, match="at least one"):
        RolloutBatch.concat([])


class SleepyEnv(gymnasium.Env):
    observation_space = action_space = TextSpace(100)

    def step(self, action: str):
        time.sleep(0.2)
        return "", len(action), True, False, {}


def test_step_all_overlaps_slow_steps() -> None:
    envs = [SleepyEnv() for _ in range(4)]
    started = time.perf_counter()
    results = step_all(envs, ["a", "bb", "ccc", "dddd"], threads=4)
    assert time.perf_counter() - started < 0.6  # 4 x 0.2 s in order
    assert [result[1] for result in results] == [1, 2, 3, 4]
    with pytest.raises(ConfigError, match="twice"):
        step_all([envs[0], envs[0]], ["a", "b"])


def test_step_all_keeps_cheap_steps_on_one_thread() -> None:
    class NamedEnv(SleepyEnv):
        def step(self, action: str):
            return "", len(action), True, False, {"thread": threading.current_thread().name}

    results = step_all([NamedEnv() for _ in range(16)], ["x" * n for n in range(16)], threads=4)
    assert [result[1] for result in results] == list(range(16))
    assert len({result[4]["thread"] for result in results}) == 1


def test_episode_envs_are_independent_and_share_the_source() -> None:
    env = reasongym.make(ENV_ID)
    env.unwrapped.marker = lambda: "not picklable"  # forces the deep-copy fallback
    for original in (reasongym.make(ENV_ID), env):
        copies = _episode_envs(original, 3)
        assert len({id(copy.unwrapped) for copy in copies}) == 3
        assert all(copy.unwrapped.source is original.unwrapped.source for copy in copies)
        assert all(copy.unwrapped is not original.unwrapped for copy in copies)


class TextOnly:
    """Wraps a generator and hands back only each completion's text and finish reason (a served model)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        groups = self.inner.generate(prompts, params)
        return [[Completion(c.text, None, None, c.finish_reason) for c in group] for group in groups]


def test_a_text_only_generator_gives_the_same_grpo_loss_and_gradient(model, tokenizer) -> None:
    """The sampling contract: without sampler log-probs the trainer recomputes them, never uses zeros."""
    import functools

    from reasongym.agents.grpo import GRPOConfig, grpo_loss
    from reasongym.agents.runtime.update import BatchTotals, accumulate_gradients, recompute_old_logp

    params = SamplingParams(max_new_tokens=16, temperature=1.0, seed=7)
    indices = list(range(12))
    full = collect_rollouts(ENV_ID, HFGenerator(model, tokenizer), tokenizer, indices, params=params)
    text = collect_rollouts(
        ENV_ID, TextOnly(HFGenerator(model, tokenizer)), tokenizer, indices, params=params
    )
    assert full.old_logp_known and not text.old_logp_known
    # An untrained model also samples special tokens, which no text can carry: compare the rows whose
    # text gives back the sampled tokens (the reconstruction of everything else, EOS included, is exact).
    same = [torch.equal(a, b) for a, b in zip(full.input_ids, text.input_ids, strict=True)]
    assert sum(same) >= 3, same
    full, text = full.select_groups(same), recompute_old_logp(model, text.select_groups(same))
    assert torch.equal(text.completion_mask, full.completion_mask)
    torch.testing.assert_close(text.old_logp, full.old_logp, atol=1e-4, rtol=0)
    adv = torch.linspace(-1.0, 1.0, len(full))
    loss = functools.partial(grpo_loss, cfg=GRPOConfig(kl="off"))
    grads, values = [], []
    for batch in (full, text):
        model.zero_grad()
        totals = BatchTotals(len(batch), float(batch.completion_mask.sum()), 16)
        metrics = accumulate_gradients(model, batch, adv, loss, totals, mask=batch.completion_mask)
        values.append(metrics["loss/total"])
        grads.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    model.zero_grad()
    assert values[1] == pytest.approx(values[0], abs=1e-5)
    torch.testing.assert_close(grads[1], grads[0], rtol=1e-3, atol=1e-6)
