"""reasongym environments in the ``verifiers`` library (0.4, its v1 API): the taskset's problems, the rubric's
rewards, and verifiers' own evaluation loop (``vf-eval``) against ``transformers serve`` on the tiny model, every
reward equal to reasongym's own grading of the same replies.

The package runs in its own venv (``.ci/run``: verifiers pins openai<3, which the main venv does not have);
without it these tests skip."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("verifiers.v1", reason="the verifiers extra is not installed")

import verifiers.v1 as vf  # noqa: E402

import reasongym  # noqa: E402
from reasongym.envs.core import ReasoningEnv  # noqa: E402
from reasongym.envs.verifiers_export import (  # noqa: E402
    ProblemData,
    ReasongymEnv,
    ReasongymTaskConfig,
    grade,
    to_verifiers,
)
from reasongym.errors import ConfigError  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "verifiers_env"
LENGTH_TERMS = {"length_budget": 10, "length_penalty": 0.5, "length_buffer": 20}
"""Options under which the tiny model's random replies earn non-zero rewards (a length penalty)."""


@pytest.fixture(autouse=True)
def example_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """The example package, importable as verifiers imports it (by its module name)."""
    monkeypatch.syspath_prepend(str(EXAMPLE))


def _data(env_id: str, index: int, **options: object) -> tuple[ProblemData, reasongym.Env]:
    env = reasongym.make(env_id, **options).unwrapped
    env.reset(options={"index": index})
    problem = env._problem
    return ProblemData(answer=problem.answer, split=env._replay["split"], index=index), env


def test_single_turn_rewards_are_the_rubric_terms_and_sum_to_the_step_reward() -> None:
    options = {"format_reward": 0.2, **LENGTH_TERMS}
    data, env = _data("reasongym/Arithmetic-v0", 3, **options)
    config = ReasongymTaskConfig(env_id="reasongym/Arithmetic-v0", options=options)
    for text in (f"so \\boxed{{{data.answer}}}", "\\boxed{-12345} and a long tail of words", "no answer"):
        rewards = grade(config, data, [text])
        env.reset(options={"index": 3})
        step_reward = env.step(text)[1]
        assert set(rewards) == {"correctness", "format", "length"}
        assert rewards["format"][1] == 0.2 and rewards["length"][1] == -0.5
        assert sum(value * weight for value, weight in rewards.values()) == pytest.approx(step_reward)
    assert grade(config, data, [f"\\boxed{{{data.answer}}}"])["correctness"] == (1.0, 1.0)


def test_retry_and_tool_episodes_are_graded_by_replaying_the_replies() -> None:
    data, _ = _data("reasongym/ArithmeticRetry-v0", 5)
    config = ReasongymTaskConfig(env_id="reasongym/ArithmeticRetry-v0")
    right = f"\\boxed{{{data.answer}}}"
    assert grade(config, data, [right]) == {"episode_return": (1.0, 1.0)}
    assert grade(config, data, ["\\boxed{-1}", right]) == {"episode_return": (0.5, 1.0)}
    assert grade(config, data, ["\\boxed{-1}"] * 3) == {"episode_return": (0.0, 1.0)}

    data, _ = _data("reasongym/ToolArithmetic-v0", 2)
    config = ReasongymTaskConfig(env_id="reasongym/ToolArithmetic-v0")
    assert grade(config, data, ["<calc>1+1</calc>", f"\\boxed{{{data.answer}}}"])["episode_return"][0] == 1.0
    assert grade(config, data, ["<calc>1+1</calc>", "\\boxed{-1}"])["episode_return"][0] == 0.0


def test_to_verifiers_loads_the_taskset_of_the_environments_problems() -> None:
    env = to_verifiers("reasongym/Arithmetic-v0", num_tasks=4, seed=1, difficulty=2)
    assert isinstance(env, ReasongymEnv) and isinstance(env, vf.Env)
    tasks = list(env.taskset)
    assert len(tasks) == 4 and len({task.data.id for task in tasks}) == 4
    made = reasongym.make("reasongym/Arithmetic-v0", difficulty=2).unwrapped
    for task in tasks:
        problem = made.source.problem(task.data.split, task.data.index, 2)
        assert task.data.id == problem.id and task.data.answer == problem.answer
        assert [m.content for m in task.data.prompt] == [m["content"] for m in made.messages(problem)]
    again = to_verifiers(reasongym.make("reasongym/Arithmetic-v0", difficulty=2), num_tasks=4, seed=1)
    assert [task.data.id for task in again.taskset] == [task.data.id for task in tasks]


def test_to_verifiers_errors_name_the_problem() -> None:
    with pytest.raises(
        ConfigError, match="no module 'not_installed_pkg'.*pip install -e examples/verifiers_env"
    ):
        to_verifiers("reasongym/Arithmetic-v0", taskset_id="not_installed_pkg")
    with pytest.raises(ConfigError, match="no registered id"):
        to_verifiers(ReasoningEnv("reasongym.envs.procedural.arithmetic:source"))
    with pytest.raises(reasongym.errors.UnknownEnvError):
        to_verifiers("reasongym/Arithmetc-v0")
    endless = to_verifiers("reasongym/Arithmetic-v0", num_tasks=None)
    with pytest.raises(
        ConfigError, match="--env.taskset.num-tasks=None means 'the whole split', but this split"
    ):
        list(endless.taskset)


def _eval_config(folder: Path, server_url: str, model: str, env_id: str) -> Path:
    options = "\n".join(f"{key} = {value}" for key, value in LENGTH_TERMS.items())
    config = folder / f"{env_id.split('/')[1]}.toml"
    config.write_text(
        f'model = "{model}"\nnum_rollouts = 1\npush = false\noutput_dir = "{folder}"\n'
        f'[client]\nbase_url = "{server_url}"\napi_key_var = "REASONGYM_TEST_KEY"\n'
        "[sampling]\nmax_tokens = 24\n[select]\nlimit = 3\n"
        f'[env.taskset]\nid = "reasongym_verifiers"\nnum_tasks = 3\n'
        f'[env.taskset.task]\nenv_id = "{env_id}"\n[env.taskset.task.options]\n{options}\n'
    )
    return config


def _total(trace: dict) -> float:
    """verifiers' reward of a trace: the weighted sum of its named rewards."""
    return sum(reward["score"] * reward["weight"] for reward in trace["rewards"].values())


def _replayed_return(env_id: str, data: dict, texts: list[str]) -> float:
    """reasongym's own episode, independent of the export: reset onto the problem, step every reply."""
    env = reasongym.make(env_id, **LENGTH_TERMS).unwrapped
    env.reset(options={"split": data["split"], "index": data["index"]})
    total = 0.0
    for text in texts:
        _, reward, terminated, truncated, _ = env.step(text)
        total += reward
        if terminated or truncated:
            break
    return total


@pytest.mark.slow  # a real server (transformers serve) and a vf-eval run: 22 to 33 s each
@pytest.mark.parametrize("env_id", ["reasongym/Arithmetic-v0", "reasongym/ArithmeticRetry-v0"])
def test_vf_eval_against_transformers_serve_pays_reasongyms_rewards(tmp_path: Path, env_id: str) -> None:
    from benchmarks.harness.openai_server import running_server, save_tiny_model, transformers_cli

    vf_eval = Path(sys.executable).with_name("vf-eval")
    if transformers_cli() is None or not vf_eval.is_file():
        pytest.skip("`transformers serve` or `vf-eval` is not installed")
    model = save_tiny_model(tmp_path / "tiny")
    with running_server(model, tmp_path / "server.log") as server:
        config = _eval_config(tmp_path, server.base_url, server.model, env_id)
        environ = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO), str(EXAMPLE)]),
            "REASONGYM_TEST_KEY": "x",
        }
        run = subprocess.run(
            [str(vf_eval), "@", str(config), "--rich", "None"],
            env=environ,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == 0, run.stderr[-3000:]
    episodes = [
        json.loads(line) for path in tmp_path.glob("*/traces.jsonl") for line in path.read_text().splitlines()
    ]
    assert len(episodes) == 3 and all(episode["ok"] for episode in episodes), [e["errors"] for e in episodes]
    traces = [trace for episode in episodes for trace in episode["traces"]]
    assert len(traces) == 3
    for trace in traces:
        assert trace["ok"], trace["errors"]
        texts = [node["message"]["content"] for node in trace["nodes"] if node.get("sampled")]
        rewards = trace["rewards"]
        assert _total(trace) == pytest.approx(_replayed_return(env_id, trace["task"]["data"], texts))
        if env_id.endswith("Retry-v0"):
            assert set(rewards) == {"episode_return"} and len(texts) == 3  # three wrong attempts
        else:
            assert set(rewards) == {"correctness", "length"} and len(texts) == 1
    # The replies are sampled, so how long each is varies from run to run (a char tokenizer: up to 24
    # characters, fewer when the end token comes early); asserting that they differ failed in CI when all
    # three ran to 24. That some reply earns a non-zero reward is what keeps the replay check above from
    # passing on 0 == 0: a reply longer than the 10-character budget pays the length term.
    assert any(_total(trace) != 0 for trace in traces), [_total(trace) for trace in traces]
