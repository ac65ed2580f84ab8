"""``reasongym train ALGO``: a preset, a config file and flags, turned into the trainer's configs and a run.

Each algorithm takes configs by section (`reasongym.agents.presets.SECTIONS`): ``run`` (`RunConfig`),
``rollout`` (`RolloutConfig`, RL and STaR) and the algorithm's own. Flags are generated from them, one per
field, grouped by section in ``--help``; field names are unique across an algorithm's sections, so a flag
needs no section prefix (``--max-steps``, ``--group-size``, ``--clip-eps``; STaR's nested fine-tuning
config is ``--sft.batch-size``). A config file holds the same names, flat or in section tables
(``[run]``, ``[rollout]``, ``[grpo]``), plus the run keys ``model``, ``env``, ``preset``, ``output_dir``,
``run_dir`` and (SFT) ``num_examples``.

Precedence: the preset (``--preset``; ``tiny`` when ``--model tiny``, else ``default``), then a resumed
run's saved configs, then the config file, then flags. ``--run-dir`` resumes a run folder: its saved
configs and run keys (``config.json``, ``run.json``) are the base, and every value the file or flags change
is warned about on stderr. Only the CLI imports this module.

Under ``torchrun --nproc-per-node N -m reasongym train ...`` or ``accelerate launch -m reasongym train ...``
every process joins the process group first (`reasongym.agents.runtime.distributed.init_distributed`) and
puts its model on its own device; rank 0 creates the one run folder and the others learn its path.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reasongym.cli.args import (
    ArgParser,
    UsageError,
    add_config_arguments,
    config_fields,
    flatten,
    merge,
    nest,
    read_config_file,
)
from reasongym.errors import ConfigError

TRAINERS: dict[str, tuple[str, str]] = {
    "sft": ("reasongym.agents.sft", "train_sft"),
    "grpo": ("reasongym.agents.grpo", "train_grpo"),
    "dapo": ("reasongym.agents.dapo", "train_dapo"),
    "star": ("reasongym.agents.star", "train_star"),
}
"""Algorithm name -> (module, train function)."""
RUN_KEYS = (
    "model",
    "env",
    "preset",
    "output_dir",
    "run_dir",
    "num_examples",
    "rationale_base_url",
    "rationale_model",
)
"""Keys of a config file (and ``run.json``) that choose what to train rather than how."""
SECTION_TITLES = {
    "run": "run: steps, optimizer, cadence, data, logging (RunConfig, every trainer)",
    "rollout": "rollout: how completions are sampled (RolloutConfig)",
}
TRAIN_USAGE = (
    f"usage: reasongym train {{{','.join(TRAINERS)}}} [--preset NAME] [--config FILE] [flags]\n"
    "`reasongym train ALGO --help` lists every flag, grouped by config section"
)


def train_parser(algo: str) -> argparse.ArgumentParser:
    """The parser of ``reasongym train ALGO``: run options, then one group of flags per config section."""
    from reasongym.agents.presets import PRESETS, SECTIONS, config_class, preset_values

    parser = ArgParser(
        prog=f"reasongym train {algo}",
        description=f"Train with {algo.upper()}. Precedence: preset < resumed run < --config file < flags.",
    )
    run = parser.add_argument_group("what to train")
    run.add_argument("--config", help="TOML or YAML file of config fields (and run keys)")
    run.add_argument(
        "--model",
        help="'tiny' (random-init tiny model, char tokenizer), a model or run folder, a .gguf file, or a hub id",
    )
    run.add_argument("--env", help="environment id, e.g. reasongym/Arithmetic-v0")
    run.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="named settings (default: tiny for --model tiny, else default)",
    )
    run.add_argument("--output-dir", help="parent folder of the new run folder (default ./runs)")
    run.add_argument("--run-dir", help="an existing run folder to resume; its saved configs are the base")
    if algo == "sft":
        run.add_argument(
            "--num-examples", type=int, help="reference solutions taken from the train split (default 1000)"
        )
    if algo == "star":
        run.add_argument(
            "--rationale-base-url",
            help="draw the rationales from a served model at this OpenAI-compatible URL",
        )
        run.add_argument("--rationale-model", help="the served model's name (with --rationale-base-url)")
    presets = {name: flatten(preset_values(name, algo)) for name in ("default", "tiny")}
    for section in SECTIONS[algo]:
        cls = config_class(algo, section)
        title = SECTION_TITLES.get(section, f"{section}: {algo.upper()}'s own ({cls.__name__})")
        group = parser.add_argument_group(title)
        class_defaults = {name: default for name, _, default, _ in config_fields(cls)}

        def describe(dotted: str, section: str = section, defaults: dict = class_defaults) -> str:
            values = {name: presets[name].get(f"{section}.{dotted}", defaults[dotted]) for name in presets}
            if values["tiny"] == values["default"]:
                return f"default: {values['default']!r}"
            return f"default: {values['default']!r}; preset tiny: {values['tiny']!r}"

        add_config_arguments(group, cls, section, describe)
    return parser


def run_training(args: argparse.Namespace) -> dict[str, Any]:
    """Parse ``train ALGO ...``, build the configs, model and run folder, and train; returns a summary."""
    rest = list(args.rest)
    if not rest or rest[0] in ("-h", "--help"):
        if rest:
            print(TRAIN_USAGE)
            return {}
        raise UsageError(TRAIN_USAGE)
    algo = rest.pop(0)
    if algo not in TRAINERS:
        close = difflib.get_close_matches(algo, TRAINERS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown algorithm {algo!r}{hint}; choose one of {list(TRAINERS)}")
    parsed = vars(train_parser(algo).parse_args(rest))
    file_values = read_config_file(parsed["config"]) if parsed.get("config") else {}
    run_values = {key: file_values.pop(key) for key in RUN_KEYS if key in file_values}
    run_values.update({key: parsed[key] for key in RUN_KEYS if parsed.get(key) is not None})
    from reasongym.agents.presets import preset_configs, sort_fields

    file_sections = sort_fields(algo, file_values, where=f"config file {parsed.get('config')}")
    flags = nest(
        {key[4:].replace(":", ".", 1): value for key, value in parsed.items() if key.startswith("cfg:")}
    )
    saved: dict[str, Any] = {}
    if run_values.get("run_dir"):
        saved, run_values = _resume_base(algo, run_values, merge(file_sections, flags))
    run_values["preset"], reason = choose_preset(run_values)
    configs = preset_configs(run_values["preset"], algo, merge(merge(saved, file_sections), flags))
    if not run_values.get("env"):
        raise UsageError("--env is required (or `env = ...` in the config file)")
    if reason:
        print(
            f"reasongym: using preset {run_values['preset']!r} ({reason}; --preset changes it)",
            file=sys.stderr,
        )
    return _train(algo, configs, run_values)


def choose_preset(run_values: Mapping[str, Any]) -> tuple[str, str | None]:
    """``--preset`` (or the resumed run's) if given, else the preset of the run folder given as ``--model``,
    else ``tiny`` for ``--model tiny``, else ``default``; with the reason to announce when not explicit."""
    if run_values.get("preset"):
        return str(run_values["preset"]), None
    model = str(run_values.get("model") or "tiny")
    from reasongym.runs import RunDir

    from_run = RunDir(Path(model)).read_run_info().get("preset") if Path(model).is_dir() else None
    chosen = from_run or ("tiny" if model == "tiny" else "default")
    return chosen, f"the preset of {model}" if from_run else f"--model {model}"


def _resume_base(
    algo: str, run_values: Mapping[str, Any], overrides: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The saved configs of the run folder being resumed, and the run keys with the saved ones beneath."""
    from reasongym.runs import RunDir

    folder = Path(run_values["run_dir"])
    if not folder.is_dir():
        raise UsageError(
            f"--run-dir {str(folder)!r} is not an existing folder: to start a new run use --output-dir (the "
            "parent folder of the new run folder); --run-dir resumes an existing run folder"
        )
    run = RunDir(folder)
    saved_run = run.read_run_info()
    if saved_run.get("algo") not in (None, algo):
        raise UsageError(
            f"--run-dir {str(folder)!r} is a {saved_run['algo']} run; resume it with "
            f"`reasongym train {saved_run['algo']} --run-dir ...`, not {algo}"
        )
    saved = _saved_configs(run.config_path, algo)
    for key, value in run_values.items():
        if key in saved_run and key != "run_dir" and saved_run[key] != value:
            _warn_change(folder, key, value, saved_run[key])
    merged_run = {key: value for key, value in saved_run.items() if key in RUN_KEYS and value is not None}
    merged_run.update(run_values)
    saved_flat = flatten(saved)
    for key, value in flatten(overrides).items():
        if key in saved_flat and _plain(saved_flat[key]) != _plain(value):
            _warn_change(folder, key, value, saved_flat[key])
    return saved, merged_run


def _saved_configs(path: Path, algo: str) -> dict[str, Any]:
    """The configs a run folder was trained with, by section; fields this version lacks are dropped."""
    from reasongym.agents.presets import SECTIONS, config_class

    if not path.is_file():
        return {}
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    sections = {}
    for section in SECTIONS[algo]:
        values = saved.get(section) if isinstance(saved, dict) else None
        if not isinstance(values, dict):
            continue
        known = {dotted.split(".")[0] for dotted, *_ in config_fields(config_class(algo, section))}
        dropped = sorted(set(values) - known)
        if dropped:
            print(f"reasongym: warning: ignoring fields of {path} [{section}] that this version lacks: {dropped}",
                  file=sys.stderr)  # fmt: skip
        sections[section] = {key: value for key, value in values.items() if key in known}
    return sections


def _plain(value: Any) -> Any:
    """Tuples as lists, so that a flag's tuple equals the list JSON gave back."""
    return list(value) if isinstance(value, tuple) else value


def _warn_change(folder: Path, key: str, value: Any, saved: Any) -> None:
    print(
        f"reasongym: warning: resuming {str(folder)!r} with {key}={value!r}; the run was started with "
        f"{key}={saved!r}",
        file=sys.stderr,
    )


def _train(algo: str, configs: Mapping[str, Any], run_keys: Mapping[str, Any]) -> dict[str, Any]:
    from reasongym.agents.runtime import distributed
    from reasongym.envs import spec
    from reasongym.runs import RunDir

    env_id = spec(run_keys["env"]).id  # unknown ids fail here, before any model is built
    resuming = RunDir(Path(run_keys["run_dir"])) if run_keys.get("run_dir") else None
    if resuming is not None and not run_keys.get("model"):
        # Defaulting to a fresh tiny model would load the checkpoint into a model it may not come from.
        raise UsageError(
            f"--run-dir {str(resuming.path)!r} has no run.json naming its model; pass --model "
            "(the model the run was started from, e.g. 'tiny')"
        )
    run_cfg = configs["run"]
    model_name = str(run_keys.get("model") or "tiny")
    process = distributed.init_distributed()  # one process: nothing to join
    model, tokenizer = load_training_model(model_name, seed=run_cfg.seed)
    model.to(process.device)
    info = {"algo": algo, "model": model_name, "env": env_id, "preset": run_keys["preset"]}
    if algo == "sft":
        info["num_examples"] = int(run_keys.get("num_examples") or 1000)

    def open_folder() -> RunDir:
        created = resuming or RunDir.create(
            run_keys.get("output_dir") or "runs", algo=algo, env=env_id, seed=run_cfg.seed
        )
        created.write_run_info(info)
        tokenizer.save_pretrained(created.path)  # `reasongym eval RUN_DIR` finds it next to the checkpoints
        return created

    folder = distributed.on_main(open_folder, process)
    module_name, train_name = TRAINERS[algo]
    train = getattr(importlib.import_module(module_name), train_name)
    if algo == "sft":
        pairs, env = _sft_pairs(env_id, info["num_examples"], run_cfg, tokenizer)
        result = train(configs["sft"], model, tokenizer, pairs, run=run_cfg, run_dir=folder.path, env=env)
    else:
        extra = {"rationale_generator": _teacher(run_keys)} if algo == "star" else {}
        result = train(configs[algo], model, tokenizer, env_id, run=run_cfg, rollout=configs["rollout"],
                       run_dir=folder.path, **extra)  # fmt: skip
    return {"algo": algo, "env": env_id, "run_dir": str(folder.path), **result_summary(result)}


def _teacher(run_keys: Mapping[str, Any]) -> Any:
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


def _sft_pairs(env_id: str, count: int, run: Any, tokenizer: Any) -> tuple[list[tuple[str, str]], Any]:
    """Reference solutions of the run's training split (and difficulty) as SFT pairs, and the env."""
    from reasongym.agents.config import resolve_splits
    from reasongym.agents.sft import sft_pairs_from_env
    from reasongym.envs import make

    env = make(env_id, difficulty=run.difficulty) if run.difficulty is not None else make(env_id)
    split, _ = resolve_splits(run, env)
    return sft_pairs_from_env(env, count, split=split, tokenizer=tokenizer), env


def result_summary(result: Any) -> dict[str, Any]:
    """Steps, the last step's numeric metrics (SFT, GRPO, DAPO), and STaR's iterations and accuracies."""
    history = getattr(result, "history", ()) or ()
    summary: dict[str, Any] = {
        "steps": getattr(result, "steps", None),
        "last": {k: v for k, v in (history[-1] if history else {}).items() if isinstance(v, int | float)},
    }
    for name in ("initial_accuracy", "final_accuracy"):  # STaR
        if isinstance(getattr(result, name, None), int | float):
            summary[name] = getattr(result, name)
    if hasattr(result, "iterations"):
        summary["iterations"] = len(result.iterations)
    return summary


def load_training_model(name: str, *, seed: int = 0) -> tuple[Any, Any]:
    """``"tiny"``: the random-init tiny model over the character tokenizer; else a model, run or checkpoint."""
    if name == "tiny":
        from reasongym.models import tiny_policy

        return tiny_policy(seed)
    from reasongym.models import load_policy

    return load_policy(name)
