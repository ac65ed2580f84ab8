"""evaluate and grade_completions: records, resume, maj@k through the runner, stored completions."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from reasongym.errors import ConfigError
from reasongym.evaluation import evaluate, grade_completions, load_records
from reasongym.generation import Completion, SamplingParams

ENV = "reasongym/Arithmetic-v0"


class ScriptedGenerator:
    """A Generator that answers from a fixed script per prompt and records every call."""

    def __init__(
        self, answers_for: dict[str, list[str]] | None = None, default: Sequence[str] = ("7",)
    ) -> None:
        self.answers_for = answers_for or {}
        self.default = list(default)
        self.calls: list[list[str]] = []

    def generate(self, prompts: Sequence[str], params: SamplingParams) -> list[list[Completion]]:
        self.calls.append(list(prompts))
        out = []
        for prompt in prompts:
            question = prompt.splitlines()[0]
            answers = self.answers_for.get(question, self.default)
            texts = [f"The final answer is \\boxed{{{answers[i % len(answers)]}}}." for i in range(params.n)]
            out.append([Completion(text, (1,), (0.0,), "stop") for text in texts])
        return out


def _arith_questions(count: int) -> list[tuple[str, str]]:
    import reasongym

    env = reasongym.make(ENV).unwrapped
    problems = [env.problem_at(i, split="test", difficulty=1) for i in range(count)]
    return [(p.question, p.answer) for p in problems]


def test_records_hold_every_field_and_metrics_match_the_script(tmp_path: Path, quiet_eval) -> None:
    questions = _arith_questions(4)
    # problem 0: 2 of 4 samples right; problem 1: all right; others: all wrong
    script = {questions[0][0]: [questions[0][1], "1"], questions[1][0]: [questions[1][1]]}
    out = tmp_path / "eval.jsonl"
    report = quiet_eval(
        ScriptedGenerator(script),
        n=4,
        num_problems=4,
        out_path=out,
    )
    records = load_records(out)
    assert [r["index"] for r in records] == [0, 1, 2, 3]
    first = records[0]
    for key in ("id", "gold", "kind", "completions", "extracted", "outcomes", "correct", "difficulty"):
        assert key in first
    assert first["correct"] == [True, False, True, False]
    assert first["extracted"][1] == "1"
    assert report.metrics["avg@4"] == pytest.approx((0.5 + 1.0) / 4)
    assert report.metrics["pass@1"] == pytest.approx((0.5 + 1.0) / 4)
    assert report.metrics["pass@4"] == pytest.approx(2 / 4)
    assert report.breakdown["difficulty"]["1"]["count"] == 4


def test_resume_skips_finished_problems_and_drops_a_cut_off_line(tmp_path: Path, quiet_eval) -> None:
    out = tmp_path / "eval.jsonl"
    full = quiet_eval(
        ScriptedGenerator(),
        n=2,
        num_problems=5,
        batch_size=1,
        out_path=out,
    )
    lines = out.read_text(encoding="utf-8").splitlines()
    # a crash after 2 finished problems, halfway through writing the third line
    out.write_text("\n".join(lines[:2]) + "\n" + lines[2][:25], encoding="utf-8")
    generator = ScriptedGenerator()
    resumed = quiet_eval(
        generator,
        n=2,
        num_problems=5,
        batch_size=1,
        out_path=out,
    )
    assert len(generator.calls) == 3  # problems 2, 3 and 4 only
    assert [r["index"] for r in load_records(out)] == [0, 1, 2, 3, 4]
    assert resumed.metrics == full.metrics


def test_resume_refuses_a_file_of_another_evaluation(tmp_path: Path, quiet_eval) -> None:
    out = tmp_path / "eval.jsonl"
    quiet_eval(
        ScriptedGenerator(),
        n=2,
        num_problems=2,
        out_path=out,
    )
    with pytest.raises(ConfigError, match="another evaluation"):
        quiet_eval(
            ScriptedGenerator(),
            n=4,
            num_problems=2,
            out_path=out,
        )
    # resume=False overwrites instead
    report = quiet_eval(
        ScriptedGenerator(),
        n=4,
        num_problems=2,
        out_path=out,
        resume=False,
    )
    assert report.n == 4


def test_equivalent_answers_vote_together_in_maj_at_k(tmp_path: Path) -> None:
    # gold 1/2: "0.5" and "\frac{1}{2}" are one candidate, so together they outvote "3"
    rows = [
        {
            "gold": "1/2",
            "kind": "math",
            "completions": [
                "\\boxed{3}",
                "\\boxed{0.5}",
                "\\boxed{\\frac{1}{2}}",
                "\\boxed{3}",
                "\\boxed{2/4}",
            ],
        },
        # integer kind: exact canonical equality; "7" wins 2-1 although it is wrong
        {"gold": "5", "kind": "integer", "completions": ["7", "5", "7"]},
    ]
    path = tmp_path / "stored.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    report = grade_completions(path, ks=[1, 3], progress=False, verbose=False)
    # problem 0: 3 right (0.5, 1/2, 2/4 vote together), "3" twice. Of the 10 triples, 1 holds 3 right and 6 hold
    # 2 right (they win), 3 hold 1 right and both "3" (lost): 7/10. Problem 1: its one triple, "7" 2-1: 0.
    assert report.metrics["maj@3"] == pytest.approx((0.7 + 0.0) / 2)
    # maj@1 is one sample's vote, averaged over all of them: pass@1 (3/5 and 1/3)
    assert (
        report.metrics["maj@1"] == pytest.approx(report.metrics["pass@1"]) == pytest.approx((0.6 + 1 / 3) / 2)
    )


def test_grade_completions_by_index_and_by_id_with_an_env(tmp_path: Path) -> None:
    questions = _arith_questions(2)
    rows = [
        {"index": 0, "completions": [f"\\boxed{{{questions[0][1]}}}", "\\boxed{0}"]},
        {"index": 1, "completion": "no answer here"},
    ]
    path = tmp_path / "stored.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "graded.jsonl"
    report = grade_completions(
        path, ENV, split="test", env_kwargs={"difficulty": 1}, out_path=out, progress=False, verbose=False
    )
    graded = load_records(out)
    assert graded[0]["correct"] == [True, False]
    assert graded[1]["outcomes"] == ["unparseable"]
    assert report.n == 1 and report.metrics["pass@1"] == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"completions": ["x"]}, "needs 'gold'"),
        ({"gold": "1"}, "needs 'completions'"),
        ({"gold": "1", "completions": []}, "non-empty list"),
        # A null gold was graded as the text "None", so \\boxed{None} scored pass@1 = 1.0.
        ({"gold": None, "completion": "\\boxed{None}"}, r"line 1: 'gold' is missing \(None\); every problem"),
        ({"gold": float("nan"), "completion": "\\boxed{nan}"}, "line 1: 'gold' is nan, not a finite number"),
        ({"gold": " ", "completion": "\\boxed{1}"}, "line 1: 'gold' is an empty string"),
    ],
)
def test_bad_stored_rows_name_the_line_and_the_key(tmp_path: Path, row: dict, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        grade_completions(path, progress=False, verbose=False)


def test_a_completion_that_once_crashed_grading_is_refused(tmp_path: Path) -> None:
    rows = [{"gold": "6", "completions": ["\\boxed{3" + "!" * 1000 + "}", "\\boxed{6}"]}]
    path = tmp_path / "stored.jsonl"
    path.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    out = tmp_path / "graded.jsonl"
    grade_completions(path, out_path=out, progress=False, verbose=False)
    assert load_records(out)[0]["outcomes"] == ["refused", "correct"]


def test_a_model_object_without_its_tokenizer_is_refused(tiny) -> None:
    model, _ = tiny()
    with pytest.raises(ConfigError, match="needs its tokenizer"):
        evaluate(model, ENV, num_problems=1, progress=False, verbose=False)


def test_a_tiny_model_runs_end_to_end(tmp_path: Path, quiet_eval, tiny) -> None:
    model, tokenizer = tiny()
    report = quiet_eval(
        model,
        tokenizer=tokenizer,
        n=2,
        num_problems=3,
        max_new_tokens=8,
        temperature=1.0,
        out_path=tmp_path / "e.jsonl",
    )
    assert report.num_problems == 3 and report.ks == (1, 2)
    assert all(len(r["completions"]) == 2 for r in load_records(tmp_path / "e.jsonl"))


def test_a_run_folder_loads_its_latest_checkpoint_and_needs_a_tokenizer(tmp_path: Path, tiny) -> None:
    from reasongym.evaluation.loading import load_model
    from reasongym.policy.checkpoints import resolve_weights, save_checkpoint

    model, tokenizer = tiny()
    for step in (1, 2):
        save_checkpoint(tmp_path, step, model=model)
    with pytest.raises(ConfigError, match="no tokenizer found"):
        resolve_weights(tmp_path)
    with pytest.raises(ConfigError, match="no tokenizer found"):
        load_model(tmp_path, device="cpu")
    tokenizer.save_pretrained(tmp_path)
    assert resolve_weights(tmp_path) == (tmp_path / "checkpoints" / "step-000002", tmp_path)
    loaded, loaded_tokenizer = load_model(tmp_path, device="cpu")
    assert loaded.config.hidden_size == model.config.hidden_size and loaded_tokenizer.padding_side == "left"


# ----------------------------------------------------------- issue 28, item 7: resumes and the model's identity


@pytest.fixture
def tiny_folder(tmp_path: Path, tiny) -> Path:
    """A tiny random-init model saved as a model folder."""
    from reasongym.policy.loading import save_policy

    model, tokenizer = tiny()
    save_policy(model, tokenizer, tmp_path / "model")
    return tmp_path / "model"


def _texts(path: Path) -> list[tuple[int, list[str]]]:
    return [(r["index"], r["completions"]) for r in load_records(path)]


def test_a_resumed_evaluation_samples_what_an_uninterrupted_one_did_in_any_batching(
    tmp_path: Path, quiet_eval, tiny_folder: Path
) -> None:
    # The sampling seeds were per batch: a cut-off batch re-batched every problem after it, and another
    # --batch-size (not recorded) was accepted on resume and sampled other completions.
    settings = {"n": 3, "num_problems": 7, "max_new_tokens": 10, "temperature": 1.0, "seed": 5}
    whole = tmp_path / "whole.jsonl"
    quiet_eval(str(tiny_folder), **settings, batch_size=4, out_path=whole)
    assert len({text for _, texts in _texts(whole) for text in texts}) > 7  # really sampled
    other = tmp_path / "other.jsonl"
    quiet_eval(str(tiny_folder), **settings, batch_size=3, out_path=other)
    assert _texts(other) == _texts(whole)
    cut = tmp_path / "cut.jsonl"  # killed after 2 records of the first batch of 4
    cut.write_text("".join(whole.read_text().splitlines(keepends=True)[:2]))
    quiet_eval(str(tiny_folder), **settings, batch_size=4, out_path=cut)
    assert _texts(cut) == _texts(whole)


def test_other_weights_at_the_same_path_are_another_evaluation(
    tmp_path: Path, quiet_eval, tiny_folder: Path, tiny
) -> None:
    from reasongym.policy.loading import save_policy

    out = tmp_path / "e.jsonl"
    quiet_eval(str(tiny_folder), n=1, num_problems=2, max_new_tokens=4, out_path=out)
    (record,) = {r["settings"]["weights"] for r in load_records(out)}
    assert record.startswith("sha256:")
    other, tokenizer = tiny(seed=1)
    save_policy(other, tokenizer, tiny_folder)  # retrained weights saved over the old ones
    with pytest.raises(ConfigError, match=r"another evaluation: weights='sha256:"):
        quiet_eval(str(tiny_folder), n=1, num_problems=3, max_new_tokens=4, out_path=out)


def test_a_checkpoint_is_identified_by_the_weights_its_manifest_records(tmp_path: Path, tiny) -> None:
    from reasongym.evaluation.loading import model_identity
    from reasongym.policy.checkpoints import save_checkpoint

    model, tokenizer = tiny()
    path = save_checkpoint(tmp_path, 1, model=model)
    tokenizer.save_pretrained(tmp_path)
    digest = json.loads((path / "checkpoint.json").read_text())["sha256"]["model.safetensors"]
    assert model_identity(str(tmp_path))["weights"] == f"sha256:{digest}"
    assert model_identity(str(path))["weights"] == f"sha256:{digest}"


@pytest.mark.parametrize(
    ("flag", "where"),
    [
        ("show", "reasongym.evaluation.records.sample_completions(out_path, count)"),
        ("out", "evaluate(..., out_path=PATH)"),
        ("completions", "reasongym.evaluation.grade_completions"),
    ],
)
def test_evaluate_names_an_option_of_the_command_and_what_does_its_work_in_python(
    flag: str, where: str
) -> None:
    import reasongym
    from reasongym.errors import ConfigError

    with pytest.raises(ConfigError) as raised:
        reasongym.evaluate("unused", ENV, **{flag: 2})
    message = str(raised.value)
    assert message.startswith(
        f"{flag}=2: --{flag} is an option of the `reasongym eval` command, not of evaluate()"
    )
    assert where in message
