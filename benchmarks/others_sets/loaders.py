r"""Rebuild other projects' labelled verifier sets as rows reasongym and math-verify can grade.

Every loader returns rows of one shape (``Row``): an id that is stable across runs, the kind reasongym grades
it as, the gold (the set's reference answer, as the set writes it), the completion (the model answer as the
set gives it), the set's label (is this answer correct?), and a group (the sub-source, for the tables). How
each set maps onto these fields, and why, is in this folder's README; ``SETS`` names them.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.others_sets.sources import SOURCES, read_text


@dataclass(frozen=True)
class Row:
    """One labelled (gold, completion) pair of another project's set."""

    id: str
    """Stable id: the set's prefix and the source's own id (and which answer of the item)."""
    kind: str
    """The reasongym kind it is graded as ("math" for all but a few xVerify rows)."""
    gold: str
    """The reference answer as the source writes it."""
    completion: str
    """The model answer as the source gives it (a bare answer, a whole solution, a test's prediction)."""
    label: bool
    """The source's verdict: is the completion a correct answer to the gold?"""
    group: str
    """The sub-source (a dataset, a test function, a question type) for per-group counts."""


def hardverify(root: Path, boxed: bool = False) -> list[Row]:
    """TinyV's HardVerify-Math: per item a correct answer a rule verifier missed (fn) and a wrong one (tn)."""
    items = json.loads(read_text(SOURCES["tinyv"], "benchmarks/HardVerify-Math.json", root))
    rows = []
    for item in items:
        for tag, answer, label in (("fn", item["fn_output"], True), ("tn", item["tn_output"], False)):
            completion = f"\\boxed{{{answer}}}" if boxed else answer
            rows.append(
                Row(
                    f"hardverify-{item['id']}-{tag}",
                    "math",
                    item["ground_truth"],
                    completion,
                    label,
                    item["source"],
                )
            )
    return rows


def mr_math(root: Path) -> list[Row]:
    """ReasonEval's MR-MATH (invalid-error half): whole solutions to MATH problems, answer correctness by annotators."""
    text = read_text(SOURCES["reasoneval"], "dataset/mr-math_invalid_errors.json", root)
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        label = item["model_output_answer_correctness"] == "correct"
        rows.append(
            Row(
                f"mrmath-{item['id']}",
                "math",
                item["ground_truth_answer"],
                item["model_output"],
                label,
                item["generator"],
            )
        )
    return rows


MR_GSM8K_FILES = (
    "eval_results/gpt4-grading/Claude_eval_results.json",
    "eval_results/gpt4-grading/GPT3_5_eval_results.json",
    "eval_results/gpt4-grading/llama2_70b_eval_results.json",
    "eval_results/gpt4-grading/mammoth_70B_eval_results.json",
    "eval_results/gpt4-grading/metamath_70B_eval_results.json",
    "eval_results/gpt4-grading/wizardmath_70B_eval_results.json",
)
"""The result files that carry MR-GSM8K's annotated rows (the dataset file itself is over the snapshot limit;
``GPT4_eval_results.json`` too, so it is left out, for the same rows whoever runs this)."""


def mr_gsm8k(root: Path) -> list[Row]:
    """MR-GSM8K's annotated solutions (those its result files carry), less the program-of-thought ones."""
    by_id: dict[str, Row] = {}
    for path in MR_GSM8K_FILES:
        for item in json.loads(read_text(SOURCES["mr_gsm8k"], path, root)):
            # a program-of-thought row is a Python program that never states its answer: not text to grade
            if item["question_type"] == "POT":
                continue
            completion = "\n".join(item["model_output_steps"])
            label = item["model_output_answer_correctness"] == "correct"
            gold = str(item["ground_truth_answer"])
            by_id[item["uuid"]] = Row(
                f"mrgsm8k-{item['uuid']}", "math", gold, completion, label, item["question_type"]
            )
    return sorted(by_id.values(), key=lambda row: row.id)


MATH_VERIFY_TESTS = (
    "tests/test_all.py",
    "tests/test_boxed.py",
    "tests/test_numina_cases.py",
    "tests/test_open_thoughts.py",
    "tests/test_strict.py",
    "tests/test_yujianll.py",
)
"""Math-Verify's test files whose cases are (gold, prediction, expected verdict)."""


def _parametrized_cases(source: str) -> list[tuple[str, int, dict]]:
    """(test function, index, named values) of every ``parametrize`` case that has a gold and a prediction."""
    cases = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if not (isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "parametrize"):
                continue
            names = [name.strip() for name in ast.literal_eval(decorator.args[0]).split(",")]
            if "gold" not in names or "pred" not in names:
                continue
            for index, element in enumerate(decorator.args[1].elts):
                try:  # an f-string case (computed gold) is not a literal: left out and counted by the caller
                    values = ast.literal_eval(element)
                except ValueError:
                    values = None
                cases.append((node.name, index, dict(zip(names, values, strict=True)) if values else {}))
    return cases


def math_verify_tests(root: Path) -> list[Row]:
    """Math-Verify's own regression cases: gold, prediction and the verdict its authors expect."""
    rows = []
    for path in MATH_VERIFY_TESTS:
        stem = Path(path).stem.removeprefix("test_")
        for function, index, values in _parametrized_cases(read_text(SOURCES["math_verify"], path, root)):
            if not values:
                continue
            expected = values.pop("expected", values.pop("result", None))
            gold, pred = values.pop("gold"), values.pop("pred")
            # what is left is a grader option the expectation depends on (precision, strict, set relations)
            options = "".join(f" {name}={value}" for name, value in values.items())
            row_id = f"mvtests-{stem}-{function.removeprefix('test_')}-{index}"
            rows.append(
                Row(row_id, "math", gold, pred, bool(expected), function.removeprefix("test_") + options)
            )
    return rows


def qwen_rm_example(root: Path) -> list[Row]:
    """Qwen2.5-Math's shipped example: 100 MATH problems x 8 solutions, labelled by Qwen2.5-Math's own grader."""
    text = read_text(SOURCES["qwen_math"], "evaluation/data/eval_rm_maj_example/math_cot_100.jsonl", root)
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        item = json.loads(line)
        for k, (completion, score) in enumerate(zip(item["code"], item["score"], strict=True)):
            rows.append(
                Row(
                    f"qwenrm-{item['idx']}-{k}",
                    "math",
                    str(item["answer"]),
                    completion,
                    bool(score),
                    item["level"],
                )
            )
    return rows


XVERIFY_KINDS = {
    "math": "math",
    "alphabet_option": "choice",
    "short_text": "exact",
    "categorical_label": "yesno",
}
"""xVerify's answer types and the reasongym kind each is graded as."""


def xverify_examples(root: Path) -> list[Row]:
    """xVerify's ten worked examples, each with a human judgment of the long answer."""
    items = json.loads(read_text(SOURCES["xverify"], "src/xVerify/examples/eval_examples.json", root))
    return [
        Row(
            f"xverify-{k}",
            XVERIFY_KINDS[item["key_answer_type"]],
            item["correct_answer"],
            item["llm_output"],
            item["human_judgment_result"] == "Correct",
            item["dataset"],
        )
        for k, item in enumerate(items)
    ]


SETS: dict[str, Callable[[Path], list[Row]]] = {
    "hardverify": hardverify,
    "hardverify_boxed": lambda root: hardverify(root, boxed=True),
    "mr_math": mr_math,
    "mr_gsm8k": mr_gsm8k,
    "math_verify_tests": math_verify_tests,
    "qwen_rm_example": qwen_rm_example,
    "xverify_examples": xverify_examples,
}
"""Every set by name, in the order the report lists them."""
