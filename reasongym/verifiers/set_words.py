r"""Sets of reals said in words, rewritten as the set notation the math grammar reads.

Models state a solution set in words as often as in symbols: "all real numbers", "any real number",
"the whole real line" are :math:`\mathbb{R}`; "all real numbers except 0 and 1" (also "other than",
"but not", "apart from", "excluding", "except for x = 0") is ``\mathbb{R}\setminus\{0, 1\}``, which the
grammar turns into the intervals that are left (``(-\infty,0)\cup(0,1)\cup(1,\infty)``). "No (real)
solution" (also "none", alone or in ``\text{}``) is the empty set (in a sentence:
:mod:`~reasongym.verifiers.sentences`), and ``|x| < 3`` is the interval
``(-3, 3)`` (:mod:`~reasongym.verifiers.math.shape`). A range in words with its ends stated is an interval:
"from 2 to 5 inclusive" is ``[2, 5]``, "between 2 and 5, exclusive" ``(2, 5)``, "from 2 to 5, not including 5"
``[2, 5)`` (without "inclusive", "exclusive" or the end left out, a range is not read: its ends are unknown).
One rewrite, before the grammar, so that a box, a phrase's sentence and a last sentence all read the same
words the same way.

Only these set phrases are rewritten: a sentence that merely mentions real numbers ("x is a real
number") is left alone, and the exceptions must be numbers (a letter or a word after "except" leaves
the phrase as it was, to be refused). Regexes are linear: no nested unbounded quantifiers.
"""

from __future__ import annotations

import re

__all__ = ["sets_in_words"]

_ALL_REALS = (
    r"(?:the[ \t]+set[ \t]+of[ \t]+)?(?:all|any|every)[ \t]+real[ \t]+(?:numbers?|values?)(?:[ \t]+x)?"
    r"|all[ \t]+(?:the[ \t]+)?reals"
    r"|the[ \t]+(?:entire|whole)[ \t]+real[ \t]+(?:line|number[ \t]+line)"
    r"|\\mathbb[ \t]*\{[ \t]*R[ \t]*\}"
)
_EXCEPT = (
    r"[ \t]*,?[ \t]*(?:except(?:[ \t]+(?:for|at))?|other[ \t]+than|but[ \t]+not|apart[ \t]+from|excluding)"
    r"[ \t]+"
)
_VALUE = r"(?:x[ \t]*=[ \t]*)?\$?[ \t]*[-+]?(?:\d+(?:\.\d+)?(?:/\d+)?|\\frac\{[-+\d]+\}\{\d+\})[ \t]*\$?"
_JOIN = r"(?:[ \t]*,[ \t]*(?:and[ \t]+|or[ \t]+)?|[ \t]+(?:and|or)[ \t]+)"
_SET_PHRASE = re.compile(
    rf"(?<![\w\\])(?P<all>{_ALL_REALS})(?:{_EXCEPT}(?P<out>{_VALUE}(?:{_JOIN}{_VALUE})*))?(?![\w/])",
    re.IGNORECASE,
)
_END = r"\$?[ \t]*[-+]?(?:\d+(?:\.\d+)?(?:/\d+)?|\\frac\{[-+\d]+\}\{\d+\})[ \t]*\$?"
_RANGE = re.compile(
    rf"(?<![\w\\])(?:any(?:thing|[ \t]+(?:value|number))[ \t]+)?(?:from|between)[ \t]+(?P<lo>{_END})[ \t]+(?:to|and)"
    rf"[ \t]+(?P<hi>{_END})[ \t]*,?[ \t]*(?:(?P<both>inclusive|both[ \t]+included|including[ \t]+both(?:[ \t]+ends)?)"
    rf"|(?P<neither>exclusive|both[ \t]+excluded)|(?:not[ \t]+including|excluding)[ \t]+(?P<out>{_END}))(?![\w/])",
    re.IGNORECASE,
)
_WRAPPED = re.compile(r"\\(?:text|textrm|mathrm|mbox)[ \t]*\{([^{}]{1,200})\}")
_NO_MEMBER = re.compile(
    r"(?:there[ \t]+(?:is|are)[ \t]+)?no[ \t]+(?:real[ \t]+)?(?:solutions?|roots?|zeros?|values?)|none",
    re.IGNORECASE,
)
_SPLIT = re.compile(_JOIN, re.IGNORECASE)
_VALUE_PREFIX = re.compile(r"^[ \t]*x[ \t]*=[ \t]*|\$", re.IGNORECASE)


def _as_latex(match: re.Match[str]) -> str:
    removed = match.group("out")
    if removed is None:
        return "\\mathbb{R}"
    values = [_VALUE_PREFIX.sub("", value).strip() for value in _SPLIT.split(removed)]
    return "\\mathbb{R}\\setminus\\{" + ", ".join(values) + "\\}"


def sets_in_words(text: str) -> str:
    r"""``text`` with every set of reals said in words written as set notation.

    Example:
        >>> sets_in_words("The domain is all real numbers except 0 and 2.")
        'The domain is \\mathbb{R}\\setminus\\{0, 2\\}.'
    """
    if _NO_MEMBER.fullmatch(text.strip()):
        return "\\emptyset"
    lower = text.lower()
    if "from" in lower or "between" in lower:
        text = _RANGE.sub(_range_latex, text)
    if "real" not in lower and "\\text" not in text:
        return text
    text = _WRAPPED.sub(_unwrapped, text)  # \text{all real numbers}: the words leave their wrapper
    return _SET_PHRASE.sub(_as_latex, text)


def _range_latex(match: re.Match[str]) -> str:
    lo, hi = (match.group(name).strip(" \t$") for name in ("lo", "hi"))
    out = (match.group("out") or "").strip(" \t$")
    if match.group("both"):
        closed = (True, True)
    elif match.group("neither"):
        closed = (False, False)
    elif out in (lo, hi) and lo != hi:
        closed = (out != lo, out != hi)
    else:
        return match.group(0)  # "excluding 7" for a range from 2 to 5: no set read
    return f"{'[' if closed[0] else '('}{lo}, {hi}{']' if closed[1] else ')'}"


def _unwrapped(match: re.Match[str]) -> str:
    inner = match.group(1)
    if _NO_MEMBER.fullmatch(inner.strip()):
        return "\\emptyset "
    return inner if _SET_PHRASE.search(inner) else match.group(0)
