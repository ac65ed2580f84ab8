"""Size budgets and annotations: growth past them is a decision someone makes and writes down.

Targets from ../shared/STYLE.md: a module stays under 400 lines (an algorithm file, read top to bottom in
run order, under 450), a function under 60 lines from its ``def`` to its last line (signature and
docstring included: what a reader scrolls through), a config dataclass under 25 fields. A module past its target must say why at its top (a "Why this file is long" paragraph in
its docstring); nothing passes 600 lines, the line where it must be split.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "reasongym"
MODULE_TARGET = 400
ALGORITHM_TARGET = 450  # agents/<algo>.py: one algorithm, read top to bottom (cleanrl's single file)
ALGORITHMS = {"agents/grpo.py", "agents/dapo.py", "agents/star.py", "agents/sft.py"}
MODULE_LIMIT = 600
FUNCTION_TARGET = 60
CONFIG_FIELDS_TARGET = 25
WHY_LONG = "Why this file is long"


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_modules_past_their_target_say_why_and_none_passes_the_limit() -> None:
    unexplained, too_long = {}, {}
    for path in _modules():
        name = path.relative_to(PACKAGE).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        target = ALGORITHM_TARGET if name in ALGORITHMS else MODULE_TARGET
        if lines > MODULE_LIMIT:
            too_long[name] = lines
        elif lines > target and WHY_LONG not in (ast.get_docstring(ast.parse(text)) or ""):
            unexplained[name] = lines
    assert too_long == {}
    assert unexplained == {}


def _lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines of a function from its ``def`` (or first decorator) to its last line."""
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    return (node.end_lineno or node.lineno) - first + 1


def test_functions_stay_under_the_size_target() -> None:
    too_long = {}
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _lines(node) > FUNCTION_TARGET:
                too_long[f"{path.relative_to(PACKAGE)}:{node.name}"] = _lines(node)
    assert too_long == {}


# Top-level packages of optional extras (pyproject.toml) that some reasongym modules are built on.
OPTIONAL_EXTRAS = ("openenv", "verifiers")


def test_config_dataclasses_stay_under_the_field_target() -> None:
    crowded = {}
    for path in _modules():
        if path.name == "__main__.py":  # running it is the command line
            continue
        try:
            module = importlib.import_module(
                ".".join(("reasongym", *path.relative_to(PACKAGE).with_suffix("").parts))
            )
        except ModuleNotFoundError as exc:  # a module built on an optional extra that is not installed
            if (exc.name or "").split(".")[0] in OPTIONAL_EXTRAS:
                continue
            raise
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                name.endswith("Config")
                and dataclasses.is_dataclass(cls)
                and cls.__module__ == module.__name__
            ):
                if len(dataclasses.fields(cls)) > CONFIG_FIELDS_TARGET:
                    crowded[name] = len(dataclasses.fields(cls))
    assert crowded == {}


def test_public_functions_are_annotated() -> None:
    missing = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            functions = [node] if isinstance(node, ast.FunctionDef) else []
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                functions = [n for n in node.body if isinstance(n, ast.FunctionDef)]
            for fn in functions:
                if fn.name.startswith("_") and fn.name != "__init__":
                    continue
                args = [a for a in fn.args.args + fn.args.kwonlyargs if a.arg not in ("self", "cls")]
                if fn.returns is None or any(a.annotation is None for a in args):
                    missing.append(f"{path.relative_to(PACKAGE)}:{fn.name}")
    assert missing == []


# benchmarks/: the package's budgets, and its habits about imports.
BENCHMARKS = PACKAGE.parent / "benchmarks"
TABLES_PAST_THE_LIMIT = {
    "grader_suites_corpus.py": "a table of cases, one per line, so that a diff shows the case that changed",
}
"""Benchmark files allowed past the limit, and why: data, not code (each says so in its own docstring too)."""


def _benchmark_modules() -> list[Path]:
    return sorted(BENCHMARKS.rglob("*.py"))


def test_benchmark_modules_past_their_target_say_why_and_none_passes_the_limit() -> None:
    unexplained, too_long = {}, {}
    for path in _benchmark_modules():
        name = path.relative_to(BENCHMARKS).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MODULE_LIMIT and name not in TABLES_PAST_THE_LIMIT:
            too_long[name] = lines
        elif lines > MODULE_TARGET and WHY_LONG not in (ast.get_docstring(ast.parse(text)) or ""):
            unexplained[name] = lines
    assert too_long == {}
    assert unexplained == {}


def test_benchmark_functions_stay_under_the_size_target() -> None:
    too_long = {}
    for path in _benchmark_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _lines(node) > FUNCTION_TARGET:
                too_long[f"{path.relative_to(BENCHMARKS)}:{node.name}"] = _lines(node)
    assert too_long == {}


def _imports_and_path_edits(path: Path) -> tuple[set[str], list[str]]:
    """The top-level names a file imports, and its edits of ``sys.path`` or loads of a file as a module."""
    imported, edits = set(), []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
        elif isinstance(node, ast.Attribute) and node.attr == "spec_from_file_location":
            edits.append(f"{path.name}:{node.lineno} loads a file as a module")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in ("insert", "append")
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "path"
            and isinstance(node.value.value, ast.Name)
            and node.value.value.id == "sys"
        ):
            edits.append(f"{path.name}:{node.lineno} edits sys.path")
    return imported, edits


def test_benchmarks_are_a_package_that_edits_no_sys_path_and_imports_nothing_from_tests() -> None:
    """Benchmarks import each other as ``benchmarks.NAME`` (run as ``python -m benchmarks.NAME``); what they
    share with the tests (the fake servers) lives in benchmarks/harness, which the tests import."""
    siblings = {path.stem for path in _benchmark_modules()} - {"__init__", "__main__"}
    problems = []
    for path in [*_benchmark_modules(), *_modules()]:
        imported, edits = _imports_and_path_edits(path)
        problems += edits
        if "tests" in imported:
            problems.append(f"{path.name} imports from tests/")
        if path.is_relative_to(BENCHMARKS) and imported & siblings:
            problems.append(
                f"{path.name} imports {sorted(imported & siblings)} by a bare name, not benchmarks.NAME"
            )
    assert problems == []
