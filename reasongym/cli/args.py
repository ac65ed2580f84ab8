"""Argument plumbing of the command line: exit codes, one exit path for usage errors, config files (TOML or
YAML) and the small argparse types of the commands without config classes (list, show, verify, compare).
Flags generated from config classes are `reasongym.cli.flags`'s.
"""

from __future__ import annotations

import argparse
import difflib
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
