"""What an OpenAI-compatible server answered, checked before it is read: bytes in, `Completion` objects out.

A server (or a proxy in front of it) may answer 200 with anything: an HTML error page, cut-off JSON, a list,
choices without a message, content that is a list of parts or a number, a missing or textual index. Each is
a `MalformedAnswer` naming what was wrong; the client turns it into one `ServerError` line that also names
the server and the request. Required fields are checked strictly (the text, the index, the finish reason);
optional ones are read when they have the expected shape and ignored otherwise (log-probs that are not
numbers give a text-only completion, as a server that sends none does).

Token ids: vLLM reports the sampled tokens as ``"token_id:123"`` strings when asked with
``return_tokens_as_token_ids``, or a ``token_ids`` list. Stop strings: where the server names the one it hit
(vLLM's ``stop_reason``) it is appended, as our contract says.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from reasongym.generation.base import Completion, FinishReason

__all__ = ["FINISH_REASONS", "MalformedAnswer", "read_answer"]

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "eos": "stop",
    "tool_calls": "stop",
    "function_call": "stop",
    "length": "length",
}
"""A server's finish reasons, as ours."""
_TOKEN_ID = re.compile(r"^token_id:(\d+)$")
_SHOWN = 80


class MalformedAnswer(Exception):
    """A 200 answer that is not a completion; the message says what was wrong (``"invalid JSON (...)"``)."""


def read_answer(raw: bytes, content_type: str, endpoint: str, count: int) -> list[Completion]:
    """The completions of one answer to a request for ``count`` samples, in index order (maybe fewer).

    Args:
        raw: The body as received.
        content_type: Its ``content-type`` header ('' if none).
        endpoint: ``"chat"`` or ``"completions"``: where the text is (``message.content`` or ``text``).
        count: Samples asked for (``n``); a choice's index must be below it.

    Returns:
        One completion per choice, sorted by index.

    Raises:
        MalformedAnswer: The body is not JSON, not an object with a list of choices, or a choice lacks a
            field it needs or has one of the wrong type; two choices share an index; an unknown finish
            reason.
    """
    data = _decode(raw, content_type)
    if not isinstance(data, dict):
        raise MalformedAnswer(f"a JSON {_kind(data, article=False)}, not an object")
    if "choices" not in data:
        error = data.get("error")
        detail = error.get("message") if isinstance(error, dict) else error
        said = f"; it says: {_clip(str(detail))}" if detail else ""
        raise MalformedAnswer(f"no 'choices' (keys: {_clip(', '.join(map(str, data)))}){said}")
    choices = data["choices"]
    if not isinstance(choices, list):
        raise MalformedAnswer(f"'choices' that is {_kind(choices)}, not a list")
    read: dict[int, Completion] = {}
    for position, choice in enumerate(choices):
        index = _index(choice, position, count)
        if index in read:
            raise MalformedAnswer(f"two choices with index {index}")
        read[index] = _completion(choice, f"choices[{position}]", endpoint)
    return [read[index] for index in sorted(read)]


def _decode(raw: bytes, content_type: str) -> Any:
    """The JSON value of the body, or MalformedAnswer naming why there is none."""
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        problem = f"not UTF-8: byte {exc.start} is {raw[exc.start : exc.start + 1]!r}"
    except (json.JSONDecodeError, RecursionError) as exc:
        problem = str(exc) if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
    if "json" not in content_type.lower():
        shown = raw[:_SHOWN].decode("utf-8", errors="replace").strip()
        raise MalformedAnswer(f"a body that is not JSON ({content_type or 'no content-type'}: {shown!r})")
    raise MalformedAnswer(f"invalid JSON ({problem})")


def _index(choice: Any, position: int, count: int) -> int:
    """A choice's ``index``: an integer below ``count``."""
    where = f"choices[{position}]"
    if not isinstance(choice, dict):
        raise MalformedAnswer(f"{where} that is {_kind(choice)}, not an object")
    if "index" not in choice:
        raise MalformedAnswer(f"{where} without an 'index'")
    index = choice["index"]
    if isinstance(index, bool) or not isinstance(index, int):
        raise MalformedAnswer(f"{where}.index that is {_kind(index)} ({_clip(repr(index))}), not an integer")
    if not 0 <= index < count:
        raise MalformedAnswer(f"{where}.index {index} for a request of {count} sample{'s' * (count > 1)}")
    return index


def _completion(choice: dict[str, Any], where: str, endpoint: str) -> Completion:
    """One checked choice as a `Completion`: text-only unless it has one log-prob and one id per token."""
    if endpoint == "chat":
        message = choice.get("message")
        if not isinstance(message, dict):
            raise MalformedAnswer(
                f"{where} without a 'message'"
                if message is None
                else f"{where}.message that is {_kind(message)}"
            )
        text = _text(message.get("content"), f"{where}.message.content")
        logprobs = choice.get("logprobs")
        entries = logprobs.get("content") if isinstance(logprobs, dict) else None
        entries = entries if isinstance(entries, list) and all(isinstance(e, dict) for e in entries) else []
        tokens, values = [e.get("token") for e in entries], [e.get("logprob") for e in entries]
    else:
        text = _text(choice.get("text"), f"{where}.text")
        logprobs = choice.get("logprobs") if isinstance(choice.get("logprobs"), dict) else {}
        tokens, values = _list(logprobs.get("tokens")), _list(logprobs.get("token_logprobs"))
    finish = _finish_reason(choice.get("finish_reason"), where)
    stop_reason = choice.get("stop_reason")
    if choice.get("finish_reason") == "stop" and isinstance(stop_reason, str):
        text += stop_reason  # vLLM names the stop string it cut off; ours keep it
    token_ids = _token_ids(choice.get("token_ids"), tokens)
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    if token_ids is None or len(values) != len(token_ids) or not numbers:
        return Completion(text, None, None, finish)
    return Completion(text, tuple(token_ids), tuple(float(v) for v in values), finish)


def _text(value: Any, where: str) -> str:
    if value is None:  # a tool call, or an empty answer: no text
        return ""
    if not isinstance(value, str):
        raise MalformedAnswer(f"{where} that is {_kind(value)}, not a string")
    return value


def _finish_reason(reason: Any, where: str) -> FinishReason:
    if not isinstance(reason, str) or reason not in FINISH_REASONS:
        raise MalformedAnswer(
            f"{where}.finish_reason={_clip(repr(reason))}; understood: {sorted(FINISH_REASONS)}"
        )
    return FINISH_REASONS[reason]


def _token_ids(listed: Any, tokens: Sequence[Any]) -> list[int] | None:
    """Token ids from a ``token_ids`` list, or from ``"token_id:123"`` token strings; None if neither."""
    if isinstance(listed, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in listed):
        return listed
    matches = [_TOKEN_ID.match(token) if isinstance(token, str) else None for token in tokens]
    if not matches or not all(matches):
        return None
    return [int(match.group(1)) for match in matches if match]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _kind(value: Any, *, article: bool = True) -> str:
    """``an int``, ``a str``, ``a list``, ``an object``, ``null``: a JSON value's type in words."""
    names = {dict: "object", list: "list", str: "str", int: "int", float: "float", bool: "bool"}
    name = names.get(type(value))
    if name is None:
        return "null" if value is None else type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}" if article else name


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
