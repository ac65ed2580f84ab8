"""What a trainer is given besides its configs: the model (the tiny one or a loaded one), SFT's pairs of
reference solutions, and STaR's served rationale model.

`reasongym.cli.train` builds a run from these; they are apart from it so that it reads as flags to run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reasongym.cli.args import UsageError


def teacher(run_keys: Mapping[str, Any]) -> Any:
    """STaR's served rationale model (``--rationale-base-url``, ``--rationale-model``), or None."""
    url, name = run_keys.get("rationale_base_url"), run_keys.get("rationale_model")
    if url is None and name is None:
        return None
    if url is None or name is None:
        raise UsageError(
            "--rationale-base-url and --rationale-model go together (the server and its model name)"
        )
    from reasongym.generation.served import OpenAIGenerator, ServedModelConfig

    return OpenAIGenerator(ServedModelConfig(model=name, base_url=url))


def env_options(run_keys: Mapping[str, Any]) -> dict[str, Any]:
    """The environment options a training job sets: a --verify-timeout other than the default, else none."""
    from reasongym.verifiers.base import VERIFY_TIMEOUT_S

    timeout = run_keys.get("verify_timeout", VERIFY_TIMEOUT_S)
    return {"verify_timeout": timeout} if timeout != VERIFY_TIMEOUT_S else {}


def training_env(env_id: str, options: Mapping[str, Any]) -> Any:
    """The id for the trainer to make the environment from, or the environment made here with ``options``."""
    from reasongym.envs import make

    return make(env_id, **options) if options else env_id


def sft_pairs(
    env_id: str, count: int, run: Any, tokenizer: Any, env_kwargs: Mapping[str, Any] | None = None
) -> tuple[list[tuple[str, str]], Any]:
    """Reference solutions of the run's training split (and difficulty) as SFT pairs, and the env
    (made with ``env_kwargs``, e.g. a verify_timeout)."""
    from reasongym.agents.config import resolve_splits
    from reasongym.agents.sft import sft_pairs_from_env
    from reasongym.envs import make

    options = dict(env_kwargs or {})
    if run.difficulty is not None:
        options["difficulty"] = run.difficulty
    env = make(env_id, **options)
    split, _ = resolve_splits(run, env)
    return sft_pairs_from_env(env, count, split=split, tokenizer=tokenizer), env


def load_training_model(name: str, *, seed: int = 0) -> tuple[Any, Any]:
    """``"tiny"``: the random-init tiny model over the character tokenizer; else a model, run or checkpoint."""
    if name == "tiny":
        from reasongym.policy.tiny import tiny_policy

        return tiny_policy(seed)
    from reasongym.policy.loading import load_policy

    return load_policy(name)


def distill_teacher(run_keys: Mapping[str, Any]) -> dict[str, Any]:
    """`train_distill`'s teacher arguments: a served teacher (``--teacher-base-url``), or the model
    ``--teacher`` names with its tokenizer."""
    name, url = str(run_keys["teacher"]), run_keys.get("teacher_base_url")
    if url is None:
        teacher, teacher_tokenizer = load_training_model(name)
        return {"teacher": teacher, "teacher_tokenizer": teacher_tokenizer}
    from reasongym.agents.teacher import ServedTeacher
    from reasongym.generation.served import OpenAIGenerator, ServedModelConfig

    return {
        "teacher": ServedTeacher(
            OpenAIGenerator(ServedModelConfig(model=name, base_url=url, endpoint="completions"))
        )
    }
