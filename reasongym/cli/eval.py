"""``reasongym eval``: evaluate a model (local, or served over the OpenAI-compatible protocol) or grade
stored completions, and print the pass@k / maj@k table.

Under ``torchrun --nproc-per-node N -m reasongym eval ...`` (or ``accelerate launch``) the processes share the
problems, each on its own device, and rank 0 writes the one records file (`reasongym.evaluation.evaluate`
with ``distributed=True``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from reasongym.cli.args import EXIT_OK, UsageError, positive_int
from reasongym.metrics import dumps_strict


def cmd_eval(args: argparse.Namespace) -> int:
    """Evaluate a model (or grade stored completions) and print the pass@k / maj@k table."""
    from reasongym.evaluation import evaluate, grade_completions

    progress = not args.no_progress
    if args.completions is not None:
        env_id = args.env or args.model  # `eval --completions F ENV` reads ENV from the first positional
        report = grade_completions(
            args.completions,
            env_id,
            ks=args.k,
            split=args.split,
            out_path=args.out,
            progress=progress,
            verbose=not args.json,
        )
    else:
        from reasongym.agents.runtime import distributed

        process = distributed.init_distributed()  # one process: nothing to join
        served = _served_generator(args)  # None unless --model NAME / --base-url: then MODEL is the server's
        model, env_id = (args.model, args.env) if served is None else (served, args.env or args.model)
        if model is None or env_id is None:
            raise UsageError("eval needs MODEL and ENV_ID (or --completions FILE [ENV_ID])")
        name = args.model if served is None else args.served_model
        out = args.out or str(Path("evals") / f"{_safe(name)}__{_safe(env_id)}.jsonl")
        report = evaluate(
            model,
            env_id,
            n=args.n,
            ks=args.k,
            split=args.split,
            num_problems=args.num_problems,
            difficulty=args.difficulty,
            temperature=args.temperature,
            top_p=args.top_p,
            max_new_tokens=args.max_new_tokens,
            seed=args.seed,
            out_path=out,
            resume=not args.no_resume,
            batch_size=args.batch_size or (8 if served is None else max(8, 2 * args.max_concurrency)),
            device=args.device or (str(process.device) if process.world_size > 1 else None),
            progress=progress,
            verbose=not args.json,
            distributed=process.world_size > 1,
        )
        if served is not None:
            served.close()
            print(f"served: {served.counts}", file=sys.stderr)
        distributed.cleanup()
        if not process.is_main:  # rank 0 prints the report
            return EXIT_OK
    if args.json:
        print(dumps_strict(report.to_dict()))
    elif report.path:
        print(f"records: {report.path}")
    return EXIT_OK


def _served_generator(args: argparse.Namespace) -> Any:
    if args.served_model is None and args.base_url is None:
        return None
    if args.served_model is None:
        raise UsageError("--base-url needs --model NAME, the model's name on the server")
    if args.model is not None and args.env is not None:
        raise UsageError("a served model takes one positional argument: eval --model NAME ENV_ID")
    from reasongym.generation.served import OpenAIGenerator, ServedModelConfig

    settings = ServedModelConfig(
        model=args.served_model,
        base_url=args.base_url,
        api_key=args.api_key,
        endpoint=args.endpoint,
        max_concurrency=args.max_concurrency,
        request_timeout=args.request_timeout,
    )
    return OpenAIGenerator(settings)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in Path(text).name or text).strip("_")


def add_eval_parser(commands: Any) -> None:
    sub = commands.add_parser("eval", help="evaluate a model or stored completions: pass@k, maj@k, avg@n")
    sub.add_argument(
        "model", nargs="?", metavar="MODEL", help="hub id, model folder, run folder or checkpoint"
    )
    sub.add_argument("env", nargs="?", metavar="ENV_ID", help="environment id")
    sub.add_argument(
        "--completions", metavar="FILE", help="grade stored completions (JSONL) instead of a model"
    )
    sub.add_argument(
        "--n", "--num-samples", dest="n", type=positive_int, default=1,
        help="samples per problem (default 1); under torchrun or accelerate launch write --num-samples, as "
        "their own parsers take --n for an abbreviation of theirs",
    )  # fmt: skip
    sub.add_argument("--k", type=positive_int, action="append", help="a k of pass@k and maj@k (repeatable)")
    sub.add_argument("--split", help="split (default: test if present)")
    sub.add_argument(
        "--num-problems", type=positive_int, help="first N problems (default: all / 200 procedural)"
    )
    sub.add_argument("--difficulty", type=int, help="difficulty level, where the environment has levels")
    sub.add_argument("--temperature", type=float, default=0.6, help="sampling temperature; 0 = greedy")
    sub.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling threshold")
    sub.add_argument("--max-new-tokens", type=positive_int, default=512, help="most tokens per completion")
    sub.add_argument("--seed", type=int, default=0, help="sampling seed")
    sub.add_argument(
        "--batch-size",
        type=positive_int,
        help="problems sampled together (default 8; served: 2 x in flight)",
    )
    sub.add_argument("--device", help="cuda, cpu, ... (default: cuda when available)")
    sub.add_argument("--out", help="records JSONL (default evals/<model>__<env>.jsonl)")
    sub.add_argument("--no-resume", action="store_true", help="overwrite --out instead of resuming it")
    sub.add_argument("--no-progress", action="store_true", help="no progress bar")
    sub.add_argument("--json", action="store_true", help="print the report as one JSON object")
    served = sub.add_argument_group("a served model (OpenAI-compatible: vLLM, SGLang, llama.cpp, TGI, ...)")
    served.add_argument("--model", dest="served_model", metavar="NAME", help="the model's name on the server")
    served.add_argument("--base-url", metavar="URL", help="e.g. http://127.0.0.1:8000/v1 ($OPENAI_BASE_URL)")
    served.add_argument("--api-key", help="bearer token (default $OPENAI_API_KEY, else none)")
    served.add_argument(
        "--endpoint",
        choices=("chat", "completions"),
        default="chat",
        help="chat applies the server's template",
    )
    served.add_argument(
        "--max-concurrency", type=positive_int, default=8, help="requests in flight (default 8)"
    )
    served.add_argument(
        "--request-timeout", type=float, default=600.0, help="seconds per request (default 600)"
    )
    sub.set_defaults(run=cmd_eval)
