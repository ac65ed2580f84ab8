"""Plugins: real packages, installed with pip, that declare environments under the ``reasongym.envs`` group.

Each package is built from a folder written here and pip-installed into a target folder that a child
Python puts on its path, so the test venv itself is left as it was. Child processes, because a plugin
loads once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

GOOD = """
import reasongym

def register_envs():
    reasongym.register_dataset(
        "acme/Squares-v0",
        [{"question": f"What is {n} squared?", "answer": str(n * n)} for n in range(1, 6)],
        answer_type="integer",
        description="squares of 1..5",
    )
"""
# Registers one id, then fails: the id it had registered must be taken back.
BROKEN = """
import reasongym

def register_envs():
    reasongym.register_dataset("broken/Half-v0", [{"question": "1+1?", "answer": "2"}], answer_type="integer")
    raise RuntimeError("the plugin's data folder is missing")
"""


def _package(root: Path, name: str, module: str, code: str) -> Path:
    folder = root / name
    (folder / module).mkdir(parents=True)
    (folder / module / "__init__.py").write_text(textwrap.dedent(code), encoding="utf-8")
    (folder / "pyproject.toml").write_text(
        textwrap.dedent(f"""
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{name}"
        version = "1.2.0"

        [project.entry-points."reasongym.envs"]
        {module} = "{module}:register_envs"
        """),
        encoding="utf-8",
    )
    return folder


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the two plugin packages, installed by pip (no index, no build isolation)."""
    root = tmp_path_factory.mktemp("plugins")
    packages = [
        _package(root, "acme-envs", "acme_envs", GOOD),
        _package(root, "broken-envs", "broken_envs", BROKEN),
    ]
    return pip_install(root / "site", packages)


def pip_install(target: Path, packages: list[Path]) -> Path:
    """Install the package folders into ``target`` with pip (no index, no build isolation); ``target``."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    command += ["--no-build-isolation", "--target", str(target), *map(str, packages)]
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
    return target


def _python(site: Path, code: str, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(site)]), **environ}
    return subprocess.run(
        [sys.executable, "-W", "always", "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_import_reads_no_plugin_and_a_lookup_loads_them(site: Path) -> None:
    out = _python(
        site,
        "import sys, reasongym; print('acme_envs' in sys.modules); "
        "env = reasongym.make('acme/Squares-v0'); print('acme_envs' in sys.modules); "
        "prompt, info = env.reset(seed=0, options={'index': 2}); print(prompt.splitlines()[0]); "
        "print(env.step('The final answer is \\\\boxed{9}.')[1])",
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:4] == ["False", "True", "What is 3 squared?", "1.0"]


def test_a_broken_plugin_is_a_warning_naming_it_and_is_undone(site: Path) -> None:
    out = _python(
        site,
        "import json, reasongym; from reasongym.envs import plugins; "
        "ids = [e.id for e in reasongym.list_envs()]; "
        "print(json.dumps({'ids': [i for i in ids if i.startswith(('acme/', 'broken/'))], "
        "'status': plugins.load_plugins()}))",
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["ids"] == ["acme/Squares-v0"]  # broken/Half-v0 was registered, then taken back
    assert result["status"] == {
        "acme_envs": "ok: 1 ids",
        "broken_envs": "failed: RuntimeError: the plugin's data folder is missing",
    }
    warning = [line for line in out.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warning) == 1
    assert "reasongym plugin 'broken_envs' from broken-envs 1.2.0 failed to load and is skipped" in warning[0]


def test_reasongym_list_names_the_package_that_provides_an_env(site: Path) -> None:
    out = _python(site, "import sys; from reasongym.cli import main; sys.exit(main(['list', '--json']))")
    assert out.returncode == 0, out.stderr
    rows = {row["id"]: row for row in map(json.loads, out.stdout.splitlines())}
    assert rows["acme/Squares-v0"]["source"] == "plugin acme-envs 1.2.0"
    assert rows["acme/Squares-v0"]["description"] == "squares of 1..5"
    assert rows["reasongym/GSM8K-v0"]["source"] == "reasongym"
    assert "broken/Half-v0" not in rows
