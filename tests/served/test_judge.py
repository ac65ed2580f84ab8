"""The ``judge`` verifier: strict parsing, the cache, failures as ungradable, bounded concurrency; a real server.

The failure modes come from the fault-injecting fake server; the path end to end from ``transformers
serve`` with SmolLM2 (a weak judge: only that a verdict comes back through the prompt and is cached).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import reasongym
from benchmarks.harness.fake_server import Reply, chat_body, fake_server
from benchmarks.harness.openai_server import running_server, smollm2_folder, transformers_cli
from reasongym.errors import ConfigError
from reasongym.verifiers import Outcome
from reasongym.verifiers.judge import JudgeConfig, JudgeVerifier, parse_judge_reply

pytest.importorskip("openai", reason="the judge needs the openai package (the serve extra)")
ITEM = ("Is a tomato a fruit?", "yes", "Botanically it is a fruit, so yes.")


def _judge(url: str, **settings: object) -> JudgeVerifier:
    return JudgeVerifier(JudgeConfig(model="m", base_url=url, **settings))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("CORRECT", True),
        (" incorrect.\n", False),
        ("Correct", True),
        ("CORRECT!", None),
        ("yes", None),
        ("The answer is CORRECT", None),
        ("", None),
        ("CORRECT INCORRECT", None),
    ],
)
def test_replies_parse_strictly(reply: str, expected: bool | None) -> None:
    assert parse_judge_reply(reply) is expected


def test_a_verdict_is_cached_by_prompt_version_question_reference_and_answer(tmp_path: Path) -> None:
    cache = tmp_path / "judge.jsonl"
    with fake_server([Reply(body=chat_body(["CORRECT"])), Reply(body=chat_body(["INCORRECT"]))]) as server:
        judge = _judge(server.base_url, cache_path=str(cache))
        first, again = judge.verify_many([ITEM, ITEM])
        other = judge.verify(ITEM[0], ITEM[1], "No.")
        assert (first.correct, again.correct, other.correct) == (True, True, False)
        assert len(server.requests) == 2 and judge.requests == 2  # the repeated item was asked once
        prompt = server.requests[0]["messages"][1]["content"]
        assert ITEM[0] in prompt and ITEM[2] in prompt and "Reference answer:\nyes" in prompt
        assert server.requests[0]["temperature"] == 0.0
        later = _judge(server.base_url, cache_path=str(cache))  # a later run reads the file
        assert later.verify(*ITEM).correct is True and len(server.requests) == 2


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        (Reply(status=500, body={"error": {"message": "boom"}}), Outcome.REFUSED),
        (Reply(status=429, body={"error": {"message": "slow down"}}), Outcome.REFUSED),
        (Reply(drop=True), Outcome.REFUSED),
        (Reply(delay=2.0), Outcome.TIMEOUT),
        (Reply(body=chat_body(["Maybe."])), Outcome.UNPARSEABLE),
    ],
)
def test_failures_are_ungradable_and_not_cached(reply: Reply, outcome: Outcome) -> None:
    with fake_server([reply, Reply(body=chat_body(["INCORRECT"]))]) as server:
        judge = _judge(server.base_url, timeout=0.5)
        verdict = judge.verify(*ITEM)
        assert (verdict.correct, verdict.outcome) == (None, outcome)
        assert verdict.score == 0.0 and judge.cache == {}
        assert judge.verify(*ITEM).correct is False  # asked again, not remembered as a failure


def test_a_batch_runs_at_most_max_concurrency_requests_at_once() -> None:
    with fake_server([Reply(body=chat_body(["CORRECT"]), delay=0.2) for _ in range(8)]) as server:
        judge = _judge(server.base_url, max_concurrency=3)
        verdicts = judge.verify_many([(f"q{i}", "yes", "yes") for i in range(8)])
    assert [v.correct for v in verdicts] == [True] * 8
    assert server.most_in_flight == 3 and len(server.requests) == 8


def test_an_environment_uses_the_judge_only_when_told(tmp_path: Path) -> None:
    with fake_server([Reply(body=chat_body(["INCORRECT"]))]) as server:
        config = JudgeConfig(model="m", base_url=server.base_url)
        env = reasongym.make("reasongym/Arithmetic-v0", judge=config).unwrapped
        env.reset(seed=0)
        gold = f"\\boxed{{{env.problem.answer}}}"
        info = env.step(gold)[4]  # the judge says no, so the (rule-correct) gold is wrong here
        assert (info["correct"], info["verifier"]) == (False, "judge/v2/m")
        plain = reasongym.make("reasongym/Arithmetic-v0").unwrapped
        plain.reset(seed=0)
        assert plain.step(gold)[4]["correct"] is True and len(server.requests) == 1
    with pytest.raises(ConfigError, match="must be a JudgeConfig"):
        reasongym.make("reasongym/Arithmetic-v0", judge="m")


def test_bad_settings_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"prompt_version 'v9' is not one of \['v1', 'v2'\]"):
        JudgeConfig(model="m", prompt_version="v9")
    with pytest.raises(ConfigError, match="max_concurrency must be an integer >= 1, got 0"):
        JudgeConfig(model="m", max_concurrency=0)


@pytest.mark.skipif(transformers_cli() is None, reason="`transformers serve` is not installed")
def test_the_real_smollm2_judges_through_transformers_serve(
    smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = smollm2_folder(smollm2_gguf)
    with running_server(folder, tmp_path_factory.mktemp("logs") / "judge.log") as server:
        judge = JudgeVerifier(JudgeConfig(model=server.model, base_url=server.base_url, timeout=120.0))
        verdicts = judge.verify_many([ITEM, ("Is 7 an even number?", "no", "Yes, 7 is even.")])
        again = judge.verify(*ITEM)
    # SmolLM2 is a weak judge: any verdict may come back, but through the strict parse, and cached.
    assert all(v.outcome in (Outcome.CORRECT, Outcome.WRONG, Outcome.UNPARSEABLE) for v in verdicts)
    if verdicts[0].correct is not None:  # a verdict is cached: the repeat sends nothing
        assert judge.requests == 2
        assert again.correct == verdicts[0].correct and again.reason == "The judge's cached verdict."
    else:  # no verdict is not cached: the repeat asks again
        assert judge.requests == 3


def test_the_trl_reward_function_grades_with_the_environments_judge(data_dir: Path) -> None:
    from reasongym.envs.export import reward_function, to_dataset

    # The judge says the opposite of the rules (gold 18), so the rewards show who graded.
    script = [Reply(body=chat_body(["INCORRECT"])), Reply(body=chat_body(["CORRECT"]))]
    with fake_server(script) as server:
        judge = JudgeConfig(model="m", base_url=server.base_url, max_concurrency=1)
        env = reasongym.make("reasongym/GSM8K-v0", judge=judge).unwrapped
        data = to_dataset(env, 1, split="test")
        columns = {k: list(data[k]) for k in ("answer", "answer_type", "split", "index", "difficulty")}
        completions = ["It is 18.", "It is 17."]
        rewards = reward_function(env)(
            list(data["prompt"]) * 2, completions, **{k: v * 2 for k, v in columns.items()}
        )
        asked = [request["messages"][1]["content"] for request in server.requests]
    assert rewards == [0.0, 1.0]  # the judge's verdicts, in order
    question = env.source.problem("test", data["index"][0]).question
    assert len(asked) == 2 and all(question in prompt for prompt in asked)
