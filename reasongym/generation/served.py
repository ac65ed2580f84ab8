"""`OpenAIGenerator`: sample from a model that a server holds, over the OpenAI-compatible HTTP protocol.

vLLM, SGLang, llama.cpp's server, TGI, ``transformers serve`` and hosted APIs all speak it. The
``openai`` package does the HTTP (its own retries are off: ours count what they retry); requests run
on at most ``max_concurrency`` threads, so `generate` stays a plain blocking call that works inside a
running event loop (a notebook) too.

What a server returns decides what a `Completion` holds:

- ``n``: asked for once per prompt; a server that returns fewer choices (``transformers serve``
  ignores ``n``) gets the missing samples as parallel ``n=1`` requests, and later calls send ``n=1``
  requests from the start.
- Token ids and log-probs (``logprobs=True`` in the settings): vLLM reports the sampled tokens as
  ``"token_id:123"`` strings when asked with ``return_tokens_as_token_ids``, or a ``token_ids`` list.
  When a server gives no ids (or no log-probs) the completion is text-only: ``token_ids`` and
  ``logprobs`` are None, never zeros.
- Stop strings: OpenAI servers cut the text before the stop string; where the server names the one it
  hit (vLLM's ``stop_reason``) it is appended, as our contract says. Other servers leave it out.

Why this file is long: it is one idea, a request's life (its settings, its threads, its retries, and the
reading of its answer); no part is useful without the others.
"""

from __future__ import annotations

import os
import queue
import random
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import partial
from typing import Any, Literal

from reasongym.errors import ConfigError, ServerError
from reasongym.generation.base import Completion, FinishReason, SamplingParams

BASE_URL_ENV, API_KEY_ENV = "OPENAI_BASE_URL", "OPENAI_API_KEY"
"""The variables every OpenAI-compatible client reads; we read the same ones, so one shell setup serves all."""
_ENDPOINTS = ("chat", "completions")
_BACKOFF_CAP_S = 30.0
_FINISH = {"stop": "stop", "eos": "stop", "tool_calls": "stop", "function_call": "stop", "length": "length"}
_TOKEN_ID = re.compile(r"^token_id:(\d+)$")


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
    """Seconds to wait for one response before the attempt fails as timed out (then retried)."""
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
        self._client = openai.OpenAI(
            base_url=self.base_url, api_key=api_key, timeout=settings.request_timeout, max_retries=0
        )
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

    def _run(
        self,
        bodies: Sequence[Mapping[str, Any]],
        params: SamplingParams,
        jobs: Sequence[tuple[int, int, int]],
    ) -> list[list[Completion]]:
        """Send one request per job on the request threads; the first failure stops the rest."""
        abort = threading.Event()
        if len(jobs) == 1:  # nothing to overlap: no thread hand-off
            prompt, first, count = jobs[0]
            return [self._sample(bodies[prompt], params, prompt, first, count, abort)]
        done: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        for index, (prompt, first, count) in enumerate(jobs):
            task = partial(self._sample, bodies[prompt], params, prompt, first, count, abort)
            self._tasks.put((index, task, done, abort))
        while len(self._threads) < min(self.settings.max_concurrency, len(jobs)):
            self._threads.append(
                threading.Thread(target=self._serve_tasks, name="reasongym-served", daemon=True)
            )
            self._threads[-1].start()
        results: list[list[Completion]] = [[] for _ in jobs]
        try:
            for _ in jobs:
                index, answer = done.get()
                if isinstance(answer, BaseException):
                    raise answer
                results[index] = answer
            return results
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
        if params.seed is not None:  # distinct per prompt and per sample: equal seeds give equal samples
            request["seed"] = params.seed + prompt * params.n + first
        if self.settings.endpoint == "chat":
            response = self._call(self._client.chat.completions.create, request, "chat/completions", abort)
        else:
            response = self._call(self._client.completions.create, request, "completions", abort)
        choices = sorted(response.choices or [], key=lambda choice: choice.index)
        if not choices or len(choices) > count:
            raise ServerError(
                f"server at {self.base_url} answered with {len(choices)} choices to a request for {count}"
            )
        return [self._completion(choice) for choice in choices]

    def _completion(self, choice: Any) -> Completion:
        extra = getattr(choice, "model_extra", None) or {}  # fields beyond OpenAI's (pydantic 2)
        if self.settings.endpoint == "chat":
            text = choice.message.content or ""
            entries = getattr(choice.logprobs, "content", None) or []
            tokens, logprobs = [e.token for e in entries], [e.logprob for e in entries]
        else:
            text = choice.text or ""
            tokens = list(getattr(choice.logprobs, "tokens", None) or [])
            logprobs = list(getattr(choice.logprobs, "token_logprobs", None) or [])
        stop_reason = extra.get("stop_reason")
        if choice.finish_reason == "stop" and isinstance(stop_reason, str):
            text += stop_reason  # vLLM names the stop string it cut off; ours keep it
        token_ids = _token_ids(extra.get("token_ids"), tokens)
        if token_ids is None or len(logprobs) != len(token_ids) or any(lp is None for lp in logprobs):
            return Completion(text, None, None, self._finish_reason(choice.finish_reason))
        return Completion(
            text,
            tuple(token_ids),
            tuple(float(lp) for lp in logprobs),
            self._finish_reason(choice.finish_reason),
        )

    def _finish_reason(self, reason: str | None) -> FinishReason:
        if reason not in _FINISH:
            raise ServerError(
                f"server at {self.base_url} ended a completion with finish_reason={reason!r}; "
                f"understood: {sorted(_FINISH)}"
            )
        return _FINISH[reason]  # type: ignore[return-value]

    def _call(
        self, create: Callable[..., Any], request: Mapping[str, Any], path: str, abort: threading.Event
    ) -> Any:
        """Send one request; retry 429, 5xx, timeouts and dropped connections with backoff, counting them."""
        openai, url = self._openai, f"{self.base_url}/{path}"
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            if abort.is_set():
                raise _Cancelled
            self._count("requests")
            wait = None
            try:
                return create(**request)
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status != 429 and status < 500:
                    raise ServerError(
                        f"server answered {_status(exc)} to POST {url}: {_message(exc)}"
                    ) from None
                self._count("rate_limited" if status == 429 else "server_errors")
                wait, failure = _retry_after(exc), f"{_status(exc)}: {_message(exc)}"
            except openai.APITimeoutError:
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

    def _count(self, key: str) -> None:
        with self._lock:
            self._counts[key] += 1


class _Cancelled(Exception):
    """Another request of the same call failed first; this one stops without retrying."""


def _token_ids(listed: Any, tokens: Sequence[str]) -> list[int] | None:
    """Token ids from a ``token_ids`` list, or from ``"token_id:123"`` token strings; None if neither."""
    if isinstance(listed, list) and all(isinstance(t, int) for t in listed):
        return listed
    matches = [_TOKEN_ID.match(token or "") for token in tokens]
    if not matches or not all(matches):
        return None
    return [int(match.group(1)) for match in matches if match]


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
