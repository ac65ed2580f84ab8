"""``reasongym train ALGO``: a config file (TOML or YAML) plus flags, turned into a frozen config and a run.

The flags of each algorithm are generated from its config dataclass: one ``--field-name`` per field, its
help text the docstring under the field, its type from the annotation (``bool`` fields get
``--field``/``--no-field``; a nested dataclass field ``sft`` gets ``--sft.lr`` and so on). Precedence:
dataclass defaults, then the config file, then flags. A config file holds the same names (nested
dataclasses as tables), plus the run keys ``model``, ``env``, ``output_dir``, ``run_dir``,
``num_examples``, ``difficulty``. Resuming with ``--run-dir`` puts the run's saved config and run keys
(``config.json``, ``run.json``) beneath the file and the flags, and warns about each value they change. Only the CLI imports this module; it imports nothing from the CLI.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import importlib
import inspect
import json
import sys
import textwrap
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reasongym.errors import ConfigError

TRAINERS: dict[str, tuple[str, str, str]] = {
    "sft": ("reasongym.agents.sft", "SFTConfig", "train_sft"),
    "grpo": ("reasongym.agents.grpo", "GRPOConfig", "train_grpo"),
    "dapo": ("reasongym.agents.dapo", "DAPOConfig", "train_dapo"),
    "star": ("reasongym.agents.star", "STaRConfig", "train_star"),
}
"""Algorithm name -> (module, config class, train function)."""


class UsageError(Exception):
    """A command-line argument is wrong (exit code 2)."""


class ArgParser(argparse.ArgumentParser):
    """An ArgumentParser that raises UsageError instead of exiting, so ``main`` owns every exit code."""

    def error(self, message: str) -> typing.NoReturn:
        """Raise UsageError with the message and the usage line."""
        raise UsageError(f"{message}\n{self.format_usage().strip()}")


RUN_KEYS = ("model", "env", "output_dir", "run_dir", "num_examples", "difficulty")


def field_docs(cls: type) -> dict[str, str]:
    """The docstring written under each field of a dataclass, by field name (read from its source)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, body[1:], strict=False):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                    docs[node.target.id] = " ".join(str(after.value.value).split())
    return docs


def _converter(tp: Any) -> tuple[Any, dict[str, Any]]:
    """``(type function, extra add_argument kwargs)`` for a field type."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        convert, extra = _converter(inner[0] if len(inner) == 1 else str)
        return (lambda text: None if text.lower() in ("none", "null") else convert(text)), extra
    if origin is typing.Literal:
        return type(args[0]), {"choices": list(args)}
    if origin in (tuple, list):
        item = args[0] if args else str
        return _converter(item)[0], {"nargs": "*"}
    if tp is bool:
        return None, {"action": argparse.BooleanOptionalAction}
    if tp in (int, float, str):
        return tp, {}
    return str, {}


def add_config_arguments(parser: argparse.ArgumentParser, cls: type, prefix: str = "") -> None:
    """Add one flag per field of the dataclass ``cls`` (recursing into nested dataclass fields)."""
    hints, docs = typing.get_type_hints(cls), field_docs(cls)
    for item in dataclasses.fields(cls):
        tp = hints[item.name]
        dest = f"{prefix}{item.name}"
        if dataclasses.is_dataclass(tp):
            add_config_arguments(parser, tp, prefix=f"{dest}.")
            continue
        convert, extra = _converter(tp)
        default = item.default if item.default is not dataclasses.MISSING else "(required)"
        help_text = f"{docs.get(item.name, '')} (default: {default!r})".replace("%", "%%")
        flags = [f"--{dest.replace('_', '-')}"]
        kwargs: dict[str, Any] = {}
        if convert is not None:  # not a bool switch
            flags += [f"--{dest}"] if "_" in dest else []
            kwargs = {"type": convert, "metavar": _metavar(tp)}
        parser.add_argument(
            *flags, dest=f"cfg:{dest}", default=argparse.SUPPRESS, help=help_text, **kwargs, **extra
        )


def _metavar(tp: Any) -> str:
    names = [getattr(a, "__name__", str(a)) for a in (typing.get_args(tp) or (tp,)) if a is not type(None)]
    return "|".join(names).upper() if typing.get_origin(tp) is not typing.Literal else None


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A TOML (``.toml``) or YAML (``.yaml``/``.yml``) file as a dict.

    Raises:
        ConfigError: Missing file, unknown extension, a parse error, or a missing YAML/TOML reader.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                import tomli as tomllib  # type: ignore[no-redef]
            data = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            raise ConfigError(f"config file {str(path)!r} must end in .toml, .yaml or .yml")
    except ModuleNotFoundError as exc:
        raise ConfigError(f"reading {path.suffix} needs {exc.name}: pip install {exc.name}") from exc
    except ValueError as exc:  # tomllib.TOMLDecodeError and yaml.YAMLError's parse errors
        raise ConfigError(f"config file {str(path)!r} could not be parsed: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping of field names to values")
    return data


def build_config(cls: type, values: Mapping[str, Any], where: str = "config") -> Any:
    """Instantiate ``cls`` from nested ``values``; unknown names raise with the nearest field."""
    hints = typing.get_type_hints(cls)
    names = [item.name for item in dataclasses.fields(cls)]
    kwargs = {}
    for key, value in values.items():
        if key not in names:
            close = difflib.get_close_matches(key, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"{where}: unknown field {key!r} of {cls.__name__}{hint}; fields: {names}")
        tp = hints[key]
        if dataclasses.is_dataclass(tp):
            value = build_config(tp, value or {}, where=f"{where}.{key}")
        elif isinstance(value, list) and tuple in (
            typing.get_origin(tp),
            *map(typing.get_origin, typing.get_args(tp)),
        ):
            value = tuple(value)
        kwargs[key] = value
    try:
        return cls(**kwargs)
    except TypeError as exc:  # a required field missing
        raise ConfigError(f"{where}: {exc}") from exc


def _nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        *parents, leaf = dotted.split(".")
        node = nested
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return nested


def _merge(base: dict[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(dict(merged[key]), value)
        else:
            merged[key] = value
    return merged


def train_parser(algo: str, config_cls: type) -> argparse.ArgumentParser:
    """The parser of ``reasongym train ALGO``: run options, then the config's fields."""
    parser = ArgParser(
        prog=f"reasongym train {algo}",
        description=f"Train with {algo.upper()}. Precedence: config defaults < --config file < flags.",
    )
    run = parser.add_argument_group("run")
    run.add_argument("--config", help="TOML or YAML file of config fields (and run keys)")
    run.add_argument(
        "--model", help="'tiny' (random-init tiny model, char tokenizer) or a model/run folder or hub id"
    )
    run.add_argument("--env", help="environment id, e.g. reasongym/Arithmetic-v0")
    run.add_argument("--output-dir", help="parent folder of the new run folder (default ./runs)")
    run.add_argument(
        "--run-dir",
        help="an existing run folder to resume; its saved config, model and env are the defaults",
    )
    if algo == "sft":
        run.add_argument(
            "--num-examples", type=int, help="reference solutions taken from the train split (default 1000)"
        )
        run.add_argument("--difficulty", type=int, help="difficulty level of the examples")
    add_config_arguments(parser.add_argument_group(f"{config_cls.__name__} fields"), config_cls)
    return parser


def run_training(args: argparse.Namespace) -> dict[str, Any]:
    """Parse ``train ALGO ...``, build the config, model and run folder, and train; returns a summary.

    With ``--run-dir`` the run resumes: its saved config (``config.json``) and run keys (``run.json``)
    are the base, under the ``--config`` file and then the flags; each value that changes is warned
    about on stderr.
    """
    rest = list(args.rest)
    if not rest or rest[0] in ("-h", "--help"):
        raise UsageError(
            f"usage: reasongym train {{{','.join(TRAINERS)}}} [--config FILE] [flags]; "
            "`reasongym train ALGO --help` lists the flags"
        )
    algo = rest.pop(0)
    if algo not in TRAINERS:
        close = difflib.get_close_matches(algo, TRAINERS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown algorithm {algo!r}{hint}; choose one of {list(TRAINERS)}")
    module_name, config_name, train_name = TRAINERS[algo]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise RuntimeError(f"{module_name} is not available in this installation: {exc}") from exc
    config_cls, train = getattr(module, config_name), getattr(module, train_name)
    parsed = vars(train_parser(algo, config_cls).parse_args(rest))
    file_values = read_config_file(parsed["config"]) if parsed.get("config") else {}
    run_keys = [key for key in RUN_KEYS if key not in {item.name for item in dataclasses.fields(config_cls)}]
    run_values = {key: file_values.pop(key) for key in run_keys if key in file_values}
    run_values.update({key: parsed[key] for key in run_keys if parsed.get(key) is not None})
    flags = _nest({key[4:]: value for key, value in parsed.items() if key.startswith("cfg:")})
    saved_config: dict[str, Any] = {}
    if run_values.get("run_dir"):
        saved_config, run_values = _resume_base(algo, config_cls, run_values, file_values, flags)
    cfg = build_config(config_cls, _merge(_merge(saved_config, file_values), flags))
    if not run_values.get("env"):
        raise UsageError("--env is required (or `env = ...` in the config file)")
    return _train(algo, cfg, train, run_values)


def _resume_base(
    algo: str,
    config_cls: type,
    run_values: Mapping[str, Any],
    file_values: Mapping[str, Any],
    flags: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The saved config of the run folder being resumed, and the run keys with the saved ones beneath."""
    folder = Path(run_values["run_dir"])
    if not folder.is_dir():
        raise UsageError(
            f"--run-dir {str(folder)!r} does not exist: to start a new run use --output-dir (the parent "
            "folder of the new run folder); --run-dir resumes an existing run folder"
        )
    from reasongym.runs import RunDir

    run = RunDir(folder)
    saved_run = run.read_run_info()
    if saved_run.get("algo") not in (None, algo):
        raise UsageError(
            f"--run-dir {str(folder)!r} is a {saved_run['algo']} run; resume it with "
            f"`reasongym train {saved_run['algo']} --run-dir ...`, not {algo}"
        )
    saved_config = _saved_config(run.config_path, algo, config_cls)
    for key, value in run_values.items():
        if key in saved_run and saved_run[key] != value:
            _warn_change(folder, key, value, saved_run[key])
    merged_run = {key: value for key, value in saved_run.items() if key in RUN_KEYS and value is not None}
    merged_run.update(run_values)
    overrides = _flatten(_merge(dict(file_values), flags))
    saved_flat = _flatten(saved_config)
    for key, value in overrides.items():
        if key in saved_flat and _plain(saved_flat[key]) != _plain(value):
            _warn_change(folder, key, value, saved_flat[key])
    return saved_config, merged_run


def _saved_config(path: Path, algo: str, config_cls: type) -> dict[str, Any]:
    """The config a run folder was trained with; fields this version does not know are dropped."""
    if not path.is_file():
        return {}
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from exc
    if algo == "star" and isinstance(saved.get("star"), dict):  # STaR stores {"star": cfg, "env": ...}
        saved = saved["star"]
    known = {item.name for item in dataclasses.fields(config_cls)}
    dropped = sorted(set(saved) - known)
    if dropped:
        print(f"reasongym: warning: ignoring fields of {path} that {config_cls.__name__} lacks: {dropped}",
              file=sys.stderr)  # fmt: skip
    return {key: value for key, value in saved.items() if key in known}


def _flatten(nested: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in nested.items():
        if isinstance(value, Mapping):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _plain(value: Any) -> Any:
    """Tuples as lists, so that a flag's tuple equals the list JSON gave back."""
    return list(value) if isinstance(value, tuple) else value


def _warn_change(folder: Path, key: str, value: Any, saved: Any) -> None:
    print(
        f"reasongym: warning: resuming {str(folder)!r} with {key}={value!r}; the run was started with "
        f"{key}={saved!r}",
        file=sys.stderr,
    )


def _train(algo: str, cfg: Any, train: Any, run: Mapping[str, Any]) -> dict[str, Any]:
    from reasongym.envs import make, spec
    from reasongym.runs import RunDir

    env_id = spec(run["env"]).id  # unknown ids fail here, before any model is built
    resuming = RunDir(Path(run["run_dir"])) if run.get("run_dir") else None
    if resuming is not None and not run.get("model"):
        # Defaulting to a fresh tiny model would load the checkpoint into a model it may not come from.
        raise UsageError(
            f"--run-dir {str(resuming.path)!r} has no run.json naming its model; pass --model "
            "(the model the run was started from, e.g. 'tiny')"
        )
    model_name = run.get("model") or "tiny"
    model, tokenizer = load_training_model(model_name, seed=getattr(cfg, "seed", 0))
    folder = resuming or RunDir.create(
        run.get("output_dir") or "runs", algo=algo, env=env_id, seed=getattr(cfg, "seed", 0)
    )
    info = {"algo": algo, "model": model_name, "env": env_id}
    if algo == "sft":
        info.update(num_examples=int(run.get("num_examples") or 1000), difficulty=run.get("difficulty"))
    folder.write_run_info(info)
    tokenizer.save_pretrained(
        folder.path
    )  # so that `reasongym eval RUN_DIR` finds it next to the checkpoints
    if algo == "sft":
        from reasongym.agents.sft import sft_pairs_from_env

        env_kwargs = {"difficulty": info["difficulty"]} if info["difficulty"] is not None else {}
        pairs = sft_pairs_from_env(make(env_id, **env_kwargs), info["num_examples"], tokenizer=tokenizer)
        result = train(cfg, model, tokenizer, pairs, run_dir=folder.path)
    else:
        result = train(cfg, model, tokenizer, env_id, run_dir=folder.path)
    return {"algo": algo, "env": env_id, "run_dir": str(folder.path), **result_summary(result)}


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
        from reasongym.models import make_char_tokenizer, make_tiny_model

        tokenizer = make_char_tokenizer()
        return make_tiny_model(tokenizer, seed=seed), tokenizer
    from reasongym.evaluation.loading import load_model

    return load_model(name)
