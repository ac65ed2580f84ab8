"""The small table of units that answers may carry, and how a unit tail is read.

A unit is a scale factor times a product of base dimensions, so that ``500 cm`` and ``5 m``
compare equal, ``60 minutes`` equals ``1 hour``, and ``5 cm`` is never ``5 m``. Words that are not
in the table (``5 apples``, ``12 square units``) are counting words and are ignored.
"""

from __future__ import annotations

from fractions import Fraction

from reasongym.verifiers.math.nodes import Unit

__all__ = ["DEGREE", "DOLLAR", "PERCENT_WORDS", "SHORT_UNIT_WORDS", "lookup_unit", "combine_units"]

F = Fraction

# name variants -> (dimension, factor in the dimension's base unit, pi power)
_TABLE: dict[tuple[str, ...], tuple[str, Fraction, int]] = {
    # length, base metre
    ("mm", "millimeter", "millimeters", "millimetre", "millimetres"): ("length", F(1, 1000), 0),
    ("cm", "centimeter", "centimeters", "centimetre", "centimetres"): ("length", F(1, 100), 0),
    ("m", "meter", "meters", "metre", "metres"): ("length", F(1), 0),
    ("km", "kilometer", "kilometers", "kilometre", "kilometres"): ("length", F(1000), 0),
    ("inch", "inches"): ("length", F(254, 10000), 0),
    ("ft", "foot", "feet"): ("length", F(3048, 10000), 0),
    ("yd", "yard", "yards"): ("length", F(9144, 10000), 0),
    ("mi", "mile", "miles"): ("length", F(1609344, 1000), 0),
    # mass, base gram
    ("mg", "milligram", "milligrams"): ("mass", F(1, 1000), 0),
    ("g", "gram", "grams"): ("mass", F(1), 0),
    ("kg", "kilogram", "kilograms"): ("mass", F(1000), 0),
    ("lb", "lbs", "pound", "pounds"): ("mass", F(45359237, 100000), 0),
    ("oz", "ounce", "ounces"): ("mass", F(45359237, 1600000), 0),
    # time, base second
    ("s", "sec", "secs", "second", "seconds"): ("time", F(1), 0),
    ("min", "mins", "minute", "minutes"): ("time", F(60), 0),
    ("h", "hr", "hrs", "hour", "hours"): ("time", F(3600), 0),
    ("day", "days"): ("time", F(86400), 0),
    ("week", "weeks"): ("time", F(604800), 0),
    # volume, base millilitre (cm^3 converts through length)
    ("mL", "ml", "milliliter", "milliliters", "millilitre", "millilitres"): ("volume", F(1), 0),
    ("L", "liter", "liters", "litre", "litres"): ("volume", F(1000), 0),
    ("gallon", "gallons"): ("volume", F(3785411784, 1000000), 0),
    # angle, base degree
    ("deg", "degree", "degrees"): ("angle", F(1), 0),
    ("rad", "radian", "radians"): ("angle", F(180), -1),
    # money, base dollar
    ("dollar", "dollars", "USD"): ("money", F(1), 0),
    ("cent", "cents"): ("money", F(1, 100), 0),
}

_UNITS: dict[str, Unit] = {}
for _names, (_dim, _factor, _pi) in _TABLE.items():
    for _name in _names:
        _UNITS[_name] = Unit(_names[0], ((_dim, 1),), _factor, _pi)

# One millilitre is one cubic centimetre: volume units are stored as length^3 so both forms mix.
for _name, _unit in list(_UNITS.items()):
    if _unit.dims == (("volume", 1),):
        _UNITS[_name] = Unit(_unit.name, (("length", 3),), _unit.factor / 1000000, 0)

# Speeds written as one word: "60 mph" against a gold in km/h is another unit, never a bare 60.
_SPEEDS = {
    ("mph", "mi/h"): F(1609344, 1000 * 3600),
    ("kph", "kmph", "kmh"): F(1000, 3600),
    ("knot", "knots", "kn"): F(1852, 3600),
}
for _names, _factor in _SPEEDS.items():
    for _name in _names:
        _UNITS[_name] = Unit(_names[0], (("length", 1), ("time", -1)), _factor, 0)

DEGREE = _UNITS["degree"]
DOLLAR = _UNITS["dollar"]
PERCENT_WORDS = frozenset({"percent", "pct"})
# Words of two or three letters that the lexer must keep whole instead of reading as products of
# single-letter variables (``cm`` is not ``c*m``).
SHORT_UNIT_WORDS = frozenset(name for name in _UNITS if 2 <= len(name) <= 3)
_SINGLE_LETTER_UNITS = frozenset(name for name in _UNITS if len(name) == 1)
POWER_WORDS = {"square": 2, "sq": 2, "cubic": 3, "cu": 3}


def lookup_unit(word: str) -> Unit | None:
    """The unit a word names (case-sensitive first, then lower-case), or None."""
    unit = _UNITS.get(word)
    if unit is None and len(word) > 1:
        unit = _UNITS.get(word.lower())
    return unit


def is_single_letter_unit(letter: str) -> bool:
    """True for the one-letter unit symbols (m, g, s, h, L)."""
    return letter in _SINGLE_LETTER_UNITS


def combine_units(parts: list[tuple[Unit, int]]) -> Unit:
    """The product of units raised to integer powers (``km``, ``h``, -1 gives km/h)."""
    dims: dict[str, int] = {}
    factor = Fraction(1)
    pi_power = 0
    names = []
    for unit, power in parts:
        for dim, exp in unit.dims:
            dims[dim] = dims.get(dim, 0) + exp * power
        factor *= unit.factor**power
        pi_power += unit.pi_power * power
        names.append(unit.name if power == 1 else f"{unit.name}^{power}")
    kept = tuple(sorted((dim, exp) for dim, exp in dims.items() if exp != 0))
    return Unit(" ".join(names), kept, factor, pi_power)
