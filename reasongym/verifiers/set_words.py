r"""Sets of reals said in words, rewritten as the set notation the math grammar reads.

Models state a solution set in words as often as in symbols: "all real numbers", "any real number",
"the whole real line" are :math:`\mathbb{R}`; "all real numbers except 0 and 1" (also "other than",
"but not", "apart from", "excluding", "except for x = 0") is ``\mathbb{R}\setminus\{0, 1\}``, which the
grammar turns into the intervals that are left (``(-\infty,0)\cup(0,1)\cup(1,\infty)``). "No (real)
solution" (also "none", alone or in ``\text{}``) is the empty set (in a sentence:
:mod:`~reasongym.verifiers.sentences`), and ``|x| < 3`` is the interval
``(-3, 3)`` (:mod:`~reasongym.verifiers.math.shape`). One rewrite, before the grammar, so that a box, a
phrase's sentence and a last sentence all read the same words the same way.

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
    if "real" not in text.lower() and "\\text" not in text:
        return text
    text = _WRAPPED.sub(_unwrapped, text)  # \text{all real numbers}: the words leave their wrapper
    return _SET_PHRASE.sub(_as_latex, text)


def _unwrapped(match: re.Match[str]) -> str:
    inner = match.group(1)
    if _NO_MEMBER.fullmatch(inner.strip()):
        return "\\emptyset "
    return inner if _SET_PHRASE.search(inner) else match.group(0)
