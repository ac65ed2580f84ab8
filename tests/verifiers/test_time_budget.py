"""Issue 35, item 18: one verifier time budget, one range check, one rule, and a flag on verify, eval and train.

The budget is ``VERIFY_TIMEOUT_S`` (reasongym.verifiers.base), written once; every default of a verifier's
time budget is that name, every entry point checks a value with ``check_timeout`` (so the message is
the same everywhere), and a comparison that runs out of it is ungradable (``correct=None``), never wrong
(that rule's rows: test_adversarial.py, the slow comparisons).
"""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import reasongym
from reasongym.cli import main
from reasongym.cli.eval import EvalJob
from reasongym.cli.train import TrainJob
from reasongym.envs.core import ReasoningEnvConfig
from reasongym.errors import ConfigError
from reasongym.evaluation.report import answer_equivalence
from reasongym.evaluation.stored import grade_completions
from reasongym.verifiers import verify
from reasongym.verifiers.base import VERIFY_TIMEOUT_S
from reasongym.verifiers.timeout import run_with_timeout

ROOT = Path(reasongym.__file__).resolve().parent
# judge.py's timeout is a served model's request limit (30 s), not the budget of a symbolic comparison.
BUDGET_FILES = [p for p in sorted((ROOT / "verifiers").rglob("*.py")) if p.name != "judge.py"]
BUDGET_FILES += sorted((ROOT / "evaluation").glob("*.py"))
BUDGET_FILES += [ROOT / "envs" / "core.py", *sorted((ROOT / "cli").glob("*.py"))]
TIME_NAMES = ("timeout", "seconds", "verify_timeout")


def _literal_time_defaults(path: Path, root: Path = ROOT) -> list[str]:
    """``name=<number>`` defaults of time-budget parameters and fields written as a literal in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        pairs: list[tuple[str, ast.expr | None]] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = node.args
            positional = args.posonlyargs + args.args
            pairs += zip(
                [a.arg for a in positional[len(positional) - len(args.defaults) :]],
                args.defaults,
                strict=True,
            )
            pairs += [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            pairs.append((node.target.id, node.value))
        elif isinstance(node, ast.Call):
            pairs += [(k.arg or "", k.value) for k in node.keywords if k.arg == "default"]
        for name, default in pairs:
            timed = name in TIME_NAMES or (name == "default" and _is_timeout_flag(node))
            if timed and isinstance(default, ast.Constant) and isinstance(default.value, float):
                found.append(f"{path.relative_to(root)}:{default.lineno} {name}={default.value}")
    return found


def _is_timeout_flag(call: ast.AST) -> bool:
    if not isinstance(call, ast.Call):
        return False
    names = [a.value for a in call.args if isinstance(a, ast.Constant)]
    return any(isinstance(n, str) and "timeout" in n for n in names)


def test_no_verifier_time_budget_is_written_as_a_number() -> None:
    written = [hit for path in BUDGET_FILES for hit in _literal_time_defaults(path)]
    assert written == []


def test_the_scan_finds_a_literal_default(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f(timeout: float = 1.0) -> None: ...\n"
        "def g(*, seconds=2.0, other=3.0) -> None: ...\n"
        "parser.add_argument('--timeout', type=float, default=1.0)\n",
        encoding="utf-8",
    )
    hits = _literal_time_defaults(probe, tmp_path)
    assert hits == ["probe.py:1 timeout=1.0", "probe.py:2 seconds=2.0", "probe.py:3 default=1.0"]


@pytest.mark.parametrize(
    "default",
    [
        inspect.signature(verify).parameters["timeout"].default,
        inspect.signature(run_with_timeout).parameters["seconds"].default,
        inspect.signature(grade_completions).parameters["timeout"].default,
        inspect.signature(answer_equivalence).parameters["timeout"].default,
        ReasoningEnvConfig().verify_timeout,
        EvalJob().verify_timeout,
        TrainJob().verify_timeout,
    ],
)
def test_every_default_is_the_one_constant(default: float) -> None:
    assert default == VERIFY_TIMEOUT_S == 1.0


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), 3e6, True])
def test_one_range_check_names_the_field_everywhere(value: object) -> None:
    expected = "must be a finite number of seconds > 0 and at most 86400 (for example 1.0)"
    attempts = {
        "timeout": lambda: verify("\\boxed{1}", "1", timeout=value),  # type: ignore[arg-type]
        "seconds": lambda: run_with_timeout(abs, (1,), seconds=value),  # type: ignore[arg-type]
        "ReasoningEnvConfig.verify_timeout": lambda: ReasoningEnvConfig(verify_timeout=value),  # type: ignore[arg-type]
        "verify_timeout": lambda: EvalJob(verify_timeout=value),  # type: ignore[arg-type]
    }
    for name, attempt in attempts.items():
        with pytest.raises(ConfigError) as info:
            attempt()
        assert str(info.value) == f"{name}={value!r}: {expected}"
    with pytest.raises(ConfigError, match=r"verify_timeout=.*must be a finite number of seconds > 0"):
        TrainJob(verify_timeout=value)  # type: ignore[arg-type]


def test_eval_and_train_flags_set_the_environment_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert EvalJob().env_kwargs is None  # the default leaves the registered environment as it is
    assert EvalJob(verify_timeout=2.5).env_kwargs == {"verify_timeout": 2.5}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"index": 0, "completion": "\\boxed{0}"}) + "\n", encoding="utf-8")
    out = tmp_path / "graded.jsonl"
    env = "reasongym/Arithmetic-v0"
    argv = ["eval", "--completions", str(source), env, "--out", str(out), "--no-progress", "--json"]
    assert main([*argv, "--verify-timeout", "2.5"]) == 0
    settings = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert settings["settings"]["env_config"]["verify_timeout"] == 2.5
    bad = ["eval", "--completions", str(source), env, "--out", str(tmp_path / "bad.jsonl"), "--no-progress"]
    assert main([*bad, "--verify-timeout", "0"]) == 2
    assert "verify_timeout=0.0: must be a finite number of seconds > 0" in capsys.readouterr().err
    train = ["train", "grpo", "--env", env, "--model", "tiny", "--verify-timeout", "-1"]
    assert main(train) == 2
    assert "verify_timeout=-1.0: must be a finite number of seconds > 0" in capsys.readouterr().err


@pytest.mark.parametrize(("timeout", "made"), [(VERIFY_TIMEOUT_S, False), (2.5, True)])
def test_train_hands_the_trainer_an_environment_with_the_flag(
    timeout: float, made: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from reasongym.agents.algorithms import ALGORITHMS
    from reasongym.cli import train

    received = []
    monkeypatch.setitem(
        ALGORITHMS, "grpo", SimpleNamespace(train=lambda *args, **_: received.append(args[3]))
    )
    configs = {"run": None, "rollout": None, "grpo": None}
    folder = SimpleNamespace(path=tmp_path)
    train._run("grpo", configs, {"verify_timeout": timeout}, (None, None), "reasongym/Arithmetic-v0", folder)
    (env,) = received
    if made:
        assert env.unwrapped.config.verify_timeout == 2.5
    else:
        assert env == "reasongym/Arithmetic-v0"  # the default: the trainer makes the registered environment
