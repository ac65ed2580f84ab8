"""The import direction of the package (verifiers <- envs <- rollouts <- evaluation <- agents <- cli), and no
import cycles, not even through imports inside functions."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "reasongym"

# The layers, bottom to top: verifiers <- envs <- rollouts <- evaluation <- agents <- cli. Beside them, layers
# that know no environment: generation (text in, text out), policy (models, LoRA, checkpoints), runs (run
# folders, locks, metrics, a run's life) and distributed (which process is which).
ABOVE_ENVS = ("reasongym.rollouts", "reasongym.evaluation", "reasongym.agents", "reasongym.cli")
SIDE = ("reasongym.generation", "reasongym.policy", "reasongym.runs", "reasongym.distributed")
FORBIDDEN = {
    "verifiers": ("reasongym.envs", *ABOVE_ENVS, *SIDE),
    "envs": (*ABOVE_ENVS, *SIDE),
    "rollouts": ("reasongym.evaluation", "reasongym.agents", "reasongym.cli", "reasongym.runs"),
    "evaluation": ("reasongym.agents", "reasongym.cli"),
    "agents": ("reasongym.cli",),
    "generation": (
        "reasongym.envs",
        *ABOVE_ENVS,
        "reasongym.policy",
        "reasongym.runs",
        "reasongym.distributed",
    ),
    "policy": (
        "reasongym.envs",
        *ABOVE_ENVS,
        "reasongym.generation",
        "reasongym.runs",
        "reasongym.distributed",
    ),
    # A run folder holds checkpoints (the policy layer's); training writes it, evaluation reads it.
    # A run's life (`runs.lifecycle`) decides what rank 0 alone writes.
    "runs": ("reasongym.envs", *ABOVE_ENVS, "reasongym.generation"),
    "distributed": ("reasongym.verifiers", "reasongym.envs", *ABOVE_ENVS, *SIDE[:3]),
}
HEAVY = ("torch", "transformers")


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _layer_files(layer: str) -> list[Path]:
    folder = PACKAGE / layer
    return sorted(folder.rglob("*.py")) if folder.is_dir() else [PACKAGE / f"{layer}.py"]


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_lower_layers(layer: str) -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)} imports {name}"
        for path in _layer_files(layer)
        if path.exists()
        for name in _imports(path)
        if name.startswith(FORBIDDEN[layer])
    ]
    assert offenders == []


def _root_imports(source: str) -> list[str]:
    """What ``source`` takes from the package root itself: ``import reasongym``, or ``from reasongym import X``
    where X is not a module of the package (``from reasongym import distributed`` imports a module)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names if alias.name == "reasongym")
        elif isinstance(node, ast.ImportFrom) and node.module == "reasongym" and node.level == 0:
            modules = [alias.name for alias in node.names]
            found.extend(
                f"reasongym.{name}"
                for name in modules
                if not (PACKAGE / name).is_dir() and not (PACKAGE / f"{name}.py").is_file()
            )
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_no_layer_imports_the_package_root(layer: str) -> None:
    """The root (`reasongym/__init__.py`) sits on top: it registers every environment and re-exports names from
    every layer. A module inside the package imports the module it needs (``reasongym.envs.make``,
    ``reasongym.version``), never the root, at the top or inside a function."""
    offenders = [
        f"{path.relative_to(PACKAGE.parent)} imports {name}"
        for path in _layer_files(layer)
        if path.exists()
        for name in _root_imports(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_root_import_check_finds_a_bare_import() -> None:
    source = (
        "import reasongym\nfrom reasongym import __version__, distributed\ndef f():\n    import reasongym\n"
    )
    assert _root_imports(source) == ["reasongym", "reasongym.__version__", "reasongym"]


@pytest.mark.parametrize("layer", ["verifiers", "envs"])
def test_lower_layers_never_import_torch(layer: str) -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)} imports {name}"
        for path in _layer_files(layer)
        for name in _imports(path)
        if name.split(".")[0] in HEAVY
    ]
    assert offenders == []


def test_nothing_imports_the_cli() -> None:
    offenders = [
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if "cli" not in path.relative_to(PACKAGE).parts[:1]
        and path.name != "__main__.py"
        and any(name.startswith("reasongym.cli") for name in _imports(path))
    ]
    assert offenders == []


def test_import_reasongym_stays_light() -> None:
    code = "import sys, reasongym; print(sorted(m for m in ('torch', 'transformers', 'datasets') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The reasongym modules ``path`` imports when it runs, at the top or inside functions. A package's lazy
    re-export table (``if TYPE_CHECKING:`` in an ``__init__``) is for type checkers only and is skipped."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    if path.name == "__init__.py":
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                skipped.update(id(inner) for inner in ast.walk(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:  # `from reasongym.agents import grpo` imports the module grpo
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in modules else node.module)
    return {name for name in found if name in modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: _runtime_imports(path, set(paths)) - {name} for name, path in paths.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
