"""A study's setting from the command line: its preset, shrunk by ``--dry``, then any field as a flag.

A study's own flags (its arms, seeds, folders) stay on its `argparse` parser; every field of its setting (a
frozen dataclass with a docstring under each field) is a flag too, ``--field-name VALUE``, parsed by tyro on
top of the chosen preset, as ``reasongym``'s commands parse their configs (`reasongym.cli.flags`): a mistyped
name or a value of the wrong type is refused before anything runs, naming the flag. ``--help`` shows both.

The dry pass (``--dry``) replaces the setting's sizes by the study's `dry` sizes (the tiny random model, a few
short samples): the whole program runs in seconds on a CPU, so CI keeps every study working.
"""

from __future__ import annotations

import argparse
import dataclasses
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

S = TypeVar("S")


def dry(setting: S, sizes: Mapping[str, Any]) -> S:
    """``setting`` with the dry pass's ``sizes`` in place of its own (fields of ``setting``): what a study's
    own ``dry`` hands here."""
    unknown = sorted(set(sizes) - {f.name for f in dataclasses.fields(setting)})  # type: ignore[arg-type]
    if unknown:
        raise ValueError(f"dry sizes name no field of {type(setting).__name__}: {unknown}")
    return dataclasses.replace(setting, **sizes)  # type: ignore[type-var]


def parse(
    parser: argparse.ArgumentParser,
    setting_type: type[S],
    choose: Callable[[argparse.Namespace], S],
    shrink: Callable[[S], S],
    argv: Sequence[str] | None = None,
) -> tuple[argparse.Namespace, S]:
    """The study's flags and its setting: ``choose(args)`` (a preset), shrunk by ``shrink`` (the study's
    ``dry``) under ``--dry``, then the flags of the setting's fields on top. ``parser`` gets ``--dry``, and
    takes no abbreviated flag (one could be a setting's: ``--out`` is not ``--out-dir``)."""
    parser.add_argument("--dry", action="store_true", help="the tiny random model on the CPU, for seconds")
    parser.allow_abbrev = False
    names = " ".join(f"--{f.name.replace('_', '-')}" for f in dataclasses.fields(setting_type))  # type: ignore[arg-type]
    text = f"Every field of {setting_type.__name__} is a flag too, on top of the preset: {names}."
    parser.epilog = textwrap.fill(text, 100, break_on_hyphens=False)
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the flags' names unbroken
    args, rest = parser.parse_known_args(argv)
    setting = choose(args)
    if args.dry:
        setting = shrink(setting)
    return args, fields(setting, rest, prog=parser.prog)


def fields(setting: S, argv: Sequence[str], *, prog: str) -> S:
    """``setting`` with the fields ``argv`` names (``--budget-tokens 4000 --no-tempered-logprobs``)."""
    import tyro

    if not argv:
        return setting
    description = f"Any field of {type(setting).__name__}, on top of the preset (and of --dry)."
    return tyro.cli(type(setting), args=list(argv), default=setting, prog=prog, description=description)
