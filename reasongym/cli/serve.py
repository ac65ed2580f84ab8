"""``reasongym serve-env ENV_ID``: serve a registered environment over OpenEnv's HTTP/WebSocket protocol
(`reasongym.envs.serving`, which needs the ``openenv`` extra: ``pip install 'reasongym[openenv]'``)."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from reasongym.cli.args import EXIT_OK, UsageError, positive_int


def _option(text: str) -> tuple[str, Any]:
    """``KEY=VALUE``, the value read as JSON when it parses (``3``, ``0.5``, ``true``), else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(
            f"--option {text!r} must look like KEY=VALUE, e.g. --option split=test"
        )
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _seconds(text: str) -> float:
    """A number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def cmd_serve_env(args: argparse.Namespace) -> int:
    """Serve ``args.env_id`` until Ctrl-C or SIGTERM."""
    try:
        from reasongym.envs.serving import ServeConfig, serve
    except ImportError as exc:
        raise UsageError(
            f"serve-env needs openenv-core ({exc.name or exc} is missing): pip install 'reasongym[openenv]'"
        ) from exc
    given = {
        "max_connections": args.max_connections,
        "header_timeout_s": args.header_timeout,
        "body_timeout_s": args.body_timeout,
    }
    # A limit not given is ServeConfig's default (written once, there).
    limits = {name: value for name, value in given.items() if value is not None}
    cfg = ServeConfig(
        args.env_id,
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        max_body_bytes=args.max_body_bytes,
        reveal_answers=args.reveal_answers,
        env_kwargs=dict(args.option or []),
        **limits,
    )
    serve(cfg)
    return EXIT_OK


def add_serve_parser(commands: Any) -> None:
    """Add the ``serve-env`` command to the ``reasongym`` subcommands."""
    sub = commands.add_parser("serve-env", help="serve an environment over OpenEnv's HTTP/WebSocket protocol")
    sub.add_argument("env_id", metavar="ENV_ID", help="a registered id, e.g. reasongym/Arithmetic-v0")
    sub.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    sub.add_argument("--port", type=positive_int, default=8000, help="TCP port (default 8000)")
    sub.add_argument(
        "--max-sessions", type=positive_int, default=64, help="most WebSocket sessions at once (default 64)"
    )
    sub.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=1 << 20,
        help="largest request or message (default 1 MiB)",
    )
    sub.add_argument(
        "--max-connections",
        type=positive_int,
        help="most open connections; past it a stalled one is closed, else the new one gets 503 (default 256)",
    )
    sub.add_argument(
        "--header-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="seconds a request's headers may take to arrive (default 10)",
    )
    sub.add_argument(
        "--body-timeout",
        type=_seconds,
        metavar="SECONDS",
        help="seconds a request's body may take to arrive (default 30)",
    )
    sub.add_argument(
        "--reveal-answers",
        action="store_true",
        help="let clients see gold answers: the hint and include_answer reset options, problem metadata and "
        "verifier reasons (refused and left out by default)",
    )
    sub.add_argument(
        "--option",
        type=_option,
        action="append",
        metavar="KEY=VALUE",
        help="an environment option (repeatable)",
    )
    sub.set_defaults(run=cmd_serve_env)
