"""``reasongym train ALGO``: a config file (TOML or YAML) plus flags, turned into a frozen config and a run.

The flags of each algorithm are generated from its config dataclass: one ``--field-name`` per field, its
help text the docstring under the field, its type from the annotation (``bool`` fields get
``--field``/``--no-field``; a nested dataclass field ``sft`` gets ``--sft.lr`` and so on). Precedence:
dataclass defaults, then the config file, then flags. A config file holds the same names (nested
dataclasses as tables), plus the run keys ``model``, ``env``, ``output_dir``, ``run_dir``,
``num_examples``, ``difficulty``. Only the CLI imports this module; it imports nothing from the CLI.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import importlib
import inspect
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
    run.add_argument("--run-dir", help="an existing run folder to resume (instead of a new one)")
    if algo == "sft":
        run.add_argument(
            "--num-examples", type=int, help="reference solutions taken from the train split (default 1000)"
        )
        run.add_argument("--difficulty", type=int, help="difficulty level of the examples")
    add_config_arguments(parser.add_argument_group(f"{config_cls.__name__} fields"), config_cls)
    return parser


def run_training(args: argparse.Namespace) -> dict[str, Any]:
    """Parse ``train ALGO ...``, build the config, model and run folder, and train; returns a summary."""
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
    cfg = build_config(config_cls, _merge(file_values, flags))
    if not run_values.get("env"):
        raise UsageError("--env is required (or `env = ...` in the config file)")
    return _train(algo, cfg, train, run_values)


def _train(algo: str, cfg: Any, train: Any, run: Mapping[str, Any]) -> dict[str, Any]:
    from reasongym.agents.runs import RunDir
    from reasongym.envs import make, spec

    env_id = spec(run["env"]).id  # unknown ids fail here, before any model is built
    model, tokenizer = load_training_model(run.get("model") or "tiny", seed=getattr(cfg, "seed", 0))
    if run.get("run_dir"):
        folder = RunDir.open(run["run_dir"]).path
    else:
        folder = RunDir.create(
            run.get("output_dir") or "runs", algo=algo, env=env_id, seed=getattr(cfg, "seed", 0)
        ).path
    tokenizer.save_pretrained(folder)  # so that `reasongym eval RUN_DIR` finds it next to the checkpoints
    if algo == "sft":
        from reasongym.agents.sft import sft_pairs_from_env

        env_kwargs = {"difficulty": run["difficulty"]} if run.get("difficulty") is not None else {}
        pairs = sft_pairs_from_env(
            make(env_id, **env_kwargs), int(run.get("num_examples") or 1000), tokenizer=tokenizer
        )
        result = train(cfg, model, tokenizer, pairs, run_dir=folder)
    else:
        result = train(cfg, model, tokenizer, env_id, run_dir=folder)
    return {"algo": algo, "env": env_id, "run_dir": str(folder), **result_summary(result)}


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
