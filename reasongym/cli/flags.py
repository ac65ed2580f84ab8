"""Flags from config dataclasses, by tyro: one ``--field-name`` per field, its docstring as its help.

Why tyro (benchmarks/README.md, "Command-line flags from configs", has the comparison): of tyro,
jsonargparse and simple-parsing it alone keeps every flag as it was spelled before (flat names, ``--lora.rank``
for nested configs, ``None`` as a value, space-separated tuples, ``--x/--no-x``), and it adds did-you-mean
for a mistyped flag and refuses abbreviations. What no library does is ours, in `reasongym.cli.train`: the
layers preset < resumed run < config file < flags, handed to tyro as the defaults it shows and parses on.

The one hook (`_registry`) builds our config classes for tyro: every section's flags are flat (its own
``OmitArgPrefixes``) except those of a nested config, which keep their field's name as prefix
(``--lora.rank``, STaR's ``--sft.batch-size``); a field's docstring becomes one paragraph; and a flag's
default shows the other presets' values where they differ (``(default: 60; preset default: 200)``).
"""

from __future__ import annotations

import dataclasses
import functools
import io
import typing
from collections.abc import Mapping, Sequence
from contextlib import redirect_stderr
from typing import Annotated, Any

import docstring_parser
import tyro
from tyro.conf import OmitArgPrefixes, UseAppendAction, arg
from tyro.constructors import ConstructorRegistry, StructConstructorSpec, StructFieldSpec

from reasongym.cli.args import UsageError


class UsageShown(Exception):
    """The parser has printed what was asked (``--help``); ``code`` is the exit code."""

    def __init__(self, code: int) -> None:
        """Remember the exit code."""
        super().__init__(code)
        self.code = code


def parse(
    command: type,
    argv: Sequence[str],
    *,
    default: Any,
    prog: str,
    description: str,
    nested: Mapping[type, str] | None = None,
    hints: Mapping[str, str] | None = None,
    aliases: Mapping[str, tuple[str, ...]] | None = None,
    append: Sequence[str] = (),
) -> Any:
    """``command`` (a dataclass of config sections) parsed from ``argv`` on top of ``default``.

    Args:
        command: The dataclass whose fields are the command's sections (each a config dataclass).
        argv: The arguments after the command's name.
        default: An instance of ``command``: the values shown in ``--help`` and used for absent flags.
        prog: The usage line's program name.
        description: The help's first paragraph.
        nested: Config classes nested in a section, by the prefix of their flags (``{LoRAConfig: "lora"}``).
        hints: Flag name -> text appended to its default in the help (``"; preset tiny: 72"``).
        aliases: Flag name -> other names it answers to (``{"n": ("--num-samples",)}``).
        append: Tuple fields given one value per flag, repeated (``--k 1 --k 8``).

    Raises:
        UsageShown: ``--help``, which tyro printed (code 0).
        UsageError: A flag that is unknown or whose value is not allowed, in one line.
    """
    registry = _registry(dict(nested or {}), dict(hints or {}), dict(aliases or {}), set(append))
    errors = io.StringIO()
    try:
        with redirect_stderr(errors):
            return tyro.cli(
                command,
                args=list(argv),
                default=default,
                prog=prog,
                description=description,
                registry=registry,
            )
    except SystemExit as exit_:  # tyro printed the help (on stdout), or an error (captured)
        if not exit_.code:
            raise UsageShown(0) from None
        raise UsageError(f"{one_line(errors.getvalue())} (`{prog} --help` lists every flag)") from None


def one_line(box: str) -> str:
    """tyro's boxed error as one line: its message, and the flags it suggests instead of an unknown one.

    The box's first line is its title (in its top border, or above a rule where stdout is not UTF-8); rules
    of ``─`` or ``-`` separate the message from the suggestions and the pointer to ``--help``. tyro has no API
    that returns the error as data (1.0), so tests/cli/test_flags.py pins this reading, line for line, in a wide
    and a narrow terminal and without UTF-8; pyproject.toml keeps tyro below 1.1.
    """
    lines = [line.strip().strip("│|╭╮╰╯+").strip() for line in box.splitlines()]
    lines = [line for line in lines if line]
    title = lines[0].strip("─- ") if lines else ""
    blocks: list[list[str]] = [[]]
    for line in lines[1:]:
        if not line.strip("─-"):
            blocks.append([])
        else:
            blocks[-1].append(line)
    blocks = [block for block in blocks if block and not block[0].startswith("For full helptext")]
    message = " ".join(blocks[0]) if blocks else title
    suggested = [  # a flag with other names (TRL's) is one suggestion: --num-generations/--group-size
        "/".join(word.rstrip(",") for word in line.split() if word.startswith("--"))
        for block in blocks[1:]
        if block[0].startswith("Perhaps you meant")
        for line in block[1:]
        if line.startswith("--")
    ]
    return message.replace("Error parsing ", "") + (
        f"; did you mean {', '.join(suggested)}?" if suggested else ""
    )


def flat_section(cls: type, title: str) -> Any:
    """``cls`` as a command section whose flags carry no section prefix, titled in the help."""
    return Annotated[cls, OmitArgPrefixes, arg(help=title)]


def _registry(
    nested: dict[type, str], hints: dict[str, str], aliases: dict[str, tuple[str, ...]], append: set[str]
) -> ConstructorRegistry:
    """A registry that builds our frozen config dataclasses field by field (see the module docstring)."""
    registry = ConstructorRegistry()

    @registry.struct_rule
    def config_struct(info: Any) -> StructConstructorSpec | None:
        cls = info.type
        if not (
            dataclasses.is_dataclass(cls)
            and isinstance(cls, type)
            and cls.__module__.startswith("reasongym.")
        ):
            return None
        default = info.default if isinstance(info.default, cls) else cls()
        types, docs, fields = typing.get_type_hints(cls, include_extras=True), field_docs(cls), []
        for item in dataclasses.fields(cls):
            name = f"{nested[cls]}.{item.name}" if cls in nested else item.name
            hint = hints.get(name, "")
            flag = arg(
                name=name if cls in nested else None,
                aliases=aliases.get(name),
                help_behavior_hint=lambda shown, hint=hint: f"(default: {shown}{hint})",
            )
            tp = types[item.name]  # a type only known at run time: mypy cannot check the Annotated below
            marked = Annotated[tp, flag, UseAppendAction] if name in append else Annotated[tp, flag]  # type: ignore[valid-type]
            fields.append(
                StructFieldSpec(item.name, marked, getattr(default, item.name), docs.get(item.name))
            )
        return StructConstructorSpec(instantiate=cls, fields=tuple(fields))

    return registry


@functools.cache
def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of ``cls``, as one paragraph (tyro keeps the source's line breaks)."""
    parsed = docstring_parser.parse_from_object(cls)
    return {param.arg_name: " ".join((param.description or "").split()) for param in parsed.params}


def trl_names(algo: str) -> dict[str, tuple[str, ...]]:
    """Our flag -> TRL's names of the same setting as flags (``lr`` -> ``--learning-rate``), from the one table
    of them, `reasongym.agents.algorithms.trl_names` (config files take the same names)."""
    from reasongym.agents.algorithms import trl_names as field_names

    return {
        ours: tuple(f"--{name.replace('_', '-')}" for name in theirs)
        for ours, theirs in field_names(algo).items()
    }
