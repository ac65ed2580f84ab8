"""Issue 35, item 17: a judge only where the rules say no (fallback mode), on the fake server and on a real one.

The rules decide first; the judge is asked about rejections and unreadable answers only, never about an
accept; its CORRECT turns a rejection into an accept, its INCORRECT or a failure leave the rule's verdict;
its verdicts are cached, and its share of the verdicts is counted and logged.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

import reasongym
from benchmarks.harness.fake_server import Reply, chat_body, fake_server
from benchmarks.harness.openai_server import running_server, smollm2_folder, transformers_cli
from reasongym.verifiers import Outcome, verify_many
from reasongym.verifiers.judge import JudgeConfig, fallback_verdicts, judge_for

pytest.importorskip("openai", reason="the judge needs the openai package (the serve extra)")
QUESTION, GOLD = "What is 6 times 7?", "42"
ANSWERS = [
    "6 * 7 = 42, so the answer is \\boxed{42}.",  # the rules accept: never sent
    "The answer is \\boxed{41}.",  # the rules reject: sent
    "forty-two-ish, I reckon",  # the rules read no answer: sent
]


def _fallback(url: str, answers: list[str] = ANSWERS, **settings: object) -> tuple[list, JudgeConfig]:
    config = JudgeConfig(model="m", base_url=url, fallback=True, **settings)  # type: ignore[arg-type]
    rules = verify_many(answers, GOLD, "math")
    return fallback_verdicts(config, QUESTION, GOLD, answers, rules), config


def test_the_judge_is_asked_only_about_rejections_and_may_accept_them() -> None:
    replies = [Reply(body=chat_body(["CORRECT"])), Reply(body=chat_body(["INCORRECT"]))]
    with fake_server(replies) as server:
        verdicts, config = _fallback(server.base_url, max_concurrency=1)
        sent = [request["messages"][1]["content"] for request in server.requests]
    assert [v.outcome for v in verify_many(ANSWERS, GOLD, "math")] == [
        Outcome.CORRECT,
        Outcome.WRONG,
        Outcome.UNPARSEABLE,
    ]
    assert len(sent) == 2 and not any(ANSWERS[0] in prompt for prompt in sent)
    assert verdicts[0].correct is True and verdicts[0].reason == verify_many(ANSWERS[:1], GOLD)[0].reason
    assert (verdicts[1].correct, verdicts[1].outcome) == (True, Outcome.CORRECT)
    assert "the judge replied CORRECT" in verdicts[1].reason and "41" in str(verdicts[1].extracted)
    assert (verdicts[2].correct, verdicts[2].outcome) == (
        False,
        Outcome.UNPARSEABLE,
    )  # INCORRECT: as the rules said
    counts = judge_for(config).fallback
    assert (counts.graded, counts.asked, counts.accepted, counts.no_verdict) == (3, 2, 1, 0)
    assert counts.judge_share == pytest.approx(1 / 3)


def test_an_accept_is_never_sent_even_when_the_judge_would_say_no() -> None:
    with fake_server([Reply(body=chat_body(["INCORRECT"]))]) as server:
        verdicts, _ = _fallback(server.base_url, answers=[ANSWERS[0]] * 3)
        assert server.requests == []
    assert [v.correct for v in verdicts] == [True, True, True]


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=500, body={"error": {"message": "boom"}}),
        Reply(delay=2.0),
        Reply(body=chat_body(["Maybe."])),
    ],
)
def test_a_judge_that_fails_leaves_the_rules_verdict(reply: Reply) -> None:
    with fake_server([reply]) as server:
        verdicts, config = _fallback(server.base_url, answers=ANSWERS[1:2], timeout=0.5)
    assert (verdicts[0].correct, verdicts[0].outcome) == (False, Outcome.WRONG)  # never ungradable here
    assert judge_for(config).fallback.no_verdict == 1


def test_verdicts_are_cached_and_the_share_is_logged(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    cache = tmp_path / "judge.jsonl"
    with fake_server([Reply(body=chat_body(["CORRECT"]))] * 2) as server:
        with caplog.at_level(logging.INFO, logger="reasongym.verifiers.judge"):
            first, _ = _fallback(server.base_url, answers=ANSWERS[1:2], cache_path=str(cache))
            again, _ = _fallback(server.base_url, answers=ANSWERS[1:2], cache_path=str(cache))
        assert len(server.requests) == 1  # the repeat is answered from the cache
    assert first[0].correct is True and again[0].correct is True
    assert (
        "judge fallback: 2 of 2 verdicts asked about, 2 decided by the judge (100.0% of all)" in caplog.text
    )


def test_an_environment_grades_with_the_rules_first_in_fallback_mode() -> None:
    with fake_server([Reply(body=chat_body(["INCORRECT"]))] * 4) as server:
        judge = JudgeConfig(model="m", base_url=server.base_url, fallback=True)
        env = reasongym.make("reasongym/Arithmetic-v0", judge=judge).unwrapped
        env.reset(seed=0)
        right = env.step(f"\\boxed{{{env.problem.answer}}}")[4]
        env.reset(seed=0)
        wrong = env.step("\\boxed{-1}")[4]
        assert len(server.requests) == 1  # only the rejection was sent
    assert (right["correct"], wrong["correct"]) == (True, False)  # the judge's INCORRECT overturns nothing
    assert right["verifier"].endswith("+fallback/judge/v2/m") and right["verifier"].startswith("math")
    assert JudgeConfig(model="m").fallback is False  # off by default


@pytest.mark.skipif(transformers_cli() is None, reason="`transformers serve` is not installed")
def test_the_real_smollm2_is_asked_only_about_rejections_through_transformers_serve(
    smollm2_gguf: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = smollm2_folder(smollm2_gguf)
    with running_server(folder, tmp_path_factory.mktemp("logs") / "fallback.log") as server:
        config = JudgeConfig(model=server.model, base_url=server.base_url, timeout=120.0, fallback=True)
        rules = verify_many(ANSWERS, GOLD, "math")
        verdicts = fallback_verdicts(config, QUESTION, GOLD, ANSWERS, rules)
        judge = judge_for(config)
        asked = judge.requests
        again = fallback_verdicts(config, QUESTION, GOLD, ANSWERS, rules)
    assert asked == 2  # the accept was not sent
    assert verdicts[0].correct is True and again[0].correct is True
    # SmolLM2 is a weak judge: any reply may come back, but a rejection only ever becomes an accept or stays.
    assert all(v.correct in (True, False) for v in verdicts[1:])
    cached = sum(1 for key in judge.cache)
    assert judge.requests == asked + (2 - cached)  # cached verdicts are not asked again
