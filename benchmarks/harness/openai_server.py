"""A real OpenAI-compatible server for tests and benchmarks: ``transformers serve`` on 127.0.0.1, on CPU.

`running_server` starts it on a free port, waits for ``GET /health`` within a deadline (a server that
exits or never answers fails with the tail of its log, never hangs), and stops it by its pid on exit,
on failure too. `save_tiny_model` and `smollm2_folder` write the folders it serves.

Facts about ``transformers serve`` (5.x) that the tests rely on: it ignores ``n`` and ``logprobs``,
answers 422 to fields it does not know, serves only the folder it was started with (the model name
is the folder path), and samples only when the model's generation config says ``do_sample``.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# The char tokenizer has no chat template; this one joins the message contents with newlines, exactly
# as reasongym.policy.loading.format_prompt does without a template, so all three prompt paths see one text.
JOIN_TEMPLATE = "{% for m in messages %}{% if not loop.first %}\n{% endif %}{{ m['content'] }}{% endfor %}"


@dataclass(frozen=True)
class Server:
    """A running server."""

    base_url: str
    """The API root, ``http://127.0.0.1:PORT/v1``."""
    model: str
    """The model name it answers to (the folder path)."""
    process: subprocess.Popen[bytes]
    """The server process (stop it by ``process.pid``)."""
    log: Path
    """Its stdout and stderr."""


def transformers_cli() -> str | None:
    """The ``transformers`` command of this interpreter's environment, or None if it is not installed."""
    beside = Path(sys.executable).with_name("transformers")
    found = str(beside) if beside.is_file() else shutil.which("transformers")
    if found is None:
        return None
    try:
        import fastapi  # noqa: F401  (the serving extra)
        import uvicorn  # noqa: F401
    except ImportError:
        return None
    return found


def free_port() -> int:
    """A port nobody listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server(
    folder: Path, log: Path, *, startup_timeout: float = 120.0, extra_args: Sequence[str] = ()
) -> Iterator[Server]:
    """Serve ``folder`` with ``transformers serve`` (plus ``extra_args``) until the block ends.

    Raises:
        RuntimeError: The command is missing, or the server exited or did not answer /health in time
            (the message holds the end of its log).
    """
    cli = transformers_cli()
    if cli is None:
        raise RuntimeError("`transformers serve` is not installed (pip install 'transformers[serving]')")
    port = free_port()
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    }
    command = [
        cli,
        "serve",
        str(folder),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
        *extra_args,
    ]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    server = Server(f"http://127.0.0.1:{port}/v1", str(folder), process, log)
    try:
        _wait_healthy(server, startup_timeout)
        yield server
    finally:
        stop(server)


def stop(server: Server) -> None:
    """Stop the server by its pid: SIGTERM, then SIGKILL after 10 s."""
    if server.process.poll() is not None:
        return
    os.kill(server.process.pid, signal.SIGTERM)
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=10)


def _wait_healthy(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    health = server.base_url.removesuffix("/v1") + "/health"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"the server exited with code {server.process.returncode}:\n{_tail(server.log)}"
            )
        try:
            with urllib.request.urlopen(health, timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server did not answer {health} within {timeout:g} s:\n{_tail(server.log)}")


def _tail(log: Path, lines: int = 40) -> str:
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def save_tiny_model(folder: Path, *, seed: int = 0) -> Path:
    """Save the tiny random model and char tokenizer (with `JOIN_TEMPLATE`) so that the server samples."""
    from reasongym.policy.tiny import make_char_tokenizer, make_tiny_model

    tokenizer = make_char_tokenizer()
    tokenizer.chat_template = JOIN_TEMPLATE
    # Room for a long benchmark prompt in characters: `transformers serve` refuses a prompt and answer longer
    # than the model's positions, and an AIME problem alone is 600 of them.
    model = make_tiny_model(tokenizer, seed=seed, max_position_embeddings=4096)
    model.generation_config.do_sample = (
        True  # transformers serve decodes greedily otherwise, whatever the temperature
    )
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def smollm2_folder(gguf: Path) -> Path:
    """A plain transformers folder of the SmolLM2 GGUF file, dequantized once and cached in the temp dir.

    Dequantizing takes about a minute on a busy 2-core machine, so the folder is kept between runs,
    keyed by the file's name, size and modification time, and written to a side folder first.
    """
    stat = gguf.stat()
    folder = Path(tempfile.gettempdir()) / f"reasongym-{gguf.stem}-{stat.st_size}-{int(stat.st_mtime)}"
    if (folder / "model.safetensors").is_file():
        return folder
    partial = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
    _save_dequantized(gguf, partial)
    try:
        partial.rename(folder)
    except OSError:  # another process finished first
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def _save_dequantized(gguf: Path, folder: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # The weights are float tensors now; the GGUF quantizer entry would refuse to save and to load them.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.generation_config.do_sample = True
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
