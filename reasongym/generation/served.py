"""`OpenAIGenerator`: sample from a model that a server holds, over the OpenAI-compatible HTTP protocol.

vLLM, SGLang, llama.cpp's server, TGI, ``transformers serve`` and hosted APIs all speak it. The
``openai`` package does the HTTP (its own retries are off: ours count what they retry); requests run
on at most ``max_concurrency`` threads, so `generate` stays a plain blocking call that works inside a
running event loop (a notebook) too.

What a server returns decides what a `Completion` holds (read and checked in `reasongym.generation.replies`;
an answer that is not a completion is a one-line `ServerError` naming the server, the request and what was
wrong, never retried):

- ``n``: asked for once per prompt; a server that returns fewer choices (``transformers serve``
  ignores ``n``) gets the missing samples as parallel ``n=1`` requests, and later calls send ``n=1``
  requests from the start.
- Token ids and log-probs (``logprobs=True`` in the settings): vLLM reports the sampled tokens as
  ``"token_id:123"`` strings when asked with ``return_tokens_as_token_ids``, or a ``token_ids`` list.
  When a server gives no ids (or no log-probs) the completion is text-only: ``token_ids`` and
  ``logprobs`` are None, never zeros.
- Stop strings: OpenAI servers cut the text before the stop string; where the server names the one it
  hit (vLLM's ``stop_reason``) it is appended, as our contract says. Other servers leave it out.

``request_timeout`` caps a whole attempt, from sending the request to the last byte of the answer: the
HTTP client's own limit is per read, so a server that drips its answer would hold a request for as long as
it keeps dripping. Each attempt runs on a helper thread that the caller stops waiting for at the deadline
(the helper stops reading at its next chunk).

Why this file is long: it is one idea, a request's life (its settings, its threads, its retries, and the
reading of its answer); no part is useful without the others.
"""

from __future__ import annotations

import json
import os
import queue
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import partial
from typing import Any, Literal

from reasongym.errors import ConfigError, ServerError
from reasongym.generation.base import Completion, SamplingParams
from reasongym.generation.replies import MalformedAnswer, read_answer

BASE_URL_ENV, API_KEY_ENV = "OPENAI_BASE_URL", "OPENAI_API_KEY"
"""The variables every OpenAI-compatible client reads; we read the same ones, so one shell setup serves all."""
_ENDPOINTS = ("chat", "completions")
_BACKOFF_CAP_S = 30.0
_POLL_S = 0.05  # how often a caller waiting on an attempt looks at the deadline and at Ctrl-C


@dataclass(frozen=True)
class ServedModelConfig:
    """Where the server is and how to talk to it."""

    model: str
    """The model name the server knows (``GET /v1/models`` lists them)."""
    base_url: str | None = None
    """The API root, e.g. ``http://127.0.0.1:8000/v1``; None reads ``OPENAI_BASE_URL``."""
    api_key: str | None = None
    """Bearer token; None reads ``OPENAI_API_KEY``, else sends ``EMPTY`` (local servers want none)."""
    endpoint: Literal["chat", "completions"] = "chat"
    """``chat``: the server applies the model's chat template to chat messages. ``completions``: the
    prompt text is sent as it is (format it yourself, e.g. pass ``tokenizer`` to ``evaluate``)."""
    max_concurrency: int = 8
    """Most requests in flight at once. One `generate` call sends at most ``len(prompts) * n`` requests, so
    ``evaluate``'s ``batch_size`` times ``n`` should be at least this to keep them all busy."""
    request_timeout: float = 600.0
    """Seconds one attempt may take, from sending the request to the last byte of the answer, before it
    fails as timed out (then retried)."""
    max_retries: int = 3
    """Retries of a request after a 429, a 5xx, a timeout or a dropped connection; 0 = fail at once."""
    retry_backoff: float = 1.0
    """Seconds before the first retry; doubles with each retry (capped at 30 s), with jitter. A 429's
    ``Retry-After`` header is honoured when it asks for longer."""
    logprobs: bool = False
    """Ask for the sampled tokens' log-probs and ids (``logprobs`` plus vLLM's
    ``return_tokens_as_token_ids``). Off by default: evaluation needs text only, and some servers
    reject fields they do not know (``transformers serve`` answers 422)."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the first field whose value is not allowed."""
        if self.endpoint not in _ENDPOINTS:
            raise ConfigError(
                f"endpoint={self.endpoint!r} is not allowed; expected one of {list(_ENDPOINTS)}"
            )
        if self.base_url is not None and not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"base_url={self.base_url!r} is not allowed; expected an http:// or https:// URL"
            )
        checks = [
            ("model", self.model, isinstance(self.model, str) and bool(self.model), "a non-empty name"),
            ("max_concurrency", self.max_concurrency, self.max_concurrency >= 1, "an integer >= 1"),
            ("request_timeout", self.request_timeout, self.request_timeout > 0, "seconds > 0"),
            ("max_retries", self.max_retries, self.max_retries >= 0, "an integer >= 0"),
            ("retry_backoff", self.retry_backoff, self.retry_backoff >= 0, "seconds >= 0"),
        ]
        for name, value, ok, allowed in checks:
            if not ok:
                raise ConfigError(f"{name}={value!r} is not allowed; expected {allowed}")


@dataclass(frozen=True)
class RequestCounts:
    """What the client sent and retried since the generator was made (a snapshot)."""

    requests: int = 0
    """HTTP requests sent, retries included."""
    retries: int = 0
    """Requests sent again after a retryable failure."""
    rate_limited: int = 0
    """Answers 429 (too many requests)."""
    server_errors: int = 0
    """Answers 5xx."""
    timeouts: int = 0
    """Attempts that got no answer within ``request_timeout``."""
    connection_errors: int = 0
    """Attempts whose connection failed or dropped (server down, reset)."""


class OpenAIGenerator:
    """Sample completions from a served model (implements `Generator`).

    Args:
        settings: Server, model and client settings.

    Raises:
        ConfigError: No base URL (neither ``settings.base_url`` nor ``OPENAI_BASE_URL``), or the
            ``openai`` package is missing.

    Example:
        >>> gen = OpenAIGenerator(ServedModelConfig(model="m", base_url="http://127.0.0.1:8000/v1"))
        >>> gen.takes_messages
        True
    """

    engine_name = "served"
    """The engine's name in run folders and records (`reasongym.generation.engines.engine_identity`)."""

    def __init__(self, settings: ServedModelConfig) -> None:
        """Resolve the URL and key, and make the client; nothing is sent yet."""
        try:
            import openai
        except ImportError as exc:
            raise ConfigError("serving needs the openai package: pip install 'reasongym[serve]'") from exc
        base_url = settings.base_url or os.environ.get(BASE_URL_ENV)
        if not base_url:
            raise ConfigError(f"no server given: pass base_url (--base-url URL) or set {BASE_URL_ENV}")
        # Named `settings`, not `config`: evaluate() takes an object with `.config` for a transformers model.
        self.settings = settings
        self.base_url = base_url.rstrip("/")
        api_key = settings.api_key or os.environ.get(API_KEY_ENV) or "EMPTY"
        self._connect = partial(
            openai.OpenAI,
            base_url=self.base_url,
            api_key=api_key,
            timeout=settings.request_timeout,
            max_retries=0,
        )
        self._client = self._connect()
        self._openai = openai
        self._counts = dict.fromkeys((f.name for f in fields(RequestCounts)), 0)
        self._lock = threading.Lock()
        self._tasks: queue.SimpleQueue[Any] = queue.SimpleQueue()  # (index, task, done, abort) or None
        self._threads: list[threading.Thread] = []  # up to max_concurrency, started as calls need them
        self._server_takes_n: bool | None = None  # learnt from the first answer to an n > 1 request

    @property
    def takes_messages(self) -> bool:
        """Whether prompts are chat messages (the chat endpoint applies the model's template)."""
        return self.settings.endpoint == "chat"

    @property
    def counts(self) -> RequestCounts:
        """Requests, retries and failures so far."""
        with self._lock:
            return RequestCounts(**self._counts)

    def close(self) -> None:
        """Stop the request threads and close the HTTP connections."""
        for _ in self._threads:
            self._tasks.put(None)
        self._threads.clear()
        self._client.close()

    def __enter__(self) -> OpenAIGenerator:
        """Use as a context manager that closes the connections."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the connections."""
        self.close()

    def generate(
        self, prompts: Sequence[str | Sequence[Mapping[str, str]]], params: SamplingParams
    ) -> list[list[Completion]]:
        """Sample ``params.n`` completions for each prompt.

        Args:
            prompts: Prompt texts; for the chat endpoint also chat messages (a text becomes one user message).
            params: Sampling parameters (``top_k`` is sent as vLLM's extension field only when set).

        Returns:
            One list of ``params.n`` completions per prompt, in prompt order.

        Raises:
            ServerError: A 4xx other than 429 (at once), or a request still failing after the retries.
            ConfigError: Chat messages given to the completions endpoint.
        """
        params.check_prompt_seeds(len(prompts))
        bodies = [self._body(prompt, params) for prompt in prompts]
        per_request = 1 if self._server_takes_n is False else params.n
        jobs = [
            (prompt, first, min(per_request, params.n - first))
            for prompt in range(len(bodies))
            for first in range(0, params.n, per_request)
        ]
        results: list[list[Completion]] = [[] for _ in bodies]
        while jobs:
            answers = self._run(bodies, params, jobs)
            short = [(job, got) for job, got in zip(jobs, answers, strict=True) if len(got) < job[2]]
            for (prompt, _, _), got in zip(jobs, answers, strict=True):
                results[prompt].extend(got)
            if self._server_takes_n is None and per_request > 1:
                self._server_takes_n = not short
            # Samples a server left out (it ignores n): one n=1 request each, seeded apart.
            jobs = [
                (prompt, first + len(got) + k, 1)
                for (prompt, first, count), got in short
                for k in range(count - len(got))
            ]
        return results

    def score(self, sequences: Sequence[Sequence[int]], starts: Sequence[int]) -> list[list[float]]:
        """The served model's log-prob of each token of ``sequences[i]`` from ``starts[i]`` on.

        Each token is scored given the tokens before it: a fixed text scored, nothing sampled (a distillation
        teacher scoring a student's samples). Sent to the completions endpoint as token ids with vLLM's
        ``prompt_logprobs``, at most ``max_concurrency`` requests at once, with the retries of `generate`.

        Raises:
            ServerError: A failed request, or an answer without prompt log-probs (a server other than vLLM's).
        """
        abort = threading.Event()
        return self._run_tasks(
            [
                partial(self._score, list(ids), start, index, abort)
                for index, (ids, start) in enumerate(zip(sequences, starts, strict=True))
            ],
            abort,
        )

    def _score(self, ids: list[int], start: int, index: int, abort: threading.Event) -> list[float]:
        """One request: the prompt log-probs of ``ids[start:]``."""
        request = {
            "model": self.settings.model,
            "prompt": ids,
            "max_tokens": 1,
            "temperature": 0.0,
            "extra_body": {"prompt_logprobs": 0},
        }
        resource = self._client.completions.with_streaming_response.create
        raw, _ = self._call(resource, request, "completions", abort)
        try:
            entries = json.loads(raw)["choices"][0]["prompt_logprobs"]
            return [float(entries[j][str(ids[j])]["logprob"]) for j in range(start, len(ids))]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ServerError(
                f"POST {self.base_url}/completions (sequence {index}, scoring {len(ids) - start} tokens) answered "
                f"200 without their prompt log-probs ({type(exc).__name__}: {exc}); scoring needs a server that "
                "reports prompt_logprobs (vLLM's OpenAI server does)"
            ) from None

    def _run(
        self,
        bodies: Sequence[Mapping[str, Any]],
        params: SamplingParams,
        jobs: Sequence[tuple[int, int, int]],
    ) -> list[list[Completion]]:
        """Send one request per job on the request threads; the first failure stops the rest."""
        abort = threading.Event()
        tasks = [
            partial(self._sample, bodies[prompt], params, prompt, first, count, abort)
            for prompt, first, count in jobs
        ]
        return self._run_tasks(tasks, abort)

    def _run_tasks(self, tasks: Sequence[Callable[[], Any]], abort: threading.Event) -> list[Any]:
        """Run each task (one request) on the request threads; their answers, in order.

        The first failure stops the rest (the tasks watch ``abort``).
        """
        if len(tasks) == 1:  # nothing to overlap: no thread hand-off
            return [tasks[0]()]
        done: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        for index, task in enumerate(tasks):
            self._tasks.put((index, task, done, abort))
        while len(self._threads) < min(self.settings.max_concurrency, len(tasks)):
            self._threads.append(
                threading.Thread(target=self._serve_tasks, name="reasongym-served", daemon=True)
            )
            self._threads[-1].start()
        results: list[Any] = [None for _ in tasks]
        try:
            for _ in tasks:
                index, answer = done.get()
                if isinstance(answer, BaseException):
                    raise answer
                results[index] = answer
            return results
        except KeyboardInterrupt:
            # Ctrl-C: drop the connections of the requests in flight too, so that a server that stops work for
            # a client that left (vLLM does) stops; `transformers serve` finishes what it has received.
            abort.set()
            self._client.close()
            self._client = self._connect()  # a caller that goes on gets a working client
            raise
        finally:
            abort.set()  # after a failure or Ctrl-C: queued requests are not sent, retries stop

    def _serve_tasks(self) -> None:
        """A request thread: runs tasks until `close`.

        Daemon threads rather than a ThreadPoolExecutor: the interpreter joins an executor's threads at
        exit, so after Ctrl-C the process would wait for every request in flight (up to the timeout).
        """
        while (item := self._tasks.get()) is not None:
            index, task, done, abort = item
            try:
                done.put((index, task() if not abort.is_set() else _Cancelled()))
            except BaseException as exc:  # handed to the caller, which raises it
                done.put((index, exc))
                abort.set()  # after the put: a request it cancels reports after this failure

    def _body(self, prompt: str | Sequence[Mapping[str, str]], params: SamplingParams) -> dict[str, Any]:
        """The request fields shared by every sample of one prompt."""
        body: dict[str, Any] = {
            "model": self.settings.model,
            "max_tokens": params.max_new_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        extra: dict[str, Any] = {"top_k": params.top_k} if params.top_k else {}
        if self.settings.endpoint == "chat":
            body["messages"] = (
                [{"role": "user", "content": prompt}] if isinstance(prompt, str) else list(prompt)
            )
            if self.settings.logprobs:
                body["logprobs"] = True
        else:
            if not isinstance(prompt, str):
                raise ConfigError(
                    "the completions endpoint takes prompt text, not chat messages; use endpoint='chat' "
                    "or format the messages with the model's chat template first"
                )
            body["prompt"] = prompt
            if self.settings.logprobs:
                body["logprobs"] = 1
        if self.settings.logprobs:
            extra["return_tokens_as_token_ids"] = True
        if extra:
            body["extra_body"] = extra
        return body

    def _sample(
        self,
        body: Mapping[str, Any],
        params: SamplingParams,
        prompt: int,
        first: int,
        count: int,
        abort: threading.Event,
    ) -> list[Completion]:
        """One request for ``count`` samples of one prompt; returns what the server gave (maybe fewer)."""
        request = dict(body, n=count)
        if params.prompt_seeds is not None:  # the prompt's own seed: independent of the other prompts
            request["seed"] = params.prompt_seeds[prompt] + first
        elif params.seed is not None:  # distinct per prompt and per sample: equal seeds give equal samples
            request["seed"] = params.seed + prompt * params.n + first
        chat = self.settings.endpoint == "chat"
        path = "chat/completions" if chat else "completions"
        resource = self._client.chat.completions if chat else self._client.completions
        raw, content_type = self._call(resource.with_streaming_response.create, request, path, abort)
        asked = f"POST {self.base_url}/{path} (prompt {prompt}, {count} sample{'s' * (count > 1)}) answered 200 with"
        try:
            completions = read_answer(raw, content_type, self.settings.endpoint, count)
        except MalformedAnswer as exc:
            raise ServerError(f"{asked} {exc}") from None
        if not completions:
            raise ServerError(f"{asked} no choices")
        return completions

    def _call(
        self, create: Callable[..., Any], request: Mapping[str, Any], path: str, abort: threading.Event
    ) -> tuple[bytes, str]:
        """Send one request; retry 429, 5xx, timeouts and dropped connections with backoff, counting them.

        Returns:
            The answer's body and its content type.
        """
        openai, url = self._openai, f"{self.base_url}/{path}"
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            if abort.is_set():
                raise _Cancelled
            self._count("requests")
            wait = None
            try:
                return self._attempt(create, request, abort)
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status != 429 and status < 500:
                    raise ServerError(
                        f"server answered {_status(exc)} to POST {url}: {_message(exc)}"
                    ) from None
                self._count("rate_limited" if status == 429 else "server_errors")
                wait, failure = _retry_after(exc), f"{_status(exc)}: {_message(exc)}"
            except (openai.APITimeoutError, _Overdue):
                self._count("timeouts")
                failure = f"timed out after {self.settings.request_timeout:g} s (request_timeout)"
            except openai.APIConnectionError as exc:
                self._count("connection_errors")
                failure = f"connection failed ({_cause(exc)}); is the server running?"
            if attempt + 1 < attempts:
                self._count("retries")
                backoff = self.settings.retry_backoff * 2**attempt * random.uniform(0.5, 1.0)
                abort.wait(min(_BACKOFF_CAP_S, max(backoff, wait or 0.0)))
        raise ServerError(f"POST {url} failed after {attempts} attempt{'s' * (attempts > 1)}: {failure}")

    def _attempt(
        self, create: Callable[..., Any], request: Mapping[str, Any], abort: threading.Event
    ) -> tuple[bytes, str]:
        """One attempt on a helper thread, waited for until ``request_timeout`` from now.

        Raises `_Overdue` past that deadline and `_Cancelled` once another request of the call failed.
        """
        deadline = time.monotonic() + self.settings.request_timeout
        stop, finished, outcome = threading.Event(), threading.Event(), []

        def read() -> None:
            try:
                with create(**request) as response:
                    chunks = []
                    for chunk in response.iter_bytes():
                        if stop.is_set():  # the caller gave up on this attempt: stop reading
                            return
                        chunks.append(chunk)
                    outcome.append((b"".join(chunks), response.headers.get("content-type", "")))
            except BaseException as exc:  # handed to the caller, which raises it
                outcome.append(exc)
            finally:
                finished.set()

        threading.Thread(target=read, name="reasongym-served-attempt", daemon=True).start()
        while not finished.wait(min(_POLL_S, max(0.0, deadline - time.monotonic()))):
            if abort.is_set() or time.monotonic() >= deadline:
                stop.set()
                raise _Cancelled if abort.is_set() else _Overdue
        if not outcome:  # stopped by `stop`, which only this caller sets
            raise _Overdue
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    def _count(self, key: str) -> None:
        with self._lock:
            self._counts[key] += 1


class _Cancelled(Exception):
    """Another request of the same call failed first; this one stops without retrying."""


class _Overdue(Exception):
    """An attempt ran past ``request_timeout`` (the whole request, not one read)."""


def _status(exc: Any) -> str:
    from http import HTTPStatus

    try:
        return f"{exc.status_code} {HTTPStatus(exc.status_code).phrase}"
    except ValueError:
        return str(exc.status_code)


def _message(exc: Any) -> str:
    """The server's own message from an error body, on one line."""
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        body = inner.get("message") or inner.get("detail") if isinstance(inner, Mapping) else inner
        body = body if body is not None else exc.body
    text = " ".join(str(body if body is not None else exc.message).split())
    return text[:300] + ("..." if len(text) > 300 else "")


def _retry_after(exc: Any) -> float | None:
    try:
        return float(exc.response.headers.get("retry-after", ""))
    except (AttributeError, ValueError):
        return None


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return " ".join(str(cause or exc).split()) or type(cause or exc).__name__
