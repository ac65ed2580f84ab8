"""Argument plumbing of the command line: exit codes, one exit path for usage errors, config files (TOML or
YAML) and the small argparse types of the commands without config classes (list, show, verify, compare).
Flags generated from config classes are `reasongym.cli.flags`'s.
"""

from __future__ import annotations

import argparse
import difflib
import re
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reasongym.errors import ConfigError

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
"""Exit codes of the command line (see `reasongym.cli.main`)."""


class UsageError(Exception):
    """A command-line argument is wrong (exit code 2)."""


class ArgParser(argparse.ArgumentParser):
    """An ArgumentParser that raises UsageError instead of exiting, so ``main`` owns every exit code, and takes
    no abbreviated flags (as the flags of eval, train and demo: ``--gol`` is not ``--gold``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """As ``argparse.ArgumentParser``, with ``allow_abbrev=False`` unless given."""
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> typing.NoReturn:
        """Raise UsageError with the message and the usage line."""
        raise UsageError(f"{message}\n{self.format_usage().strip()}")

    def refuse_unknown(self, extra: list[str]) -> typing.NoReturn:
        """Raise UsageError for arguments this (sub)command does not take, with its usage line and, for a
        mistyped flag, the nearest flags it has."""
        flags = [option for action in self._actions for option in action.option_strings if option[:2] == "--"]
        near = [
            match
            for word in extra
            if word.startswith("-")
            for match in difflib.get_close_matches(word.split("=")[0], flags, n=1, cutoff=0.6)
        ]
        hint = f"; did you mean {', '.join(dict.fromkeys(near))}?" if near else ""
        self.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A TOML (``.toml``) or YAML (``.yaml``/``.yml``) file as a dict.

    YAML is read with a ``yaml.SafeLoader`` (`_ConfigLoader`): plain values only, so a tag such as
    ``!!python/object/apply`` is refused (never run), as is nesting deeper than Python's recursion limit. Two
    departures from YAML 1.1, both as TOML and YAML 1.2 read the text: ``1e-4`` is a number (1.1 wants
    ``1.0e-4``, and its string ``"1e-4"`` would be refused as "expected a number"), and a key given twice in
    one mapping is an error (1.1 keeps the last silently).

    Raises:
        ConfigError: A missing path or one that is not a regular file, an unknown extension, a parse error,
            a refused YAML tag, too deep nesting, or a missing YAML/TOML reader.
    """
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    if not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file (a device, pipe or socket)"
        raise ConfigError(f"config file {str(path)!r} is {kind}; --config takes a .toml, .yaml or .yml file")
    if path.suffix not in (".toml", ".yaml", ".yml"):
        raise ConfigError(f"config file {str(path)!r} must end in .toml, .yaml or .yml")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {str(path)!r} is not UTF-8 text: {exc}") from exc
    try:
        data = _parse_config_text(text, path.suffix)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"reading {path.suffix} needs {exc.name}: pip install {exc.name}") from exc
    except RecursionError:
        raise ConfigError(
            f"config file {str(path)!r} is nested deeper than Python's recursion limit; a config is a mapping "
            "of sections and fields"
        ) from None
    except ValueError as exc:  # tomllib.TOMLDecodeError, and YAML errors as `_parse_config_text` words them
        raise ConfigError(f"config file {str(path)!r} could not be parsed: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping of field names to values")
    return data


def _parse_config_text(text: str, suffix: str) -> Any:
    """The value of a config file's text; a YAML error (not a ValueError) becomes a one-line ValueError."""
    if suffix == ".toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        return tomllib.loads(text)
    import yaml

    try:
        return yaml.load(text, Loader=_config_loader()) or {}  # noqa: S506 (a SafeLoader subclass)
    except yaml.MarkedYAMLError as exc:  # parse errors, and tags safe_load does not construct
        where = f"line {exc.problem_mark.line + 1}: " if exc.problem_mark else ""
        tag = (
            " (a config holds plain values: numbers, strings, lists, mappings)"
            if "tag" in str(exc.problem)
            else ""
        )
        raise ValueError(f"{where}{exc.problem or exc.context}{tag}") from None
    except yaml.YAMLError as exc:
        raise ValueError(" ".join(str(exc).split())) from None


def _config_loader() -> type:
    """A ``yaml.SafeLoader`` that reads YAML 1.2 floats (``1e-4``) and refuses a key repeated in a mapping."""
    import yaml

    class ConfigLoader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, typing.Hashable):
                    continue  # safe_load refuses it itself, with its own message
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r} (each key once per mapping)", key_node.start_mark
                    )
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    # The float resolver of YAML 1.1 needs a dot; add 1.2's forms without one (1e-4, -2E+3).
    ConfigLoader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        _YAML12_FLOAT,
        list("-+0123456789."),
    )
    return ConfigLoader


_YAML12_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")
"""A float with an exponent in YAML 1.2's core schema, dot or no dot."""


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
