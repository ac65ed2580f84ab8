"""Problems/s of a served evaluation at 1, 4 and 16 requests in flight, against in-process sampling of the
same model in the same run; and the per-request overhead of our client over a bare ``openai`` call.

Run: ``OMP_NUM_THREADS=1 python -m benchmarks.bench_served [--problems 32] [--max-new-tokens 32]
[--model-folder DIR] [--no-continuous-batching]``.

The model is the tiny random model over the character tokenizer (or ``--model-folder``, any local
transformers folder, e.g. a dequantized SmolLM2), served by ``transformers serve`` on 127.0.0.1 on CPU
with one torch thread, as the tests do (``benchmarks/harness/openai_server.py``). Every run evaluates the
same ``--problems`` problems of ``reasongym/Arithmetic-v0`` (n=1, temperature 1, ``--max-new-tokens``
tokens, no records file), end to end through ``reasongym.evaluation.evaluate``:

- ``in_process``: the model object in this process (``HFGenerator``, batches of 8 problems);
- served: ``OpenAIGenerator`` on the chat endpoint with N requests in flight (batches of
  ``max(8, 2N)`` problems, as ``reasongym eval`` does).

The served runs go to two servers in turn: ``plain`` (``transformers serve`` as the tests start it, which
runs one generation at a time, so requests in flight only queue) and ``continuous_batching`` (its
``--continuous-batching`` flag, which decodes the requests in flight together, as vLLM does). Each
setting is timed ``--repeats`` times after one untimed warm-up; medians are reported. The server, the
client and in-process sampling share the machine's cores (one torch thread each).

Client overhead: the fault-injector server (``benchmarks/harness/fake_server.py``, in its own process) answers at once,
so the time per request is the client's own work. A bare ``client.chat.completions.create`` against
``OpenAIGenerator.generate`` (its retry loop, parsing, ``Completion``), alternating, about
``--overhead-calls`` requests each, medians per request: with one prompt per call (ours sends it from the
calling thread), and with 16 prompts per call and 16 in flight (ours hands them to its thread pool; the
bare client gets a 16-thread pool too).

The last line is one JSON object: ``in_process_problems_per_s``, ``served_problems_per_s`` (by server
mode, then requests in flight), ``client_ms_per_request`` (by prompts per call: ``bare_ms``, ``ours_ms``,
``overhead_ms``); or ``{"skipped": reason}`` when ``transformers serve`` is not installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.harness import openai_server

ENV = "reasongym/Arithmetic-v0"


def _timed(run: Any, repeats: int) -> float:
    run()  # warm-up: imports, first requests, the server's first generation
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "n": 1,
        "num_problems": args.problems,
        "temperature": 1.0,
        "max_new_tokens": args.max_new_tokens,
        "progress": False,
        "verbose": False,
    }


def in_process_rate(folder: Path, args: argparse.Namespace) -> float:
    from reasongym.evaluation import evaluate
    from reasongym.policy.loading import load_policy

    model, tokenizer = load_policy(str(folder), device="cpu")
    run = lambda: evaluate(model, ENV, tokenizer=tokenizer, batch_size=8, **_options(args))  # noqa: E731
    rate = args.problems / _timed(run, args.repeats)
    print(f"{'in-process sampling':<40}{rate:8.2f} problems/s")
    return rate


def served_rates(server: Any, mode: str, args: argparse.Namespace) -> dict[str, float]:
    from reasongym.evaluation import evaluate
    from reasongym.generation import OpenAIGenerator, ServedModelConfig

    rates = {}
    for in_flight in (1, 4, 16):
        settings = ServedModelConfig(model=server.model, base_url=server.base_url, max_concurrency=in_flight)
        with OpenAIGenerator(settings) as generator:
            batch = max(8, 2 * in_flight)
            run = lambda g=generator, b=batch: evaluate(g, ENV, batch_size=b, **_options(args))  # noqa: E731
            rates[str(in_flight)] = args.problems / _timed(run, args.repeats)
        label = f"served, {mode}, {in_flight} in flight"
        print(f"{label:<40}{rates[str(in_flight)]:8.2f} problems/s")
    return rates


def client_overhead(calls: int) -> dict[str, dict[str, float]]:
    """ms per request through a bare ``openai`` client and through ours, at 1 and at 16 prompts per call."""
    # The fake server runs in its own process, so that its threads do not share this process's GIL.
    fake = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.harness.fake_server"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert fake.stdout is not None
        return _overhead(fake.stdout.readline().strip(), calls)
    finally:
        fake.kill()
        fake.wait()


def _overhead(base_url: str, calls: int) -> dict[str, dict[str, float]]:
    import openai

    from reasongym.generation import OpenAIGenerator, SamplingParams, ServedModelConfig

    params = SamplingParams(max_new_tokens=16)
    messages = [{"role": "user", "content": "What is 2 + 2?"}]
    request = {"model": "m", "messages": messages, "max_tokens": 16, "temperature": 1.0, "top_p": 1.0, "n": 1}
    results = {}
    with ThreadPoolExecutor(16) as pool:
        settings = ServedModelConfig(model="m", base_url=base_url, max_concurrency=16)
        bare = openai.OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
        with OpenAIGenerator(settings) as ours, bare:

            def bare_calls(width: int) -> None:  # the bare client's own way to have 16 in flight: a pool
                if width == 1:
                    bare.chat.completions.create(**request)
                else:
                    list(pool.map(lambda _: bare.chat.completions.create(**request), range(width)))

            for width in (1, 16):
                bare_times, our_times = [], []
                for i in range(calls // width + 10):  # the first 10 warm up connections and threads
                    start = time.perf_counter()
                    bare_calls(width)
                    middle = time.perf_counter()
                    ours.generate([messages] * width, params)
                    if i >= 10:
                        bare_times.append((middle - start) / width)
                        our_times.append((time.perf_counter() - middle) / width)
                bare_ms, ours_ms = statistics.median(bare_times) * 1e3, statistics.median(our_times) * 1e3
                results[str(width)] = {
                    "bare_ms": bare_ms,
                    "ours_ms": ours_ms,
                    "overhead_ms": ours_ms - bare_ms,
                }
                label = f"client, {width} prompt{'s' * (width > 1)} per call"
                print(
                    f"{label:<40}bare {bare_ms:.3f} ms/request, ours {ours_ms:.3f} ({ours_ms - bare_ms:+.3f})"
                )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=32, help="problems per evaluation")
    parser.add_argument("--max-new-tokens", type=int, default=32, help="tokens per completion")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per setting (median)")
    parser.add_argument(
        "--overhead-calls", type=int, default=300, help="requests per client in the overhead test"
    )
    parser.add_argument(
        "--model-folder", type=Path, help="serve this transformers folder instead of the tiny model"
    )
    parser.add_argument(
        "--no-continuous-batching",
        action="store_true",
        help="only the plain server (one generation at a time)",
    )
    args = parser.parse_args()
    if openai_server.transformers_cli() is None or importlib.util.find_spec("openai") is None:
        print(json.dumps({"skipped": "needs `transformers serve` and openai: pip install 'reasongym[dev]'"}))
        return
    modes = (
        {"plain": []}
        if args.no_continuous_batching
        else {"plain": [], "continuous_batching": ["--continuous-batching"]}
    )
    served: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.model_folder or openai_server.save_tiny_model(Path(tmp) / "tiny")
        print(
            f"{folder.name}: {args.problems} problems, {args.max_new_tokens} new tokens, median of {args.repeats}"
        )
        in_process = in_process_rate(folder, args)
        for mode, extra in modes.items():
            start = time.perf_counter()
            with openai_server.running_server(folder, Path(tmp) / f"{mode}.log", extra_args=extra) as server:
                print(f"server ({mode}) up in {time.perf_counter() - start:.1f} s")
                served[mode] = served_rates(server, mode, args)
    overhead = client_overhead(args.overhead_calls)
    summary = {
        "in_process_problems_per_s": round(in_process, 3),
        "served_problems_per_s": {mode: {k: round(v, 3) for k, v in r.items()} for mode, r in served.items()},
        "client_ms_per_request": {w: {k: round(v, 4) for k, v in r.items()} for w, r in overhead.items()},
        "problems": args.problems,
        "max_new_tokens": args.max_new_tokens,
        "model": "tiny" if args.model_folder is None else args.model_folder.name,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
