"""Argument plumbing of the command line: one exit path for usage errors, flags generated from config
dataclasses, and config files (TOML or YAML).

A config dataclass becomes one ``--field-name`` flag per field: its help is the docstring under the field,
its type comes from the annotation (``bool`` fields get ``--field``/``--no-field``, a ``Literal`` lists its
choices, a nested dataclass field ``sft`` gets ``--sft.batch-size`` and so on).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import textwrap
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from reasongym.errors import ConfigError

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
"""Exit codes of the command line (see `reasongym.cli.main`)."""


class UsageError(Exception):
    """A command-line argument is wrong (exit code 2)."""


class ArgParser(argparse.ArgumentParser):
    """An ArgumentParser that raises UsageError instead of exiting, so ``main`` owns every exit code."""

    def error(self, message: str) -> typing.NoReturn:
        """Raise UsageError with the message and the usage line."""
        raise UsageError(f"{message}\n{self.format_usage().strip()}")


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


def config_fields(cls: type, prefix: str = "") -> list[tuple[str, Any, Any, str]]:
    """``(dotted name, type, default, doc)`` of every leaf field of the dataclass ``cls``, nested ones dotted."""
    hints, docs = typing.get_type_hints(cls), field_docs(cls)
    leaves = []
    for item in dataclasses.fields(cls):
        tp = hints[item.name]
        default = item.default if item.default is not dataclasses.MISSING else None
        if dataclasses.is_dataclass(tp):
            leaves += config_fields(tp, prefix=f"{prefix}{item.name}.")
        else:
            leaves.append((f"{prefix}{item.name}", tp, default, docs.get(item.name, "")))
    return leaves


def add_config_arguments(
    group: Any, cls: type, section: str, describe_default: Callable[[str], str] | None = None
) -> None:
    """Add one flag per leaf field of ``cls``; parsed values land under ``cfg:<section>:<dotted name>``.

    Args:
        group: A parser or argument group.
        cls: The config dataclass.
        section: The config section the flags belong to (``run``, ``rollout``, ``grpo`` ...).
        describe_default: Text for a field's default in the help (e.g. per preset); None: the class default.
    """
    for dotted, tp, default, doc in config_fields(cls):
        convert, extra = _converter(tp)
        shown = describe_default(dotted) if describe_default else f"default: {default!r}"
        help_text = f"{doc} ({shown})".replace("%", "%%")
        flags = [f"--{dotted.replace('_', '-')}"]
        kwargs: dict[str, Any] = {}
        if convert is not None:  # not a bool switch
            flags += [f"--{dotted}"] if "_" in dotted else []
            kwargs = {"type": convert, "metavar": _metavar(tp)}
        group.add_argument(
            *flags,
            dest=f"cfg:{section}:{dotted}",
            default=argparse.SUPPRESS,
            help=help_text,
            **kwargs,
            **extra,
        )


def _converter(tp: Any) -> tuple[Any, dict[str, Any]]:
    """``(type function, extra add_argument kwargs)`` for a field type."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        convert, extra = _converter(inner[0] if len(inner) == 1 else str)
        if "choices" in extra:
            extra = {**extra, "choices": [*extra["choices"], None]}
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


def _metavar(tp: Any) -> str | None:
    if typing.get_origin(tp) is typing.Literal:
        return None  # argparse shows the choices
    names = [getattr(a, "__name__", str(a)) for a in (typing.get_args(tp) or (tp,)) if a is not type(None)]
    return "|".join(names).upper()


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A TOML (``.toml``) or YAML (``.yaml``/``.yml``) file as a dict.

    Raises:
        ConfigError: Missing file, unknown extension, a parse error, or a missing YAML/TOML reader.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {str(path)!r} is not UTF-8 text: {exc}") from exc
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


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1}`` -> ``{"a": {"b": 1}}``."""
    nested: dict[str, Any] = {}
    for dotted, value in flat.items():
        *parents, leaf = dotted.split(".")
        node = nested
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return nested


def flatten(nested: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``."""
    flat: dict[str, Any] = {}
    for key, value in nested.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` on top of ``base``, recursing into mappings."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; expected an integer >= 1")
    return value


def non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; expected an integer >= 0")
    return value
