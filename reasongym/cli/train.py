"""``reasongym train ALGO``: a preset, a resumed run, a config file and flags, turned into a run.

Each algorithm takes configs by section (`reasongym.agents.presets.SECTIONS`): ``run`` (`RunConfig`),
``rollout`` (`RolloutConfig`, RL and STaR) and the algorithm's own. Their flags are generated from the
config classes by tyro (`reasongym.cli.flags`), one per field, grouped by section in ``--help``; field names
are unique across an algorithm's sections, so a flag needs no section prefix (``--max-steps``,
``--group-size``, ``--clip-eps``; nested configs keep theirs: ``--lora.rank``, STaR's ``--sft.batch-size``).
A config file holds the same names, flat or in section tables (``[run]``, ``[rollout]``, ``[grpo]``), plus
the keys of `TrainJob` (``model``, ``env``, ``preset``, ``output_dir``, ``run_dir`` ...).

Precedence: the preset (``--preset``; ``tiny`` when ``--model tiny``, else ``default``), then a resumed
run's saved configs, then the config file, then flags. The first three are merged into the defaults tyro
shows in ``--help`` and parses the flags on; ``--run-dir`` resumes a run folder (its ``config.json`` and
``run.json`` are the base), and every value that ends up different from the run's is announced on stderr.
Only the CLI imports this module.

Under ``torchrun --nproc-per-node N -m reasongym train ...`` or ``accelerate launch -m reasongym train ...``
every process joins the process group first (`reasongym.distributed.init_distributed`) and puts its model
on its own device; rank 0 creates the one run folder and the others learn its path.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reasongym.cli.args import UsageError, flatten, read_config_file
from reasongym.cli.flags import flat_section, parse, trl_names
from reasongym.cli.inputs import (
    distill_teacher,
    env_options,
    load_training_model,
    sft_pairs,
    teacher,
    training_env,
)
from reasongym.cli.jobs import JOBS, TrainJob
from reasongym.cli.resume import resume_base
from reasongym.cli.summary import (
    eval_split,
    result_summary,
    step_cost,
    stop_at,
    summary_line,
    with_resume_hint,
)
from reasongym.generation.engines import check_engine_available

ALGOS = tuple(JOBS)
SECTION_TITLES = {
    "job": "what to train, and where",
    "run": "run: steps, optimizer, cadence, data, logging (RunConfig, every trainer)",
    "rollout": "rollout: how completions are sampled (RolloutConfig)",
}
TRAIN_USAGE = (
    f"usage: reasongym train {{{','.join(ALGOS)}}} [--preset NAME] [--config FILE] [flags]\n"
    "`reasongym train ALGO --help` lists every flag, grouped by config section"
)


def run_training(argv: list[str]) -> dict[str, Any]:
    """Parse ``train ALGO ...``, build the configs, model and run folder, and train; returns a summary."""
    if not argv or argv[0] in ("-h", "--help"):
        if argv:
            print(TRAIN_USAGE)
            return {}
        raise UsageError(TRAIN_USAGE)
    algo, rest = argv[0], argv[1:]
    if algo not in ALGOS:
        close = difflib.get_close_matches(algo, ALGOS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown algorithm {algo!r}{hint}; choose one of {list(ALGOS)}")
    layers = _Layers.read(algo, rest)
    parsed = parse(
        train_command(algo),
        rest,
        default=layers.default,
        prog=f"reasongym train {algo}",
        description=f"Train with {algo.upper()}. Precedence: preset < resumed run < --config file < flags.",
        nested=_nested(algo),
        hints=preset_hints(algo, layers.preset),
        aliases=trl_names(algo),
    )
    job = parsed.job
    if not job.env:
        raise UsageError("--env is required (or `env = ...` in the config file)")
    if algo == "distill" and not getattr(job, "teacher", None):
        raise UsageError(
            "--teacher is required for distill (a model or run folder, a .gguf file or a hub id, with the "
            "student's tokenizer; e.g. a run trained with `reasongym train grpo`)"
        )
    configs = {section: getattr(parsed, section) for section in _sections(algo)}
    layers.announce(job, configs)
    return _train(algo, configs, job)


def train_command(algo: str) -> type:
    """``Train<ALGO>``: the job keys, then one group of flat flags per config section."""
    from reasongym.agents.algorithms import config_class

    fields: list[tuple[str, Any]] = [("job", flat_section(JOBS[algo], SECTION_TITLES["job"]))]
    for section in _sections(algo):
        cls = config_class(algo, section)
        title = SECTION_TITLES.get(section, f"{section}: {algo.upper()}'s own ({cls.__name__})")
        fields.append((section, flat_section(cls, title)))
    return dataclasses.make_dataclass(f"Train{algo.upper()}", fields, frozen=True)


def preset_hints(algo: str, active: str) -> dict[str, str]:
    """Flag name -> ``"; preset tiny: 72"``: the ``default`` and ``tiny`` presets' values where they differ
    from the preset in use, for the defaults ``--help`` shows."""
    from reasongym.agents.algorithms import preset_configs
    from reasongym.evaluation.records import plain

    values = {
        name: {
            key: value
            for section, cfg in preset_configs(name, algo).items()
            for key, value in flatten(plain(dataclasses.asdict(cfg))).items()
        }
        for name in {"default", "tiny", active}
    }
    hints: dict[str, str] = {}
    for key, value in values[active].items():
        others = [
            f"preset {name}: {values[name][key]!r}"
            for name in ("default", "tiny")
            if name != active and values[name][key] != value
        ]
        hints[key] = "".join(f"; {text}" for text in others)
    return hints


def choose_preset(job: Mapping[str, Any]) -> tuple[str, str | None]:
    """``--preset`` (or the resumed run's) if given, else the preset of the run folder given as ``--model``,
    else ``tiny`` for ``--model tiny``, else ``default``; with the reason to announce when not explicit."""
    if job.get("preset"):
        return str(job["preset"]), None
    model = str(job.get("model") or "tiny")
    from_run = None
    if Path(model).is_dir():  # only a folder can be a run (its checks load torch: --model tiny needs none)
        from reasongym.policy.checkpoints import follow_latest
        from reasongym.runs.folder import RunDir

        from_run = RunDir(follow_latest(Path(model))).read_run_info().get("preset")  # runs/sft: its newest
    chosen = from_run or ("tiny" if model == "tiny" else "default")
    return chosen, f"the preset of {model}" if from_run else f"--model {model}"


@dataclass
class _Layers:
    """The preset, the resumed run and the config file, merged: the defaults the flags are parsed on."""

    algo: str
    preset: str
    default: Any
    saved: dict[str, Any]
    saved_job: dict[str, Any]
    reason: str | None
    missing: list[str] = dataclasses.field(default_factory=list)
    """``section.field`` names the resumed run's ``config.json`` lacks (announced with their values)."""

    @classmethod
    def read(cls, algo: str, argv: list[str]) -> _Layers:
        """Peek at ``--config``, ``--model``, ``--preset`` and ``--run-dir``, then merge the layers beneath the flags.

        Raises:
            UsageError: A run folder that cannot be resumed, or one of another algorithm.
            ConfigError: A config file that cannot be read, an unknown field (naming the nearest), a value
                a config refuses.
        """
        from reasongym.agents.algorithms import config_class, sort_fields
        from reasongym.agents.config import build
        from reasongym.agents.presets import merge_values, preset_values

        peek = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        for flag in ("--config", "--model", "--preset", "--run-dir"):
            peek.add_argument(flag)
        flags = {
            key: value for key, value in vars(peek.parse_known_args(argv)[0]).items() if value is not None
        }
        where = f"config file {flags.get('config')}"
        file_values = read_config_file(flags["config"]) if flags.get("config") else {}
        names = [item.name for item in dataclasses.fields(JOBS[algo])]
        file_job = {key: file_values.pop(key) for key in names if key in file_values}
        run_dir = flags.get("run_dir") or file_job.get("run_dir")
        saved, saved_job, missing = resume_base(algo, Path(run_dir)) if run_dir else ({}, {}, [])
        job = {key: value for key, value in saved_job.items() if key in names and value is not None}
        job.update({**file_job, **flags})
        preset, reason = choose_preset(job)
        values = merge_values(
            merge_values(preset_values(preset, algo), saved), sort_fields(algo, file_values, where=where)
        )
        configs = {s: build(config_class(algo, s), values.get(s, {}), where=s) for s in _sections(algo)}
        default = train_command(algo)(job=JOBS[algo](**{**job, "preset": preset}), **configs)
        return cls(algo, preset, default, saved, saved_job, reason, missing)

    def announce(self, job: TrainJob, configs: Mapping[str, Any]) -> None:
        """Say on stderr which preset was chosen (when not explicit) and every value that differs from the run
        being resumed."""
        if (
            self.reason and os.environ.get("RANK", "0") == "0"
        ):  # once under torchrun (its group is not up yet)
            print(
                f"reasongym: using preset {self.preset!r} ({self.reason}; --preset changes it)",
                file=sys.stderr,
            )
        if not self.saved_job and not self.saved:
            return
        from reasongym.evaluation.records import plain

        folder = job.run_dir
        for key, value in dataclasses.asdict(job).items():
            if key in self.saved_job and key not in ("run_dir", "config") and self.saved_job[key] != value:
                _warn_change(folder, key, value, self.saved_job[key])
        now = flatten({section: plain(dataclasses.asdict(cfg)) for section, cfg in configs.items()})
        if self.missing:
            values = ", ".join(f"{key}={now[key]!r}" if key in now else key for key in self.missing)
            print(
                f"reasongym: warning: {Path(str(folder)) / 'config.json'} lacks {len(self.missing)} field"
                f"{'s' * (len(self.missing) > 1)} (a run of an older reasongym?), which now take the values of "
                f"preset {self.preset!r}, the config file or flags: {values}",
                file=sys.stderr,
            )
        for key, value in now.items():
            saved = flatten(self.saved).get(key, value)
            if saved != value:
                _warn_change(folder, key, value, saved)


def _sections(algo: str) -> tuple[str, ...]:
    from reasongym.agents.presets import SECTIONS

    return SECTIONS[algo]


def _nested(algo: str) -> dict[type, str]:
    """Config classes nested inside a section, by the prefix their flags keep."""
    from reasongym.agents.algorithm_configs import ImportanceSamplingConfig, SFTConfig
    from reasongym.agents.config import LoRAConfig
    from reasongym.generation.engines import VLLMSettings

    nested = {LoRAConfig: "lora", VLLMSettings: "vllm", ImportanceSamplingConfig: "importance_sampling"}
    return {**nested, **({SFTConfig: "sft"} if algo == "star" else {})}


def _warn_change(folder: Any, key: str, value: Any, saved: Any) -> None:
    print(
        f"reasongym: warning: resuming {str(folder)!r} with {key}={value!r}; the run was started with "
        f"{key}={saved!r}",
        file=sys.stderr,
    )


def _train(algo: str, configs: Mapping[str, Any], job: TrainJob) -> dict[str, Any]:
    """Build the model and the run folder (rank 0), train, and summarize; a start that fails (or is
    interrupted) before anything is saved removes the run folder it made."""
    from reasongym.envs import spec

    run_keys = dataclasses.asdict(job)
    env_id = spec(run_keys["env"]).id  # unknown ids fail here, before torch loads or any model is built
    from reasongym import distributed
    from reasongym.errors import TrainingInterrupted
    from reasongym.runs.folder import RunDir, check_root
    from reasongym.runs.lifecycle import job_folder

    resuming = RunDir(Path(run_keys["run_dir"])) if run_keys.get("run_dir") else None
    if resuming is not None and not run_keys.get("model"):
        # Defaulting to a fresh tiny model would load the checkpoint into a model it may not come from.
        raise UsageError(
            f"--run-dir {str(resuming.path)!r} has no run.json naming its model; pass --model "
            "(the model the run was started from, e.g. 'tiny')"
        )
    run_cfg = configs["run"]
    if resuming is None:  # a read-only --output-dir or a missing split fails before the model loads
        check_root(run_keys["output_dir"])
    held_out = eval_split(env_id, run_cfg)
    model_name = str(run_keys.get("model") or "tiny")
    process = distributed.init_distributed(timeout_s=job.collective_timeout)  # one process: nothing to join
    if "rollout" in configs:  # an engine that is not installed fails here, before any model or folder
        check_engine_available(configs["rollout"].engine)  # which engine samples is decided once, in the run
    info = {"algo": algo, "model": model_name, "env": env_id, "preset": run_keys["preset"]}
    if algo == "sft":
        info["num_examples"] = int(run_keys["num_examples"])
    if algo == "distill":
        info["teacher"] = str(run_keys["teacher"])
    info.update(env_options(run_keys))  # a --verify-timeout is kept in run.json: --run-dir resumes with it
    try:
        with job_folder(
            run_keys["output_dir"],
            resume=resuming,
            name=(algo, env_id, run_cfg.seed),
            run_info=info,
            info=process,
        ) as run:  # locked before the model loads: a second trainer on the folder is refused at once
            model, tokenizer = load_training_model(model_name, seed=run_cfg.seed)
            model.to(process.device)
            run.keep_tokenizer(tokenizer)
            cost = step_cost(algo, configs, model_name, process.device)
            if cost and process.is_main:
                print(cost, file=sys.stderr)
            result = _run(algo, configs, run_keys, (model, tokenizer), env_id, run.folder)
    except TrainingInterrupted as failure:
        with_resume_hint(algo, failure)
        raise
    return {
        "algo": algo,
        "env": env_id,
        "run_dir": str(run.path),
        **result_summary(result),
        "summary": summary_line(algo, result, run_cfg, held_out, stop_at(configs)),
    }


def _run(
    algo: str,
    configs: Mapping[str, Any],
    run_keys: Mapping[str, Any],
    policy: tuple[Any, Any],
    env_id: str,
    folder: Any,
) -> Any:
    """The algorithm's trainer on the model, in the run folder."""
    from reasongym.agents.algorithms import ALGORITHMS

    (model, tokenizer), run_cfg, train = policy, configs["run"], ALGORITHMS[algo].train
    options = env_options(run_keys)
    if algo == "sft":
        pairs, env = sft_pairs(env_id, int(run_keys["num_examples"]), run_cfg, tokenizer, options)
        return train(configs["sft"], model, tokenizer, pairs, run=run_cfg, run_dir=folder.path, env=env)
    extra = {"rationale_generator": teacher(run_keys)} if algo == "star" else {}
    if algo == "distill":
        extra = distill_teacher(run_keys)
    return train(
        configs[algo],
        model,
        tokenizer,
        training_env(env_id, options),
        run=run_cfg,
        rollout=configs["rollout"],
        run_dir=folder.path,
        **extra,
    )
