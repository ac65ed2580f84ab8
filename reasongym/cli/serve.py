"""``reasongym serve-env ENV_ID``: serve a registered environment over OpenEnv's HTTP/WebSocket protocol
(`reasongym.envs.serving`, which needs the ``openenv`` extra: ``pip install 'reasongym[openenv]'``)."""

from __future__ import annotations

import argparse
import json
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


def cmd_serve_env(args: argparse.Namespace) -> int:
    """Serve ``args.env_id`` until Ctrl-C or SIGTERM."""
    try:
        from reasongym.envs.serving import ServeConfig, serve
    except ImportError as exc:
        raise UsageError(
            f"serve-env needs openenv-core ({exc.name or exc} is missing): pip install 'reasongym[openenv]'"
        ) from exc
    cfg = ServeConfig(
        args.env_id,
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        max_body_bytes=args.max_body_bytes,
        env_kwargs=dict(args.option or []),
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
        "--option",
        type=_option,
        action="append",
        metavar="KEY=VALUE",
        help="an environment option (repeatable)",
    )
    sub.set_defaults(run=cmd_serve_env)
