"""The ``reasongym`` command line: list, show, verify, eval, regrade, compare, data, serve-env, train, demo.

Every command parses its arguments and calls one library function; nothing else happens here, but for the
thread setting every command starts with (set by `import reasongym`: `reasongym._quiet_threads`) and SIGTERM,
which stops a command as Ctrl-C does.

Exit codes, for scripts:
    0: success.
    1: runtime failure (a dataset that is neither local nor reachable on the hub; an error while sampling,
       grading or training; a model server that refuses a request or keeps failing; a run folder or
       evaluation file that another process is writing; a damaged checkpoint).
    2: usage error (unknown command, flag, environment id, algorithm or config field; a value that is not
       allowed; a model path that does not exist or holds no model; a malformed, cut-off or non-UTF-8
       input or config file; an output path that cannot be written; a run folder that cannot be resumed).
    130: interrupted (Ctrl-C or SIGTERM; a trainer first saves its last finished step and says where).

Errors print one line, ``reasongym: error: <message>``, on stderr (an argument a command does not take: also
that command's usage line); ``--debug`` shows the traceback too.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reasongym import __version__
from reasongym.cli.args import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    ArgParser,
    UsageError,
    non_negative_int,
    positive_int,
)
from reasongym.cli.console import warnings_on_their_own_line
from reasongym.cli.data import add_data_parser
from reasongym.cli.eval import cmd_eval
from reasongym.cli.flags import UsageShown
from reasongym.cli.jobs import JOBS
from reasongym.cli.regrade import add_regrade_parser
from reasongym.cli.serve import add_serve_parser
from reasongym.cli.signals import sigterm_as_interrupt
from reasongym.errors import ConfigError, DatasetNotFoundError, UnknownEnvError, UnknownEnvNameError
from reasongym.runs.metrics import dumps_strict
from reasongym.verifiers.base import VERIFY_TIMEOUT_S

TRAIN_ALGOS = tuple(JOBS)
"""What ``reasongym train`` trains: every algorithm with a job (`reasongym.cli.jobs.JOBS`)."""

PYTHON_ONLY_HINT = (
    "; an environment registered in Python (reasongym.register_dataset, register_generator, register) exists "
    "only in the process that registered it: to reach it from the command line, register it in a plugin (a "
    '`reasongym.envs` entry point, README "Plugins"), or evaluate it in that process with '
    "reasongym.evaluation.evaluate(model, env_id, n=8, k=(1, 8)) (trainers: reasongym.agents.train_grpo, ...)"
)
"""Added to "no environment named ..." when no registered id is near: where a Python-registered id can be used."""

# ---------------------------------------------------------------------------------------------- commands


def cmd_list(args: argparse.Namespace) -> int:
    """Print every registered environment id with answer type, size, source, where its data is, and
    description."""
    from reasongym.envs import list_envs
    from reasongym.envs.benchmarks.data import availability

    entries = list_envs()
    data = {entry.id: availability(entry) for entry in entries}  # local files, the hub, or generated
    if args.json:
        for entry in entries:
            row = {"id": entry.id, "answer_type": entry.answer_type, "size": entry.size}
            row.update({"source": entry.origin, "data": data[entry.id], "description": entry.description})
            print(json.dumps(row))
        return EXIT_OK
    width = max(len(entry.id) for entry in entries) + 2
    print(f"{'id':<{width}}{'answer':<11}{'size':<30}{'source':<22}{'data':<13}description")
    for entry in entries:
        print(
            f"{entry.id:<{width}}{entry.answer_type:<11}{entry.size:<30}{entry.origin:<22}{data[entry.id]:<13}"
            f"{entry.description}"
        )
    hub = sum(value == "hub" for value in data.values())
    if hub:
        print(
            f"\n{hub} benchmarks have no local copy (data 'hub'): they load from the Hugging Face hub, or set "
            "REASONGYM_DATA_DIR to a data root (`reasongym data ENV_ID --out DIR` writes one)"
        )
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    """Print problems of an environment with their gold answers and reference solutions."""
    from reasongym.envs import make
    from reasongym.evaluation.config import default_eval_split
    from reasongym.evaluation.records import problem_fields

    env = make(args.env_id).unwrapped
    split = args.split or default_eval_split(env)
    for index in range(args.start, args.start + args.n):
        problem = env.problem_at(index, split=split, difficulty=args.difficulty)
        if args.json:
            row = {"index": index, "split": split, **problem_fields(problem), "question": problem.question}
            print(json.dumps({**row, "solution": problem.solution, "choices": problem.choices}))
            continue
        level = f", difficulty {problem.difficulty}" if problem.difficulty is not None else ""
        print(f"--- {args.env_id} {split} #{index} ({problem.id}{level})")
        print(env.prompt(problem) if args.prompt else problem.question)
        if problem.choices and not args.prompt:
            print("\n".join(f"  ({label}) {text}" for label, text in problem.choices))
        print(f"gold: {problem.answer}")
        print(f"solution: {problem.solution.strip() if problem.solution else '(none)'}\n")
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Grade one completion against a gold answer, or every row of a JSONL file."""
    from reasongym.envs.rows import gold_text
    from reasongym.verifiers import verify

    if (args.file is None) == (args.completion is None):
        raise UsageError("give either a COMPLETION (with --gold) or --file rows.jsonl, not both or neither")
    if args.gold_text is not None and args.gold is not None and args.gold_text != args.gold:
        raise UsageError(f"two gold answers: GOLD {args.gold_text!r} and --gold {args.gold!r}; give one")
    args.gold = args.gold if args.gold is not None else args.gold_text
    if args.file is None:
        if args.gold is None:
            raise UsageError(
                "the gold answer is required: `reasongym verify COMPLETION GOLD` (or --gold GOLD)"
            )
        completion = sys.stdin.read() if args.completion == "-" else args.completion
        choices = _parse_choices(args.choices)
        gold = gold_text(args.gold, args.kind, "--gold")
        verdict = verify(completion, gold, args.kind, choices=choices, timeout=args.timeout)
        _print_verdict(verdict, args.json)
        return EXIT_OK
    from reasongym.evaluation.records import load_records

    if not Path(args.file).is_file():
        raise UsageError(f"verify input file {args.file!r} (--file) does not exist")
    rows, correct = load_records(args.file, cut_off_last_line="error"), 0
    for line, row in enumerate(rows, start=1):
        if "completion" not in row or "gold" not in row:
            raise ConfigError(
                f"{args.file}:{line} needs 'completion' and 'gold' (optional 'kind', 'choices')"
            )
        kind = row.get("kind", args.kind)
        gold = gold_text(row["gold"], str(kind), f"{args.file}:{line}: 'gold'")  # never str(None)
        try:
            verdict = verify(row["completion"], gold, kind, choices=row.get("choices"), timeout=args.timeout)
        except ConfigError as exc:  # a kind or choices the verifiers refuse: name the row
            raise ConfigError(f"{args.file}:{line}: {exc}") from exc
        correct += bool(verdict.correct)
        print(json.dumps({"line": line, **_verdict_dict(verdict)}))
    print(json.dumps({"rows": len(rows), "correct": correct, "accuracy": correct / max(len(rows), 1)}))
    return EXIT_OK


def _parse_choices(values: Sequence[str] | None) -> list[tuple[str, str]] | None:
    if not values:
        return None
    pairs = []
    for value in values:
        label, sep, text = value.partition("=")
        if not sep:
            raise UsageError(f"--choice {value!r} must look like LABEL=TEXT, e.g. --choice 'A=ten apples'")
        pairs.append((label.strip(), text.strip()))
    return pairs


def _verdict_dict(verdict: Any) -> dict[str, Any]:
    return {
        "correct": verdict.correct,
        "outcome": verdict.outcome.value,
        "extracted": verdict.extracted,
        "reason": verdict.reason,
    }


def _print_verdict(verdict: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(_verdict_dict(verdict)))
        return
    word = {True: "correct", False: "wrong", None: "ungradable"}[verdict.correct]
    print(f"{word} (outcome {verdict.outcome.value}; extracted {verdict.extracted!r}): {verdict.reason}")


def cmd_compare(args: argparse.Namespace) -> int:
    """Put evaluation files side by side, and optionally plot pass@k against k."""
    from reasongym.evaluation.plots import check_png_path, plot_pass_at_k
    from reasongym.evaluation.report import comparability_warning, compare_reports, load_report

    if args.plot:
        check_png_path(args.plot)  # before the table: a plot that cannot be written fails at once
    reports = [load_report(path, ks=args.k) for path in args.files]
    print(compare_reports(reports))
    warning = comparability_warning(reports)
    if warning:
        print(f"reasongym: warning: {warning}", file=sys.stderr)
    if args.plot:
        print(f"plot: {plot_pass_at_k(args.files, args.plot)}")
    return EXIT_OK


def cmd_train(args: argparse.Namespace) -> int:
    """Train with one of `TRAIN_ALGOS` from a preset, a config file and flags."""
    from reasongym.cli import train as cli_train

    try:
        result = cli_train.run_training(list(args.rest))  # `train --help` prints its usage, returns nothing
        if result:
            from reasongym import distributed  # the training loaded it (and torch) already

            if distributed.current().is_main:
                line = result.pop("summary", None)
                if line:
                    print(line)  # in words, before the JSON
                print(dumps_strict(result))  # undefined metrics (NaN) are printed as null
    finally:
        # Under torchrun / accelerate launch, leave the process group; flags, --help and usage errors never
        # import torch (nor reasongym.distributed), so that they answer in about a second.
        if "reasongym.distributed" in sys.modules:
            from reasongym import distributed

            distributed.cleanup()
    return EXIT_OK


# ---------------------------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (``train`` subcommands get their config flags lazily)."""
    parser = ArgParser(
        prog="reasongym",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ArgParser)
    commands.required = True
    _add_inspection_parsers(commands)
    sub = commands.add_parser(
        "eval", help="evaluate a model or stored completions: pass@k, pass^k, maj@k, avg@n", add_help=False
    )
    sub.add_argument("rest", nargs=argparse.REMAINDER)
    sub.set_defaults(run=lambda args: cmd_eval(list(args.rest)))
    add_regrade_parser(commands)
    add_data_parser(commands)
    add_serve_parser(commands)
    _add_training_parsers(commands)
    return parser


def _add_inspection_parsers(commands: Any) -> None:
    """``list``, ``show`` and ``verify``: look at environments and grade by hand."""
    sub = commands.add_parser("list", help="list environment ids")
    sub.add_argument("--json", action="store_true", help="one JSON object per line")
    sub.set_defaults(run=cmd_list)

    sub = commands.add_parser("show", help="show problems with gold answers and reference solutions")
    sub.add_argument("env_id", metavar="ENV_ID", help="environment id, e.g. reasongym/Arithmetic-v0")
    sub.add_argument("-n", "--n", type=positive_int, default=3, help="how many problems (default 3)")
    sub.add_argument("--start", type=non_negative_int, default=0, help="index of the first problem")
    sub.add_argument("--split", help="split (default: test if present)")
    sub.add_argument("--difficulty", type=int, help="difficulty level, where the environment has levels")
    sub.add_argument("--prompt", action="store_true", help="print the full prompt the model sees")
    sub.add_argument("--json", action="store_true", help="one JSON object per problem")
    sub.set_defaults(run=cmd_show)

    sub = commands.add_parser("verify", help="grade a completion against a gold answer")
    sub.add_argument(
        "completion", nargs="?", metavar="COMPLETION", help="the completion text; '-' reads stdin"
    )
    sub.add_argument("gold_text", nargs="?", metavar="GOLD", help="the gold answer (or --gold)")
    sub.add_argument("--gold", help="the gold answer (or the second positional argument)")
    sub.add_argument("--kind", default="math", help="math, integer, choice, exact, yesno or countdown")
    sub.add_argument(
        "--choice", dest="choices", action="append", metavar="LABEL=TEXT", help="an option (kind choice)"
    )
    sub.add_argument("--file", help="JSONL rows with completion, gold, optional kind and choices")
    sub.add_argument(
        "--timeout",
        "--verify-timeout",
        type=float,
        default=VERIFY_TIMEOUT_S,
        help="seconds per symbolic comparison; past it the verdict is ungradable (timeout), not wrong",
    )
    sub.add_argument("--json", action="store_true", help="print the verdict as JSON")
    sub.set_defaults(run=cmd_verify)


def _add_training_parsers(commands: Any) -> None:
    """``compare``, ``train`` and ``demo``."""
    sub = commands.add_parser("compare", help="put evaluation files side by side; plot pass@k")
    sub.add_argument("files", nargs="+", metavar="EVAL.jsonl", help="evaluation files written by eval")
    sub.add_argument(
        "--k", type=positive_int, action="append", help="a k of pass@k, pass^k and maj@k (repeatable)"
    )
    sub.add_argument(
        "--plot", metavar="PNG", help="also plot pass@k against k into this PNG (in a folder that exists)"
    )
    sub.set_defaults(run=cmd_compare)

    algos = ", ".join(TRAIN_ALGOS[:-1]) + f" or {TRAIN_ALGOS[-1]}"
    sub = commands.add_parser("train", help=f"train: {algos} (see `train ALGO --help`)", add_help=False)
    sub.add_argument("rest", nargs=argparse.REMAINDER)
    sub.set_defaults(run=cmd_train)

    sub = commands.add_parser(
        "demo", help="tiny model: warm start, evaluate, GRPO/DAPO, evaluate again", add_help=False
    )
    sub.add_argument("rest", nargs=argparse.REMAINDER)


# ---------------------------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (see the module docstring).

    Args:
        argv: Arguments without the program name; None reads ``sys.argv``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        with sigterm_as_interrupt(), warnings_on_their_own_line():
            return _dispatch(argv)
    except UsageShown as shown:  # help, which the flag parser printed
        return shown.code
    except SystemExit as exit_:  # argparse's --help and --version
        if exit_.code not in (0, None):
            raise
        return EXIT_OK
    except UsageError as exc:
        return _fail(exc, EXIT_USAGE, debug)
    except UnknownEnvNameError as exc:
        hint = "" if "did you mean" in str(exc) else PYTHON_ONLY_HINT
        return _fail(UnknownEnvNameError(f"{exc}{hint}"), EXIT_USAGE, debug)
    except (ConfigError, UnknownEnvError) as exc:
        return _fail(exc, EXIT_USAGE, debug)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM; a trainer says what it saved
        print(f"reasongym: {exc}" if str(exc) else "reasongym: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (DatasetNotFoundError, OSError, RuntimeError, ValueError) as exc:
        return _fail(exc, EXIT_FAILURE, debug)


def _dispatch(argv: list[str]) -> int:
    """Run the command ``argv`` names."""
    words = [word for word in argv if word != "--debug"]
    if words[:1] == ["train"]:  # everything after `train` is the trainer's (argparse would take --help)
        return cmd_train(argparse.Namespace(command="train", rest=words[1:]))
    if words[:1] == ["eval"]:  # eval's and demo's flags are their configs', parsed by tyro
        return cmd_eval(words[1:])
    if words[:1] == ["demo"] and "--real" in words:  # the real model's demo has settings of its own
        from reasongym.cli.demo_real import cmd_demo_real

        return cmd_demo_real(words[1:])
    if words[:1] == ["demo"]:
        from reasongym.cli.demo import cmd_demo

        return cmd_demo(words[1:])
    args = _parse(argv)
    return int(args.run(args))


def _parse(argv: list[str]) -> argparse.Namespace:
    """The arguments of list, show, verify, compare and regrade; an argument a command does not take is
    refused by that command's parser (its usage, and the nearest flags)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        commands.choices[args.command].refuse_unknown(extra)
    return args


def _fail(exc: BaseException, code: int, debug: bool) -> int:
    if debug:
        traceback.print_exc()
    print(f"reasongym: error: {exc}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
