"""Issue 51, items 3 and 6: plugins that exit on import, replace a built-in id, or replace one and then fail.
Real packages pip-installed into a folder that a child Python puts on its path (as in test_plugins.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import reasongym
from tests.envs.test_plugins import _package, _python, pip_install

ARITHMETIC = "reasongym/Arithmetic-v0"
# argparse in a module body: on import it prints its usage and raises SystemExit(2).
EXITS = """
import argparse

argparse.ArgumentParser(prog="exits").parse_args(["--no-such-flag"])

def register_envs():
    pass
"""
# Replaces the built-in with its own problem "1 + 1" of gold 3, then fails.
REPLACES_THEN_FAILS = """
import reasongym
from reasongym.envs.registration import unregister

def register_envs():
    unregister("reasongym/Arithmetic-v0")
    reasongym.register_dataset(
        "reasongym/Arithmetic-v0", [{"question": "1 + 1", "answer": "3"}], answer_type="integer"
    )
    raise RuntimeError("half-way")
"""
# Replaces the built-in and returns: refused unless the user allows this plugin to.
REPLACES = """
import reasongym

def register_envs():
    reasongym.register_dataset(
        "reasongym/Arithmetic-v0", [{"question": "2 + 2", "answer": "5"}], answer_type="integer", override=True
    )
    reasongym.register_dataset("quiet/Own-v0", [{"question": "3 + 3", "answer": "6"}], answer_type="integer")
"""
# Probe: takes a new id in the built-in namespace (it would pass for one of reasongym's own).
CLAIMS = """
import reasongym

def register_envs():
    reasongym.register_dataset("reasongym/Shiny-v0", [{"question": "1 + 2", "answer": "3"}], answer_type="integer")
"""
# Probe: prints while it registers (before, `reasongym list --json` was no longer JSON lines).
LOUD = """
import reasongym

def register_envs():
    print("loud-envs: registering, have a nice day")
    reasongym.register_dataset("loud/Echo-v0", [{"question": "1 + 3", "answer": "4"}], answer_type="integer")
"""
# Calls sys.exit from its registration function.
EXITS_LATER = """
import sys

def register_envs():
    sys.exit("exits-later: no licence file")
"""
SHOW_ARITHMETIC = (
    "import json, reasongym; from reasongym.envs import plugins; "
    "env = reasongym.make('reasongym/Arithmetic-v0'); prompt, info = env.reset(seed=0, options={'index': 0}); "
    "print(json.dumps({'prompt': prompt, 'origin': reasongym.spec('reasongym/Arithmetic-v0').origin, "
    "'ids': sorted(e.id for e in reasongym.list_envs() if not e.id.startswith(('reasongym/', 'reasoning_gym/'))), "
    "'status': plugins.load_plugins()}))"
)


@pytest.fixture(scope="module")
def replacing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two plugins that replace a built-in id (one then fails, one returns), one that takes a built-in
    namespace, one that prints."""
    root = tmp_path_factory.mktemp("replacing_plugins")
    packages = [
        _package(root, "replaces-then-fails", "replaces_then_fails", REPLACES_THEN_FAILS),
        _package(root, "replaces-envs", "replaces_envs", REPLACES),
        _package(root, "claims-envs", "claims_envs", CLAIMS),
        _package(root, "loud-envs", "loud_envs", LOUD),
    ]
    return pip_install(root / "site", packages)


@pytest.fixture(scope="module")
def exiting(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two plugins that exit: on import, and from their registration function."""
    root = tmp_path_factory.mktemp("exiting_plugins")
    packages = [
        _package(root, "exits-envs", "exits_envs", EXITS),
        _package(root, "exits-later-envs", "exits_later_envs", EXITS_LATER),
    ]
    return pip_install(root / "site", packages)


def _builtin_prompt() -> str:
    return reasongym.make(ARITHMETIC).reset(seed=0, options={"index": 0})[0]


def test_no_plugin_can_change_or_remove_a_builtin_id_and_failures_leave_nothing(replacing: Path) -> None:
    out = _python(replacing, SHOW_ARITHMETIC)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert (result["prompt"], result["origin"]) == (_builtin_prompt(), "reasongym")
    assert result["ids"] == ["loud/Echo-v0"]  # replaces_envs's own id went with the refused replacement
    status = result["status"]
    assert status["loud_envs"] == "ok: 1 ids"
    assert status["claims_envs"] == (
        "failed: it added reasongym/Shiny-v0, in a built-in namespace (set REASONGYM_PLUGIN_OVERRIDES=claims_envs "
        "to allow it)"
    )
    assert status["replaces_then_fails"] == "failed: RuntimeError: half-way"
    assert status["replaces_envs"].startswith(
        "failed: it replaced reasongym/Arithmetic-v0, an id it did not add (set REASONGYM_PLUGIN_OVERRIDES="
        "replaces_envs to allow it)"
    )
    warnings = [line for line in out.stderr.splitlines() if "RuntimeWarning" in line]
    assert len(warnings) == 3, out.stderr[-3000:]
    assert "loud-envs: registering" in out.stderr  # what a plugin prints goes to stderr


def test_reasongym_list_json_stays_json_beside_a_plugin_that_prints(replacing: Path) -> None:
    out = _python(replacing, "import sys; from reasongym.cli import main; sys.exit(main(['list', '--json']))")
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert {row["id"] for row in rows} >= {"loud/Echo-v0", ARITHMETIC}


def test_a_plugin_that_exits_is_a_warning_and_every_command_still_works(exiting: Path) -> None:
    for command in (["list", "--json"], ["show", ARITHMETIC, "--n", "1"]):
        out = _python(exiting, f"import sys; from reasongym.cli import main; sys.exit(main({command!r}))")
        assert out.returncode == 0, out.stderr[-3000:]
        assert "usage: exits" not in out.stdout  # argparse's usage text went nowhere near the output
        assert (
            "reasongym plugin 'exits_envs' from exits-envs 1.2.0 failed to load and is skipped (SystemExit: 2)"
            in out.stderr
        )
        assert (
            "reasongym plugin 'exits_later_envs' from exits-later-envs 1.2.0 failed to load and is skipped"
            in out.stderr
        )
    out = _python(exiting, SHOW_ARITHMETIC)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result["prompt"] == _builtin_prompt()  # make works
    assert result["status"] == {
        "exits_envs": "failed: SystemExit: 2",
        "exits_later_envs": "failed: SystemExit: exits-later: no licence file",
    }


def test_the_user_may_let_one_plugin_replace_a_builtin(replacing: Path) -> None:
    out = _python(replacing, SHOW_ARITHMETIC, REASONGYM_PLUGIN_OVERRIDES="replaces_envs")
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    assert result["prompt"].startswith("2 + 2") and result["origin"] == "plugin replaces-envs 1.2.0"
    assert result["ids"] == ["loud/Echo-v0", "quiet/Own-v0"]
    assert result["status"]["replaces_envs"] == "ok: 1 ids, replaced reasongym/Arithmetic-v0"


# ---------------------------------------------------------------------------------------------- probe

ODD = {
    # a BaseException of its own, with a 100,000-character message (before: the process died with it)
    "stops_envs": 'class Stop(BaseException):\n    pass\n\ndef register_envs():\n    raise Stop("x" * 100_000)\n',
    # a message whose first lines are blank, and one with no message at all
    "blank_envs": 'def register_envs():\n    raise ValueError("\\n\\nsecond line\\nthird")\n',
    "empty_envs": "def register_envs():\n    raise RuntimeError()\n",
    # Gymnasium's own id, and an id the user registered before the first lookup
    "gym_envs": 'import gymnasium\n\ndef register_envs():\n    gymnasium.register(id="CartPole-v1", entry_point="x:Y")\n',
    "user_envs": 'from reasongym.envs.registration import unregister\n\ndef register_envs():\n    unregister("me/Mine-v0")\n',
}


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("odd_plugins")
    packages = [_package(root, name.replace("_", "-"), name, code) for name, code in ODD.items()]
    return pip_install(root / "site", packages)


def test_odd_failures_are_one_short_line_and_no_id_of_anyone_else_changes(odd: Path) -> None:
    code = (
        "import json, gymnasium, reasongym; from reasongym.envs import plugins; "
        "reasongym.register_dataset('me/Mine-v0', [{'question': 'q', 'answer': '1'}], answer_type='integer'); "
        "status = plugins.load_plugins(); "
        "print(json.dumps({'status': status, 'cartpole': gymnasium.spec('CartPole-v1').entry_point, "
        "'mine': 'me/Mine-v0' in [e.id for e in reasongym.list_envs()]}))"
    )
    out = _python(odd, code)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout)
    status = result["status"]
    assert status["stops_envs"].startswith("failed: Stop: xxx") and len(status["stops_envs"]) < 320
    assert status["blank_envs"] == "failed: ValueError: second line"
    assert status["empty_envs"] == "failed: RuntimeError"
    assert status["gym_envs"].startswith("failed: it replaced CartPole-v1, an id it did not add")
    assert status["user_envs"].startswith("failed: it replaced me/Mine-v0, an id it did not add")
    assert (
        result["cartpole"] == "gymnasium.envs.classic_control.cartpole:CartPoleEnv" and result["mine"] is True
    )
