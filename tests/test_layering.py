"""The import direction of the package: verifiers <- envs <- evaluation <- agents <- cli."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "reasongym"

# For each layer, the reasongym layers it must not import.
FORBIDDEN = {
    "verifiers": (
        "reasongym.envs",
        "reasongym.agents",
        "reasongym.evaluation",
        "reasongym.cli",
        "reasongym.generation",
    ),
    "envs": (
        "reasongym.agents",
        "reasongym.evaluation",
        "reasongym.cli",
        "reasongym.generation",
        "reasongym.models",
    ),
    "evaluation": ("reasongym.agents", "reasongym.cli"),
    "agents": ("reasongym.cli",),
    "generation": ("reasongym.envs", "reasongym.agents", "reasongym.cli", "reasongym.evaluation"),
    # Run folders and checkpoints sit beside generation: training writes them, evaluation reads them.
    "runs": ("reasongym.envs", "reasongym.agents", "reasongym.cli", "reasongym.evaluation"),
    "models": ("reasongym.envs", "reasongym.agents", "reasongym.cli", "reasongym.evaluation"),
    "lora": ("reasongym.envs", "reasongym.agents", "reasongym.cli", "reasongym.evaluation"),
    "base_model": ("reasongym.envs", "reasongym.agents", "reasongym.cli", "reasongym.evaluation"),
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
