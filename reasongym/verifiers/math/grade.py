r"""The grading rules of math answers, all in one place, and the grader: :func:`verify_math_answer`.

``reasongym.verify(completion, gold)`` (kind "math", the default) first finds the final answer in the
completion, then compares it with the gold answer, gold first. Strict by default: a verdict is
CORRECT only when the answer is mathematically the gold; anything else is WRONG, UNPARSEABLE or
REFUSED, all with ``correct=False``, except that an ungradable gold, and a comparison that ran out of
time (TIMEOUT: the answer may well be right), give ``correct=None``, so that trainers leave the item
out rather than score it 0. Every rule below has test rows in ``tests/verifiers`` (a correct form
next to a wrong one of the same shape).

What counts as the final answer is decided by the commitment stages that every kind shares
(:mod:`reasongym.verifiers.pipeline`: :mod:`~reasongym.verifiers.segment`, :mod:`~reasongym.verifiers.claims`
with :mod:`~reasongym.verifiers.mentions` and :mod:`~reasongym.verifiers.phrases`,
:mod:`~reasongym.verifiers.commitment`); each stage lists its rule rows and says why each is there. For
math (details in :mod:`reasongym.verifiers.extract`, :mod:`reasongym.verifiers.plain` and
:mod:`reasongym.verifiers.boxes`):

- **One model of commitment** (issue 50): a new turn or question ends the completion; the answer after a
  think block comes before anything in the think block, plain claims included; answer phrases in 17
  languages; a revision replaces the answer ("Edit:", "Sorry, I meant", "but it is", "Not X but Y", and
  other languages' "Moment," or 不对); a second committed value after the decisive claim is a hedge, right
  only when every value is the gold; an aside after the answer (an approximation, a conversion, a check)
  is no claim; a box that holds a sentence answers what its phrase states; "no solution" is the empty set
  only as what a sentence states ("no solution except x = 2" states 2); unit words the unit table cannot
  convert refuse the answer, multipliers apply ("5 dozen" is 60), each currency is its own unit.

- After ``</think>`` when the completion has one; the whole text only when nothing follows it.
- The last ``\boxed{}`` (or ``\fbox{}``). Earlier boxes are earlier attempts and never count:
  ``First $\boxed{20}$, no wait: it is $\boxed{21}$`` answers 21, as in every widely used grader.
- Several boxes written together in one statement, with only separators between them (commas,
  "and", "or", "maybe", ``\quad``, math delimiters, labels such as ``x_2 =``), are one
  multi-valued answer: ``$\boxed{3}$ and $\boxed{-5}$`` is correct for the gold ``-5, 3`` (roots in
  any order, pairs ``\boxed{(1,2)}, \boxed{(3,4)}`` likewise), and wrong for any other gold: with a
  value too many or too few, and for a single-valued gold (``\boxed{723} or \boxed{729}`` is a
  hedge; ``Possible answers: \boxed{3}, \boxed{5}, \boxed{7}`` is answer spraying). More than 8
  values in one statement are wrong without grading; boxes that all state the gold (``\boxed{x=3}``
  and ``\boxed{3}``) are fine. One box holding a list of 4 or more values for a gold without a
  comma is spraying too.
- Without a box, the last ``<answer>...</answer>`` tag, then the last answer phrase ("The answer
  is", "Final Answer:", "Answer:", "####", "The answer must be", "The solutions are", "The roots
  are"): its sentence or line, the math that opens it (several ``$...$`` joined by "or"/"and"/","),
  or a display block ``$$ ... $$`` on the following lines. A sentence states its value after its
  last "is"/"are"/"="/"gives"/"get(s)"/``\in`` ("The smallest $k$ is 17"), else by its one number;
  several assignments or inequalities state them all ("x = 2 and y = -1" for ``(2, -1)``; "x = 2 or
  x = -2" for ``-2, 2``; "x ≤ -1 or x ≥ 3" for a union); "no (real) solutions" states the empty set;
  "..., but only x = 5 is valid" states 5; a remark in brackets that ends it is dropped. A value followed by plain words keeps
  only the value and its unit ("3/8 of the pizza" is 3/8, "12 apples" is 12, "16π square units"
  is 16π). A rejected alternative after it is dropped ("42, not 24 as one might first guess" is 42;
  also "rather than", "instead of"). A sentence with a negation ("It cannot be 17") or a bound ("at
  least 12", "between 10 and 12") states no value.
- **The answer the completion commits to** (issues 35, 36), read before anything above:

  - A new question written after a conclusion ends the completion: a line opening "Question:",
    "Q2.", "Problem 3", "Exercise", "### Instruction" or a "User:" turn, once the text before it has
    concluded (a box, "answer", "so", "therefore", ``</think>``). Why: a base model that keeps writing
    invents the next exercise and answers it; its answer to the asked question is the first one.
  - A phrase that reports what someone might answer commits to nothing: "One might think the answer
    is 12, but ..." (also "tempting", "naively", "at first glance", "a common mistake").
  - Commitment verbs state a value ("I'll go with 8", "I pick", "settle on"); a concession after it
    is dropped ("8, though 7 is also defensible" is 8; also "although", "while", "whereas").
  - A reason after the value is not part of it: "8 (since $2^3 = 8$)", "x = 4, because 2x = 8"
    (also "given that", "due to", "which is/gives/means"). A remark in brackets that offers
    another value ("7 (or 8 if we count the endpoint)") is a hedge and stays, to be refused.
  - A value said twice in equal forms is one answer ("1/5 or 20%", "0.5, i.e. 1/2"); two unequal
    values are a hedge ("1/5 or 25%").
  - Number words read as one number only when English grammar joins them ("two hundred and five",
    "one hundred thousand"); "five five", "twenty twenty", "one million million", "nineteen
    ninety-nine" are no number, never a sum. "a second" is a moment, not 2.
  - An operation word next to the value is read ("5 squared" is 25, "5 cubed" 125) or the answer is
    refused ("5 doubled", "5 factorial", "half of 10", "the square root of 25"): grading the bare
    operand paid the operand.
  - A decimal comma in prose: "1,5" and "2,75" are 1.5 and 2.75 (one, two, or four or more digits
    after the comma; three digits are a thousands group, "1,500"; in brackets "(2,3)" is a pair). In
    an answer phrase or a box a comma still separates values ("-2,1" is two roots), as MATH golds do.
- **What a reader of the rendered text sees** (issue 35, round 4), read before anything else, for every
  kind: HTML tags are dropped (``<b>``, ``<strong>``, ``<br>`` a line break, ``<sup>2</sup>`` is ``^{2}``)
  and struck-out text is gone (``~~12~~ 15`` answers 15: its writer retracted 12); points written with
  semicolons are points (``(1; 2)``, ``(1,5; 2)`` is (1.5, 2)); dot groups where they cannot be decimals
  are thousands (``1.000.000``, ``2.500,50``, ``2.500 Euro``). Also: a last line "Label: value" (one to
  three words, any script: "In short: 30 km", "Ответ: (1; 2)", "Expanding: x**2 + 1") states its value; in
  a sentence that concludes (", so", ", therefore") only the last clause is read; a condition after the
  value is not part of it ("The minimum is 3, attained at x = 5", ", when ...", ", where ..."); a remark
  in brackets that opens with a revision word revises ("12 (wait, that's the perimeter; the area is 9)"
  answers 9); "The answer is not an integer; it is 7/2" answers 7/2; a tool call's arguments answer
  (``{"name": "final_answer", "arguments": {"value": "3/4"}}``); "7! = 5040" after a phrase is one chain
  (the "!" of a factorial before "=" ends no sentence); a math line "exact ≈ decimal" is read whole.
- **Words after the answer revise it.** When the text after the final box, tag or phrase holds a
  revision ("wait", "actually", "oops", "hmm", "no,", "on second thought", "I made a mistake",
  "let me recount ...") and a sentence after it states a value as above, that value is the answer:
  ``... $\boxed{24}$ ways. Wait, actually, rotations are the same, so divide by 4: that gives 6
  seatings.`` answers 6; a correction said without a verb counts too ("\\boxed{5}. Oops, 6.", "No wait,
  it's 6.", "Wait, actually, six."). Why: a model that corrects itself in words has changed its final claim, and
  rewarding the box would pay the mistake it retracted. A revision that states no value ("Wait,
  let me double-check. Yes.") and a remark without a revision word leave the answer as it was.
- Without a box, tag or phrase, a display block ``$$ ... $$`` or ``\[ ... \]`` that ends the text,
  else the last sentence's value, read as above (a final inequality "So x ≤ 3." counts; questions that
  end the text are skipped), when the text ends with a finished sentence: "So the number of handshakes is **36**.", "The value of $f(-1)$ is $- 3$.",
  "So x ∈ (−∞, 3)." A last sentence that opens with "If"/"Suppose" and sets up its case with a
  number the completion has not used ("If she pays with a $20 bill she gets $7.50 back.") is an
  aside: the sentence before it is read.
- Else the last number, with a unit written after it (``24 m^2``, ``25%``, "2 hours 30
  minutes"); a number in an exponent is not a number of the text, and there is no answer when the
  number ends an expression (``1 + 1 + 1``) or a hedge, follows a negation or a bound ("x cannot
  be 3", "at least 12"), or is the second member of a pair (``(2,3)``).
- **When a number in words is read.** Inside an answer (a box, a tag, a phrase's sentence, the last
  sentence's value) always: "twelve", "two hundred and five", "negative three", "1.5 million",
  ordinals ("third" is 3, ``15^{\text{th}}``, ``\text{first}``), fractions ("two thirds",
  "one-quarter", "a half", "3 over 4"). As the last number: a number in words counts when it comes
  after the last number in digits and ends the text with a full stop ("... so four boxes hold
  twelve.", "She finished third."), never a lone "one" (mostly a pronoun). Why: inside prose these
  words are rarely values ("into two groups", "the third step", "First, ..."); ending a claim they
  are.
- No answer (UNPARSEABLE): an unclosed box (truncated output; no fall back to phrases), nothing
  found. REFUSED: more than 64 boxes, a box of more than 5,000 characters, a phrase answer of
  more than 1,000 characters, a completion of more than 1,000,000 characters. A long answer is
  refused whole; it is never graded on a cut-off piece.

Parsing. Both strings are read by our own grammar (:mod:`parser`); model text never reaches
``eval``, ``sympify``, ``parse_expr`` or a LaTeX parser. Understood: integers, negatives (also
U+2212), decimals, thousands groups in one spelling throughout a number, every group after the
first of three digits (``1,000``, ``1\,000``, ``1{,}000``, ``14{, }916``, ``1,\!000,\!000``; a
plain comma group only outside brackets, so ``(1,000)`` is a pair; a space, thin or no-break space,
``\;`` or ``~`` only after a first group of one to three digits, so ``1 000`` is 1000 and ``2 3`` is
not 23), colons (``4:30 pm``, ``7:15\text{ p.m.}``, ``3:1``), fractions (``a/b``, ``\frac``,
``\dfrac``, ``\tfrac``, ``\frac12``), mixed numbers (``3\frac12``, ``3 1/2``), percent, scientific
notation (``2e3``, ``2\times10^3``), repeating decimals (``0.1\overline{6}``, ``0.(3)``; ``0.666...``
is the decimal cut off), roots, powers (``^``
and ``**``), ``\pi``, ``e``, ``i``, trig/log/ln/exp, implicit products (also ``2^6 3^5``),
``\left( \right)``, ``\cdot``, ``\times``, ``\div``, degrees, base subscripts (``204_5``),
``11_{10}`` (a plain decimal number), ``\text{}``/``\mathrm{}``/``\boxed{}`` wrappers,
``$``/``\(..\)`` delimiters, Unicode math (``ℝ``, ``∈``, ``≈``, ``∅``), numbers in words (see above),
currency signs (``$``, ``€``, ``£``, ``¥``, ``₹``: only the amount counts), variables with
subscripts, a leading ``x =`` / ``x \in`` / ``f(x) =`` / ``f'(x) =`` / ``f^{-1}(x) =`` label, tuples,
sets, set-builder notation (``\{x \mid 1 < x \le 2\}`` is ``(1, 2]``), intervals (also the French
``]2, 5[`` and ``[0, 3[``) and unions, matrices and their sums and scalar multiples (computed entry by
entry), vectors in ``\mathbf{i}``, ``\mathbf{j}``, ``\mathbf{k}`` (``\hat{i}``, ``\vec{i}``; the column of
coefficients), equations and inequalities (also ``1 < g(x) < 4`` and ``-x > -2``), units with
exponents (``6\text{ m}^{2}``), units on the members of a chain (``5\sqrt2 cm \approx 7.07 cm``) and
quantities of one kind written together ("2 hours 30 minutes" is 150 minutes). Anything else is
UNPARSEABLE with the reason.

Sets and conditions (issue 35, item 11), one set however it is written: "all real numbers", "any real
number", ``\mathbb{R}``, "all real numbers except 0 and 1" (``\mathbb{R}\setminus\{0, 1\}``, the intervals
left), "from 2 to 5 inclusive" (``[2, 5]``; "not including 5" ``[2, 5)``; without either word a range is
no set), "no solution", "none" and ``\text{no solution}`` (``\emptyset``), ``|x - c| < r`` (the interval
``(c - r, c + r)``; ``|x| > 3`` two rays), inequalities joined by "and" (their intersection: "x > 2 and
x < 5" is ``(2, 5)``) or by "or" (their union). Also read: ``\textcolor{c}{15}``, ``\color{c} 15``,
``\underline{20}`` (the content), ``n \equiv 5 \pmod{7}`` (the residue 5), ``143_{(5)}``, ``[[1, 2], [3,
4]]`` (a matrix), Indian and Swiss groups (``10,00,000``, ``1'000'000``), ``1.2E+05``, "infinity", "12
dollars and 50 cents" (money in its currency: 12.5), "60 kilometres per hour", a left side of function
values at numbers (``f^{-1}(0)+f^{-1}(6) = 0`` states 0), ``\text{ans} = 12``.

Refusals, decided before computing (REFUSED, ``correct=False``): more than 2,000 characters or
2,000 digits, brackets nested more than 50 deep, or any value needing more than 10,000 digits
(huge powers, towers, factorials, binomials), estimated without computing it.

Equality (see :mod:`equivalence`, :mod:`numeric`, :mod:`relations`, :mod:`sets`, :mod:`forms`):

- **How decimals compare** (rules in :mod:`decimals`). Exact values compare exactly: ``\sqrt8``
  equals ``2\sqrt2``, ``1/2^{99}`` is not ``1/2^{98}``, ``3.14`` is not ``\pi``.

  * A decimal gold is its value, never a range: gold ``0.3`` rejects ``0.25``, ``0.34`` and
    ``0.349``, gold ``2.5`` rejects ``2.54``, gold ``12.50`` rejects ``12.504``. Why: GSM8K-style
    golds such as ``0.3`` or ``12.50`` are exact, and reading them as roundings paid wrong answers.
  * A decimal gold with at least two decimals and two significant digits (``0.33``, ``0.14``,
    ``1.41``, ``6.67 \times 10^{-1}``) may round a value it cannot write out: it accepts an answer
    whose decimals never end (``1/3``, ``1/7``, ``\sqrt2``, ``\pi``; written without a decimal
    point) that rounds to it, and a longer decimal of such a fraction with a denominator of at most
    12 that rounds to it (``0.333`` for ``0.33``: 0.333 is 1/3); nothing else (``0.334``, ``1/8``
    for ``0.13``). One decimal or one significant digit (``0.3``, ``0.05``) is too coarse to be a
    rounding: ``0.3`` rejects ``1/3``. A gold printed from a float (``1.4142135623730951``) accepts
    ``\sqrt2`` (no decimal gold is held to more than a double's precision).
  * A fraction gold whose decimals never end (``1/3``, ``2/7``) accepts a decimal with three or
    more significant digits that is its rounding or cut-off at the last digit (``0.333``,
    ``0.3333``, ``0.286`` and ``0.285`` for ``2/7``), not ``0.3``, ``0.33`` or ``0.334``. Why three:
    two digits (``0.67``) round too many other values to name this one. An irrational gold
    (``\pi``, ``\sqrt2``) asks for its exact form: a decimal needs about ten significant digits
    (``3.141592654`` is ``\pi``; relative error at most 5e-10). An integer gold, and any gold whose
    decimals end (``3/4``), accepts no rounding.
- Expressions with variables: a disagreement at fixed random points (positive reals, complex
  points to their right) is final (``2x`` is not ``2y``). Agreement is then settled by a wider
  numeric test: when both sides have the same variables, use no abs/floor/ceil, and agree at ten
  random points across the plane (reals of both signs, complex points in all four quadrants) to
  more than 45 digits, and again to twice the precision, they are equal (``\tan x \sin 2x`` is
  ``2\sin^2 x``). Otherwise sympy decides (expand, cancel, the sin/cos form, simplify, Fu's trig
  rules; in a worker, under ``timeout``): equal only if it reduces the difference to 0.
- Variables are complex unknowns; nothing is assumed about them. So identities that hold only for
  positive (or real) values are not identities: ``\sqrt{1/m}`` is not ``\frac{1}{\sqrt m}`` (they
  differ for negative m), ``\ln(a^2)`` is not ``2\ln a``, ``\sqrt{x^2}`` is not ``x``. Decided on
  purpose: the grader sees only the two answers, never the problem, so it cannot know that a
  variable is positive, and accepting these for every gold would accept real errors. math-verify
  rejects them too: 9 of the 10 such pairs measured in benchmarks/README.md (it accepts
  ``\sqrt{x^2}`` for ``|x|``, treating variables as real).
- Labels are ignored: ``x = 3`` equals ``3`` and the reverse; but a variable named on both sides
  must be the same variable (``y = 3`` is wrong for the gold ``x = 3``). A relation that names a value reads
  as a label: ``PQ = 4``, ``|PQ| = 5``, ``\frac{OM}{ON} = 2``, ``S_1:S_2 = 3:7``, and chains such as
  ``p + q = q + p = 57``, ``a + 2z = 2z + a = 101`` or ``m + n = 3 + 4 = 7`` (see :mod:`relations`). A two-member relation in
  lower-case letters is not a named value: a gold ``x + y = 5`` is a line, and ``5`` is no answer
  to it; an answer ``m + n = 7`` might be an unsolved equation. An unsolved equation is not a
  value (``2x = 6`` is not ``x = 3``).
- Named assignments (a gold list whose items name different unknowns, ``a=2, b=3``, ``PQ=4,
  RS=6``) match by name: ``b=3, a=2`` is right, ``a=3, b=2`` wrong. Values named otherwise or not
  at all (``2, 3``, ``(a, b) = (2, 3)`` reads by its names) are taken in the gold's order.
- Tuples/points/vectors are ordered; sets and bare solution lists (``1, 2``, ``x=1, x=2``,
  ``1 and 2``, ``x = 1 or x = 2``) are unordered; ``\pm`` in them stands for both values
  (``\{1\pm\sqrt5, -2\}`` has three members). Several values for a single-valued gold are a
  hedge and WRONG (``1 or 2`` for gold ``1``). A comma followed by a space separates values:
  ``32, 349`` is two values, not 32349 (digit groups are ``32,349`` or ``32{,}349``).
- Equations are the same relation when one difference is a non-zero constant multiple of the
  other: ``3x-3y=6`` is ``x-y=2``, ``y=\frac23x-1`` is ``2x-3y-3=0``. Inequalities compare side by
  side (``5 \ge x`` is ``x \le 5``); a solved inequality equals its interval (``2 \le x < 5`` is
  ``[2,5)``, ``x > 3`` is ``(3,\infty)``); an unsolved one (``2x + 1 > 7``) is not.
- A chain ``exact = approximation`` (``\sqrt{51} \approx 7.14``) is graded by its exact member
  when every other member agrees with it (a decimal must be its rounding or truncation; see
  :mod:`forms`); an inconsistent chain (``x = 3+3 = 7``) is WRONG. A gold chain
  (``\frac{\sqrt3}{3} \approx 0.577``) accepts its exact value and the decimal it states.
- Sets of reals: unions are normalised before comparing (``\{2,5\}\cup\{7\}`` is ``\{2,5,7\}``,
  ``[1,2]\cup[2,3]`` is ``[1,3]``, ``\{1\}\cup(1,3)`` is ``[1,3)``); intervals need the same ends
  and the same open/closed ends.
- Colons between whole numbers: two clock-shaped answers (``h:mm``, ``h:mm:ss``) or any with
  am/pm are clock times and compare field by field: ``4:30`` is not ``2:15`` though 4/30 = 2/15;
  ``4:30 p.m.`` accepts ``4:30``, ``4:30 PM`` and ``16:30``. Otherwise they are ratios: ``3:1``
  accepts ``6:2``, ``9:24`` accepts ``3:8``. Against a number, ``a:b`` is the quotient (gold
  ``1:2`` accepts 0.5; a number never states a time, so gold ``4:30`` accepts 2/15), except
  with am/pm.
- Percent: gold ``25\%`` accepts ``25\%``, ``25`` and ``0.25``; gold ``25`` accepts ``25\%`` but
  not ``0.25`` or ``2500``. A gold below 1 (a probability, a share) reads a percent only as
  hundredths: gold ``0.5`` accepts ``50\%`` and rejects ``0.5\%`` (which is 0.005).
- Units: converted within a dimension (gold ``5 m`` accepts ``5``, ``5 meters``, ``500 cm``;
  ``60 minutes`` is ``1 hour``; ``8 cm^3`` is ``8 mL``; speeds ``km/h``, ``mph``, ``kph``, knots), wrong across units or dimensions
  (``5 cm`` for ``5 m``, ``6 m`` for ``6 m^2``). A gold without a unit ignores the prediction's
  unit and counting words (``5 apples`` for ``5``). Money: ``$5``, ``\$5``, ``5 dollars``,
  ``500 cents``. A gold in degrees accepts the bare number.
- Base subscripts compare digits: gold ``204_5`` accepts ``204`` and ``204_5``, not ``204_6`` or 54.
- Text golds (``\text{(C)}``, ``Monday``) compare case-insensitively, word by word; words also
  match a gold spelled in letters (``\text{No}`` for ``No``, ``\text{C}`` for ``C``).

Outcomes: CORRECT; WRONG; UNPARSEABLE (``correct=False``, or ``correct=None`` when the gold
itself cannot be parsed, so trainers skip the item); REFUSED; TIMEOUT (the symbolic work ran out of
the call's time budget, ``correct=None``: ungradable, never a wrong answer). One budget, ``timeout``
seconds, covers every sympy step of one comparison (and, in ``verify``, every box of one answer).
"""

from __future__ import annotations

from collections.abc import Sequence

from reasongym.errors import VerifierTimeout
from reasongym.verifiers.base import VERIFY_TIMEOUT_S, Outcome, Verdict, check_timeout
from reasongym.verifiers.math.equivalence import answers_equal
from reasongym.verifiers.math.nodes import AnswerRejected, Labeled, Node, Refused, Seq
from reasongym.verifiers.math.remembered import answer_tree, gold_tree, settled_match

__all__ = ["verify_math_answer", "verify_math_statement"]

_SHOWN_CHARS = 200


def _rejected(error: AnswerRejected, shown: str) -> Verdict:
    """The verdict for an answer the parser refused (too costly) or did not understand."""
    if isinstance(error, Refused):
        return Verdict(False, Outcome.REFUSED, shown, f"answer refused: {error.reason}")
    return Verdict(False, Outcome.UNPARSEABLE, shown, f"answer not understood: {error.reason}")


def _shown(answer: str) -> str:
    answer = answer.strip()
    return answer if len(answer) <= _SHOWN_CHARS else answer[:_SHOWN_CHARS] + "..."


def verify_math_answer(answer: str, gold: str, *, timeout: float = VERIFY_TIMEOUT_S) -> Verdict:
    r"""Grade an extracted math answer against the gold answer (rules in the module docstring).

    Args:
        answer: The answer already extracted from a completion, e.g. ``"x = \frac{1}{2}"``.
        gold: The gold answer, e.g. ``"\frac12"``.
        timeout: Seconds allowed for the comparison's sympy steps together, which run in a worker
            process. Integers, decimals, fractions, percents and simple radicals never reach sympy.

    Returns:
        A :class:`~reasongym.verifiers.base.Verdict`; it never raises for any pair of strings.

    Raises:
        ConfigError: ``timeout`` is not a number of seconds in (0, MAX_TIMEOUT_S].

    Example:
        >>> verify_math_answer("0.5", r"\frac{1}{2}").correct
        True
        >>> verify_math_answer("1 or 2", "1").outcome.value
        'wrong'
    """
    timeout = check_timeout("timeout", timeout)
    parsed_gold = gold_tree(gold) if isinstance(gold, str) else AnswerRejected("the gold is not a string")
    if isinstance(parsed_gold, AnswerRejected):
        return Verdict(None, Outcome.UNPARSEABLE, None, f"gold answer cannot be graded: {parsed_gold.reason}")
    if not isinstance(answer, str):
        return Verdict(False, Outcome.UNPARSEABLE, None, "no answer was given")
    shown = _shown(answer)
    parsed = parsed_gold if answer == gold else answer_tree(answer)  # an answer written as the gold: its tree
    if isinstance(parsed, AnswerRejected):
        return _rejected(parsed, shown)
    try:
        match = settled_match(gold, answer, (parsed_gold, parsed), timeout)
    except VerifierTimeout:
        return Verdict(None, Outcome.TIMEOUT, shown, f"the symbolic comparison ran past {timeout:g} s")
    except Refused as error:
        return Verdict(False, Outcome.REFUSED, shown, f"answer refused: {error.reason}")
    outcome = Outcome.CORRECT if match.equal else Outcome.WRONG
    return Verdict(match.equal, outcome, shown, match.reason)


def _values(node: Node) -> tuple[Node, ...]:
    """The values one box states: a bare list counts as its items, anything else as one value."""
    return node.items if isinstance(node, Seq) and node.kind == "list" else (node,)


def verify_math_statement(answers: Sequence[str], gold: str, *, timeout: float = VERIFY_TIMEOUT_S) -> Verdict:
    r"""Grade several answers written together (``$\boxed{3}$ and $\boxed{-5}$``) as one answer.

    They are one multi-valued answer: correct when the gold has several values and the answers'
    values together equal them (the gold's order for a tuple, any order for a list or set); wrong
    for a single-valued gold (a hedge, or answer spraying).

    Args:
        answers: The answers, each already extracted (one per box).
        gold: The gold answer, e.g. ``"-5, 3"``.
        timeout: Seconds allowed for the comparison's sympy steps together.

    Returns:
        The :class:`~reasongym.verifiers.base.Verdict`; ``extracted`` joins the answers with ", ".

    Example:
        >>> verify_math_statement(["3", "x = -5"], "-5, 3").correct
        True
        >>> verify_math_statement(["3", "-5", "7"], "-5, 3").correct
        False
    """
    shown = _shown(", ".join(answer.strip() for answer in answers))
    parsed_gold = gold_tree(gold) if isinstance(gold, str) else AnswerRejected("the gold is not a string")
    if isinstance(parsed_gold, AnswerRejected):
        return Verdict(None, Outcome.UNPARSEABLE, None, f"gold answer cannot be graded: {parsed_gold.reason}")
    gold_values = parsed_gold.value if isinstance(parsed_gold, Labeled) else parsed_gold
    if not isinstance(gold_values, Seq) or len(gold_values.items) < 2:
        reason = f"{len(answers)} different values stated together for a single-valued gold (answer spraying)"
        return Verdict(False, Outcome.WRONG, shown, reason)
    values: list[Node] = []
    for answer in answers:
        parsed = answer_tree(answer)
        if isinstance(parsed, AnswerRejected):
            return _rejected(parsed, shown)
        values.extend(_values(parsed))
    try:
        match = answers_equal(parsed_gold, Seq("list", tuple(values)), timeout=timeout)
    except VerifierTimeout:
        return Verdict(None, Outcome.TIMEOUT, shown, f"the symbolic comparison ran past {timeout:g} s")
    except Refused as error:
        return Verdict(False, Outcome.REFUSED, shown, f"answer refused: {error.reason}")
    return Verdict(match.equal, Outcome.CORRECT if match.equal else Outcome.WRONG, shown, match.reason)
