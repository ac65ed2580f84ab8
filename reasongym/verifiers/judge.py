"""The ``judge`` verifier: a served model grades answers that no rule can (a justification, an open answer).

A model behind an OpenAI-compatible server (vLLM, ``transformers serve``, a hosted API; the ``openai``
package, ``pip install 'reasongym[serve]'``) is sent a fixed prompt of a declared version
(:data:`PROMPTS`) with the question, the reference answer and the candidate's answer, at temperature 0,
and must reply with exactly one word, ``CORRECT`` or ``INCORRECT`` (case, outer spaces and one final
period aside). Anything else is no verdict.

The candidate's answer is the policy's text, written to be paid: from prompt ``v2`` on (the default) it is
fenced and its lookalike special tokens broken up, so that it cannot write its own prompt sections or turns
(`reasongym.verifiers.judge_prompts`); ``v1`` is kept, unchanged, for the verdicts recorded with it. So:

- CORRECT / WRONG only from a reply that parses; an unparseable reply, a timeout, a server error or a
  dropped connection give an **ungradable** verdict (``correct=None``: outcome UNPARSEABLE, TIMEOUT or
  REFUSED), never a 0 or a 1, and are not cached (the next call asks again).
- Verdicts are cached by (prompt version, judge model, question, reference, answer), in memory and,
  with ``cache_path``, in a JSONL file that later runs read (a line that is not a verdict row, such as
  one a crash cut off, is skipped with a warning: `reasongym.verifiers.judge_cache`).
- :meth:`JudgeVerifier.verify_many` grades a batch: distinct uncached items are sent at most
  ``max_concurrency`` at a time (one semaphore per judge, shared by every caller in the process).

A judge is never the default: an environment uses one only when given ``judge=JudgeConfig(...)``.

**Fallback mode** (``JudgeConfig(fallback=True)``, as in TinyV and the rule-plus-model hybrids): the
rule verifier decides first, and the judge is asked only about the completions the rules reject or
cannot read (:data:`FALLBACK_OUTCOMES`). An accept is never sent, so a judge never overturns one; a
judge's CORRECT turns a rejection into an accept, its INCORRECT or a failure leaves the rule's verdict
as it was (a judge that is down grades like the rules alone). Ungradable (timeout) and refused (hostile
or oversized) rule verdicts are not sent either. The judge's verdicts are cached as above; how many
verdicts it was asked about and how many it decided is counted (:attr:`JudgeVerifier.fallback`) and
logged at INFO on the ``reasongym.verifiers.judge`` logger after every batch. What it costs depends on how
often the rules say no: on the 1,730 stored SmolLM2-135M completions of ``benchmarks/results/smollm2`` a
fallback judge would be asked about 1,644 (95.0%: 1,446 rejections, 198 unreadable), since that model is
mostly wrong; a stronger policy's share is its error rate.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reasongym.errors import ConfigError
from reasongym.verifiers.base import Outcome, Verdict
from reasongym.verifiers.judge_cache import CacheFile
from reasongym.verifiers.judge_prompts import (
    DEFAULT_PROMPT,
    MAX_ANSWER_CHARS,
    PROMPTS,
    JudgePrompt,
    defused,
    parse_judge_reply,
    render_prompt,
)

MAX_REPLY_BYTES = 1 << 20
"""The most of a judge's answer that is read: a one-word reply is a few hundred bytes."""
FALLBACK_OUTCOMES = frozenset({Outcome.WRONG, Outcome.UNPARSEABLE})
"""The rule verdicts a fallback judge is asked about: a rejection, or no answer the rules could read."""
_LOG = logging.getLogger(__name__)


@dataclass(frozen=True)
class JudgeConfig:
    """Which served model judges, with which prompt, and how requests are bounded."""

    model: str
    """The model name the server knows."""
    base_url: str | None = None
    """The API root, e.g. ``http://127.0.0.1:8000/v1``; None reads ``OPENAI_BASE_URL``."""
    api_key: str | None = None
    """Bearer token; None reads ``OPENAI_API_KEY``, else sends ``EMPTY``."""
    prompt_version: str = DEFAULT_PROMPT
    """A key of :data:`PROMPTS`; ``v1`` only to regrade what it graded (the answer could steer it)."""
    timeout: float = 30.0
    """Seconds for one request; past it the verdict is ungradable (TIMEOUT)."""
    max_concurrency: int = 4
    """Most requests in flight at once, over every caller of this judge in the process."""
    max_tokens: int = 4
    """Tokens the judge may reply with (one word is enough)."""
    cache_path: str | None = None
    """JSONL file of verdicts kept across runs; None keeps them in memory only."""
    fallback: bool = False
    """Ask the judge only where the rules reject an answer or cannot read it, never about an accept (the
    module docstring's fallback mode); False: the judge grades every answer instead of the rules."""

    def __post_init__(self) -> None:
        """Raise ConfigError naming the field, the value and what is allowed."""
        if not isinstance(self.model, str) or not self.model:
            raise ConfigError(f"JudgeConfig.model must be a non-empty model name, got {self.model!r}")
        if self.prompt_version not in PROMPTS:
            raise ConfigError(
                f"JudgeConfig.prompt_version {self.prompt_version!r} is not one of {sorted(PROMPTS)}"
            )
        if (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, (int, float))
            or not self.timeout > 0
        ):
            raise ConfigError(f"JudgeConfig.timeout must be seconds > 0, got {self.timeout!r}")
        for name in ("max_concurrency", "max_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"JudgeConfig.{name} must be an integer >= 1, got {value!r}")

    @property
    def version(self) -> str:
        """The verifier version recorded with its verdicts: ``[fallback/]judge/<prompt version>/<model>``."""
        return f"{'fallback/' if self.fallback else ''}judge/{self.prompt_version}/{self.model}"


@dataclass
class FallbackCounts:
    """What a fallback judge was asked, over the process's life (the judge's share of the verdicts)."""

    graded: int = 0
    """Rule verdicts seen."""
    asked: int = 0
    """Of them, sent to the judge (rejections and unreadable answers; cached ones included)."""
    accepted: int = 0
    """Of those, turned into accepts by the judge: the verdicts the judge decided."""
    no_verdict: int = 0
    """Of those, left as the rules said because the judge gave no verdict (a failure, an odd reply)."""

    @property
    def judge_share(self) -> float:
        """The fraction of all verdicts that the judge decided (``accepted / graded``)."""
        return self.accepted / self.graded if self.graded else 0.0


class JudgeVerifier:
    """Grades (question, reference, answer) items with a served model (module docstring).

    Args:
        config: The judge's settings.

    Raises:
        ConfigError: No base URL, or the ``openai`` package is missing.
    """

    def __init__(self, config: JudgeConfig) -> None:
        """Make the client (nothing is sent) and read the cache file, if any."""
        try:
            import openai
        except ImportError as exc:
            raise ConfigError("the judge needs the openai package: pip install 'reasongym[serve]'") from exc
        base_url = config.base_url or os.environ.get("OPENAI_BASE_URL")
        if not base_url:
            raise ConfigError(
                "the judge needs a server: pass JudgeConfig(base_url=...) or set OPENAI_BASE_URL"
            )
        self.config, self._openai = config, openai
        self._client = openai.OpenAI(
            base_url=base_url,
            api_key=config.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            timeout=config.timeout,
            max_retries=0,
        )
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._lock = threading.Lock()
        self.cache: dict[str, bool] = {}
        self.requests = 0
        self.fallback = FallbackCounts()
        self._cache_file = CacheFile(Path(config.cache_path)) if config.cache_path else None
        if self._cache_file is not None:
            self.cache.update(self._cache_file.read())

    def _key(self, question: str, reference: str | None, answer: str) -> str:
        parts = [
            self.config.prompt_version,
            self.config.model,
            question,
            reference,
            answer[-MAX_ANSWER_CHARS:],
        ]
        return json.dumps(parts)

    def _ask(self, question: str, reference: str | None, answer: str) -> Verdict:
        """One request; a failure of any kind is an ungradable verdict."""
        system, user = render_prompt(self.config.prompt_version, question, reference, answer)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        openai = self._openai
        try:
            reply = self._reply(messages)
        except (TimeoutError, openai.APITimeoutError):
            return Verdict(
                None, Outcome.TIMEOUT, None, f"The judge did not answer within {self.config.timeout:g} s."
            )
        except openai.APIStatusError as exc:
            return Verdict(None, Outcome.REFUSED, None, f"The judge server answered {exc.status_code}.")
        except (openai.APIError, ValueError, KeyError, AttributeError, IndexError, TypeError) as exc:
            return Verdict(None, Outcome.REFUSED, None, f"The judge request failed ({type(exc).__name__}).")
        judged = parse_judge_reply(reply)
        if judged is None:
            return Verdict(
                None,
                Outcome.UNPARSEABLE,
                reply[:100],
                f"The judge replied {reply[:60]!r}, not CORRECT or INCORRECT.",
            )
        return Verdict(
            judged,
            Outcome.CORRECT if judged else Outcome.WRONG,
            reply.strip()[:100],
            f"The judge replied {reply.strip()[:20]}.",
        )

    def _reply(self, messages: list[dict[str, str]]) -> str:
        """The judge's reply text, the whole request bounded by ``timeout`` (TimeoutError past it).

        Not each read but the request is bounded, so a server that drips its answer cannot hold a verdict; the
        body is read up to :data:`MAX_REPLY_BYTES`. The request holds one of the ``max_concurrency`` slots
        until its connection is done, even after a timeout (its reader stops at the next chunk).
        """
        request: dict[str, Any] = {"model": self.config.model, "messages": messages, "temperature": 0.0}
        request["max_tokens"] = self.config.max_tokens
        stop, finished, outcome = threading.Event(), threading.Event(), []
        create = self._client.chat.completions.with_streaming_response.create

        def read() -> None:
            try:
                with create(**request) as response:
                    body = b""
                    for chunk in response.iter_bytes():
                        if stop.is_set():
                            return
                        body += chunk
                        if len(body) > MAX_REPLY_BYTES:
                            raise ValueError(f"the judge's answer is over {MAX_REPLY_BYTES} bytes")
                    outcome.append(body)
            except BaseException as exc:  # handed to the caller, which raises it
                outcome.append(exc)
            finally:
                finished.set()
                self._slots.release()

        self._slots.acquire()
        with self._lock:
            self.requests += 1
        threading.Thread(target=read, name="reasongym-judge", daemon=True).start()
        if not finished.wait(self.config.timeout):
            stop.set()
            raise TimeoutError
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        content = json.loads(outcome[0])["choices"][0]["message"]["content"]
        return content if isinstance(content, str) else ""

    def _remember(self, key: str, verdict: Verdict) -> None:
        if verdict.correct is None:
            return
        with self._lock:
            self.cache[key] = verdict.correct
            if self._cache_file is not None:
                self._cache_file.append(key, verdict.correct)

    def verify_many(self, items: Sequence[tuple[str, str | None, str]]) -> list[Verdict]:
        """Grade ``(question, reference, answer)`` items; each distinct uncached one is asked once.

        Returns:
            One verdict per item, in order: cached ones say so in their reason.
        """
        keys = [self._key(*item) for item in items]
        todo = {key: item for key, item in zip(keys, items, strict=True) if key not in self.cache}
        asked: dict[str, Verdict] = {}
        if todo:
            with ThreadPoolExecutor(max_workers=min(self.config.max_concurrency, len(todo))) as pool:
                for key, verdict in zip(
                    todo, pool.map(lambda item: self._ask(*item), todo.values()), strict=True
                ):
                    asked[key] = verdict
                    self._remember(key, verdict)
        verdicts = []
        for key in keys:
            if key in asked:
                verdicts.append(asked[key])
            else:
                correct = self.cache[key]
                verdicts.append(
                    Verdict(
                        correct,
                        Outcome.CORRECT if correct else Outcome.WRONG,
                        None,
                        "The judge's cached verdict.",
                    )
                )
        return verdicts

    def verify(self, question: str, reference: str | None, answer: str) -> Verdict:
        """Grade one item (see :meth:`verify_many`)."""
        return self.verify_many([(question, reference, answer)])[0]

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()


_JUDGES: dict[JudgeConfig, JudgeVerifier] = {}
_JUDGES_LOCK = threading.Lock()


def judge_for(config: JudgeConfig) -> JudgeVerifier:
    """The process's one judge for ``config`` (environments and their copies share its cache and bound)."""
    with _JUDGES_LOCK:
        if config not in _JUDGES:
            _JUDGES[config] = JudgeVerifier(config)
        return _JUDGES[config]


def judge_verdicts(
    config: JudgeConfig, question: str, reference: str | None, answers: Sequence[str]
) -> list[Verdict]:
    """Grade several answers to one question with the shared judge of ``config``."""
    return judge_for(config).verify_many([(question, reference, answer) for answer in answers])


def fallback_verdicts(
    config: JudgeConfig,
    question: str,
    reference: str | None,
    answers: Sequence[str],
    rule_verdicts: Sequence[Verdict],
) -> list[Verdict]:
    """The rules' verdicts on ``answers``, with the judge asked only about rejections (fallback mode).

    Args:
        config: The judge's settings.
        question: The problem as the model saw it.
        reference: The gold answer.
        answers: The completions, in order.
        rule_verdicts: The rule verifier's verdict on each completion.

    Returns:
        One verdict per answer: the rule's, except where the rule rejected it (:data:`FALLBACK_OUTCOMES`)
        and the judge replied CORRECT.
    """
    judge = judge_for(config)
    asked = [k for k, verdict in enumerate(rule_verdicts) if verdict.outcome in FALLBACK_OUTCOMES]
    judged = judge.verify_many([(question, reference, answers[k]) for k in asked]) if asked else []
    verdicts = list(rule_verdicts)
    accepted = failed = 0
    for k, verdict in zip(asked, judged, strict=True):
        if verdict.correct is True:
            accepted += 1
            rule = rule_verdicts[k]
            reason = f"The rules rejected it ({rule.reason}); the judge replied CORRECT."
            verdicts[k] = Verdict(True, Outcome.CORRECT, rule.extracted, reason)
        failed += verdict.correct is None
    counts = judge.fallback
    with judge._lock:
        counts.graded += len(rule_verdicts)
        counts.asked += len(asked)
        counts.accepted += accepted
        counts.no_verdict += failed
    _LOG.info(
        "judge fallback: %d of %d verdicts asked about, %d decided by the judge (%.1f%% of all)",
        counts.asked,
        counts.graded,
        counts.accepted,
        100 * counts.judge_share,
    )
    return verdicts


__all__ = [
    "DEFAULT_PROMPT",
    "MAX_ANSWER_CHARS",
    "FALLBACK_OUTCOMES",
    "PROMPTS",
    "JudgePrompt",
    "FallbackCounts",
    "JudgeConfig",
    "JudgeVerifier",
    "fallback_verdicts",
    "judge_for",
    "judge_verdicts",
    "defused",
    "parse_judge_reply",
    "render_prompt",
]
