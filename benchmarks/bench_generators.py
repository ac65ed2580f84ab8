"""Our hand-written generators against the reasoning-gym tasks they duplicate: what, besides speed, each offers.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_generators [--problems 100] [--smollm2]`` (about a minute
without ``--smollm2``; with it, about 10 CPU-minutes more, and ``$REASONGYM_SMOLLM2_GGUF`` is needed).
Speed is ``bench_envs.py``'s; this measures the rest, per pair (ours ``reasongym/<Name>-v0``, theirs
``reasoning_gym/<task>-v0`` through the adapter, and their dataset called directly where that differs):

- **Difficulty control** (``levels``): per level (ours 1-5, theirs the curriculum levels the adapter
  registers), over ``--problems`` train problems: the gold's length in characters, its number of items
  (roots), how many numbers the question's mathematics holds and the most digits of one (the instructions
  reasoning-gym appends are cut off first), and the share of problems that repeat within the stream;
  with ``--smollm2``, SmolLM2-135M-Instruct's greedy accuracy per level (``--model-problems`` problems,
  ``--max-new-tokens`` tokens) on ``--model-pairs``. ``spearman`` is the rank correlation of level with each
  proxy over all problems: a level that means "harder" gives a clear positive figure for size.
- **Splits** (``splits``): ours and theirs through the adapter, the share of ``--problems`` test questions
  that also appear among ``--problems`` train questions; their datasets called directly (no splits: seed 0
  for training and seed 1 for testing, as a user would), the same share.
- **Answer forms** (``forms``): the gold of each of 50 problems written several equivalent ways (as given,
  with ``.0``, thousands separators, ``x = ...``, LaTeX fractions, roots in another order, Countdown
  expressions spaced differently or ending in ``= target``); the share each grader accepts: ours, the
  adapter, and their ``score_answer`` alone (at 1).
- **Solutions** (``solutions``): the share of problems that come with a step-by-step solution (what SFT
  and STaR's rationalization train on).

The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import reasongym  # noqa: E402
from reasongym.envs.rgym.table import levels_of  # noqa: E402

PAIRS = {
    "Arithmetic": "basic_arithmetic",
    "LinearEquation": "simple_equations",
    "PolynomialRoots": "polynomial_equations",
    "Countdown": "countdown",
    "NumberTheory": "gcd",
    "Fractions": "fraction_simplification",
}
"""Our generator -> the reasoning-gym task it duplicates (``bench_envs.py`` says how close each is)."""
_INSTRUCTIONS = re.compile(
    r"In solving equations|Final answer format|Give only|Give the answer|List them|Each number can|"
    r"Ensure to|Please|Provide",
)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_VARIABLE = re.compile(r"(?:value of|for real|Solve for|solve for)\s+([a-z])\b")


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=int, default=100, help="problems per level and per split")
    parser.add_argument("--smollm2", action="store_true", help="SmolLM2's greedy accuracy per level")
    parser.add_argument("--model-problems", type=int, default=12, help="problems per level for --smollm2")
    parser.add_argument("--max-new-tokens", type=int, default=128, help="tokens per completion for --smollm2")
    parser.add_argument("--model-pairs", nargs="*", default=["Arithmetic", "LinearEquation", "NumberTheory"])
    return parser.parse_args()


def _make(env_id: str) -> Any:
    return reasongym.make(env_id).unwrapped


def _levels(ours: str) -> dict[str, tuple[tuple[int, ...], str]]:
    """The two environments of a pair with their levels."""
    env = _make(f"reasongym/{ours}-v0")
    return {
        "ours": (tuple(env.source.difficulties()), f"reasongym/{ours}-v0"),
        "theirs": (levels_of(PAIRS[ours]), f"reasoning_gym/{PAIRS[ours]}-v0"),
    }


def _mathematics(question: str) -> str:
    """The question without the instructions reasoning-gym appends (their numbered lists hold numbers)."""
    cut = _INSTRUCTIONS.search(question)
    return question[: cut.start()] if cut else question


def _proxies(problem: Any) -> dict[str, float]:
    gold = problem.answer.replace("$", "").replace(" ", "")
    numbers = _NUMBER.findall(_mathematics(problem.question))
    return {
        "answer_chars": len(gold),
        "answer_items": len(gold.split(",")),
        "numbers": len(numbers),
        "max_digits": max((len(n.replace(".", "")) for n in numbers), default=0),
    }


def _spearman(xs: list[float], ys: list[float]) -> float | None:
    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=values.__getitem__)
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    if len(set(rx)) < 2 or len(set(ry)) < 2:
        return None
    return statistics.correlation(rx, ry)


def level_proxies(env_id: str, levels: tuple[int, ...], problems: int) -> dict[str, Any]:
    """Per level, the mean of each proxy and the in-stream repeat share; the level-proxy rank correlations."""
    env = _make(env_id)
    per_level, flat = {}, []
    for level in levels:
        drawn = [env.problem_at(i, split="train", difficulty=level) for i in range(problems)]
        rows = [_proxies(problem) for problem in drawn]
        flat += [(level, row) for row in rows]
        per_level[str(level)] = {key: statistics.fmean(row[key] for row in rows) for key in rows[0]}
        per_level[str(level)]["repeats"] = 1 - len({p.question for p in drawn}) / len(drawn)
    spearman = {key: _spearman([lv for lv, _ in flat], [row[key] for _, row in flat]) for key in flat[0][1]}
    return {"per_level": per_level, "spearman": spearman}


def split_overlap(ours: str, problems: int) -> dict[str, float]:
    """Share of test questions also among the train questions: ours, the adapter, their datasets by seed."""
    import reasoning_gym

    shares = {}
    for name, env_id in (
        ("ours", f"reasongym/{ours}-v0"),
        ("theirs_adapter", f"reasoning_gym/{PAIRS[ours]}-v0"),
    ):
        env = _make(env_id)
        train = {env.problem_at(i, split="train").question for i in range(problems)}
        test = [env.problem_at(i, split="test").question for i in range(problems)]
        shares[name] = sum(q in train for q in test) / len(test)
    train_ds = reasoning_gym.create_dataset(PAIRS[ours], seed=0, size=problems)
    test_ds = reasoning_gym.create_dataset(PAIRS[ours], seed=1, size=problems)
    train = {item["question"] for item in train_ds}
    shares["theirs_direct_seed0_vs_seed1"] = sum(item["question"] in train for item in test_ds) / problems
    return shares


def _integer_forms(gold: str, question: str) -> dict[str, str]:
    forms = {"as_given": gold, "decimal_point_zero": f"{gold}.0", "dollar_math": f"${gold}$"}
    if abs(int(gold)) >= 1000:
        forms["thousands_separators"] = f"{int(gold):,}"
    variable = _VARIABLE.search(question)
    if variable:
        forms["variable_equals"] = f"{variable[1]} = {gold}"
    return forms


def _fraction_forms(gold: str, question: str) -> dict[str, str]:
    gold = gold.replace("$", "").strip()
    forms = {"as_given": gold, "spaced": gold.replace("/", " / ")}
    if "/" in gold:
        num, den = gold.split("/")
        forms["latex_frac"] = f"\\frac{{{num}}}{{{den}}}"
    return forms


def _roots_forms(gold: str, question: str) -> dict[str, str]:
    roots = [r.strip() for r in gold.split(",")]
    variable = _VARIABLE.search(question)
    name = variable[1] if variable else "x"
    return {
        "as_given": gold,
        "reversed": ", ".join(reversed(roots)),
        "variable_equals": ", ".join(f"{name} = {r}" for r in roots),
    }


def _countdown_forms(expression: str, target: str) -> dict[str, str]:
    tight = expression.replace(" ", "")
    return {
        "as_given": expression,
        "unspaced": tight,
        "spaced": re.sub(r"([-+*/])", r" \1 ", tight),
        "equals_target": f"{expression} = {target}",
        "times_sign": expression.replace("*", "×"),
    }


def _forms_of(ours: str, problem: Any) -> dict[str, str]:
    from reasongym.envs.core import gold_answer_text

    if ours == "Countdown":
        expression = problem.metadata.get("reference") or gold_answer_text(problem)
        target = re.search(r"target=(-?\d+)", problem.answer)
        return _countdown_forms(str(expression), target[1] if target else "")
    builder: Callable[[str, str], dict[str, str]] = {
        "Fractions": _fraction_forms,
        "PolynomialRoots": _roots_forms,
    }.get(ours, _integer_forms)
    return builder(problem.answer, problem.question)


def answer_forms(ours: str, problems: int = 50) -> dict[str, dict[str, float]]:
    """Share of each equivalent form of the gold that ours, the adapter and their scorer accept."""
    accepted: dict[str, dict[str, list[bool]]] = {}
    for grader, env_id in (("ours", f"reasongym/{ours}-v0"), ("adapter", f"reasoning_gym/{PAIRS[ours]}-v0")):
        env = _make(env_id)
        for i in range(problems):
            problem = env.problem_at(i, split="test")
            for form, text in _forms_of(ours, problem).items():
                completion = (
                    f"The answer is \\boxed{{{text}}}." if grader == "ours" else f"<answer>{text}</answer>"
                )
                verdict = env.score(problem, completion)
                accepted.setdefault(form, {}).setdefault(grader, []).append(bool(verdict.correct))
                if grader == "adapter":
                    dataset = env.source.dataset(problem.metadata.get("level"))
                    try:
                        native = dataset.score_answer(text, env.source.entry_of(problem)) >= 1
                    except Exception:  # noqa: BLE001 - their scorer failing on a form counts as not accepted
                        native = False
                    accepted[form].setdefault("their_scorer", []).append(bool(native))
    return {form: {g: sum(v) / len(v) for g, v in by.items()} for form, by in accepted.items()}


def solutions(ours: str, problems: int = 50) -> dict[str, float]:
    """Share of problems with a step-by-step solution, ours and theirs."""
    shares = {}
    for name, env_id in (("ours", f"reasongym/{ours}-v0"), ("theirs", f"reasoning_gym/{PAIRS[ours]}-v0")):
        env = _make(env_id)
        shares[name] = sum(bool(env.problem_at(i, split="test").solution) for i in range(problems)) / problems
    return shares


def smollm2_accuracy(pairs: list[str], args: argparse.Namespace) -> dict[str, dict[str, dict[str, float]]]:
    """SmolLM2's greedy accuracy per level on both environments of each pair."""
    gguf = os.environ.get("REASONGYM_SMOLLM2_GGUF")
    if not gguf or not os.path.isfile(gguf):
        raise SystemExit("--smollm2 needs $REASONGYM_SMOLLM2_GGUF (the SmolLM2 GGUF file)")
    from reasongym.evaluation import evaluate
    from reasongym.policy.loading import load_policy

    model, tokenizer = load_policy(gguf, device="cpu")
    out: dict[str, dict[str, dict[str, float]]] = {}
    for ours in pairs:
        for side, (levels, env_id) in _levels(ours).items():
            for level in levels:
                report = evaluate(
                    model,
                    env_id,
                    tokenizer=tokenizer,
                    n=1,
                    temperature=0.0,
                    split="test",
                    difficulty=level,
                    num_problems=args.model_problems,
                    batch_size=args.model_problems,
                    max_new_tokens=args.max_new_tokens,
                    progress=False,
                    verbose=False,
                )
                out.setdefault(ours, {}).setdefault(side, {})[str(level)] = report.metrics["pass@1"]
                print(f"SmolLM2 {env_id} level {level}: pass@1 {report.metrics['pass@1']:.3f}", flush=True)
    return out


def main() -> None:
    args = _parse_args()
    result: dict[str, Any] = {"problems": args.problems}
    for ours in PAIRS:
        pair: dict[str, Any] = {"theirs": PAIRS[ours]}
        for side, (levels, env_id) in _levels(ours).items():
            pair[f"levels_{side}"] = level_proxies(env_id, levels, args.problems)
        pair["splits"] = split_overlap(ours, args.problems)
        pair["forms"] = answer_forms(ours)
        pair["solutions"] = solutions(ours)
        result[ours] = pair
        print(json.dumps({ours: pair}), flush=True)
    if args.smollm2:
        result["smollm2_pass1"] = smollm2_accuracy(args.model_pairs, args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
