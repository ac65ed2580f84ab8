"""The table of units that answers may carry, the multipliers, and the unit words the table refuses.

A unit is a scale factor times a product of base dimensions, so that ``500 cm`` and ``5 m`` compare equal,
``60 minutes`` equals ``1 hour``, and ``5 cm`` is never ``5 m``. Each currency is a dimension of its own
(``5 euros`` is never ``5 dollars``). Three kinds of words after a value:

- a unit of the table: converted (``5000 ms`` is ``5 s``; ``5 tonnes`` is ``5000 kg``);
- a multiplier (:data:`MULTIPLIERS`): applied ("5 dozen" is 60, "5 grand" 5000, "5 lakh" 500,000);
- a unit word the table cannot convert (:func:`is_unknown_unit`: "tons", "stones", "acres-feet", prefixed
  SI symbols not in the table such as ``Mm`` or ``fs``): the answer is refused, never read as the bare
  number. Why: "5 years" for "5 days" and "5 ms" for "5 s" were paid when the word was dropped;
- any other word is a counting word and is ignored (``5 apples``, ``12 square units``).
"""

from __future__ import annotations

import re
from fractions import Fraction

from reasongym.verifiers.math.nodes import Unit

__all__ = [
    "CURRENCY_SIGNS",
    "DEGREE",
    "DOLLAR",
    "MULTIPLIERS",
    "PERCENT_WORDS",
    "SHORT_UNIT_WORDS",
    "UNIT_POWER_WORDS",
    "combine_units",
    "is_unknown_unit",
    "lookup_unit",
]

F = Fraction

# name variants -> (dimension, factor in the dimension's base unit, pi power)
_TABLE: dict[tuple[str, ...], tuple[str, Fraction, int]] = {
    # length, base metre
    ("mm", "millimeter", "millimeters", "millimetre", "millimetres"): ("length", F(1, 1000), 0),
    ("cm", "centimeter", "centimeters", "centimetre", "centimetres"): ("length", F(1, 100), 0),
    ("m", "meter", "meters", "metre", "metres"): ("length", F(1), 0),
    ("km", "kilometer", "kilometers", "kilometre", "kilometres"): ("length", F(1000), 0),
    ("inch", "inches"): ("length", F(254, 10000), 0),
    ("nm", "nanometer", "nanometers", "nanometre", "nanometres"): ("length", F(1, 10**9), 0),
    ("μm", "um", "micrometer", "micrometers", "micrometre", "micrometres", "micron", "microns"): (
        "length",
        F(1, 10**6),
        0,
    ),
    ("ft", "foot", "feet"): ("length", F(3048, 10000), 0),
    ("yd", "yard", "yards"): ("length", F(9144, 10000), 0),
    ("mi", "mile", "miles"): ("length", F(1609344, 1000), 0),
    # mass, base gram
    ("mg", "milligram", "milligrams"): ("mass", F(1, 1000), 0),
    ("g", "gram", "grams"): ("mass", F(1), 0),
    ("kg", "kilogram", "kilograms"): ("mass", F(1000), 0),
    ("μg", "mcg", "microgram", "micrograms"): ("mass", F(1, 10**6), 0),
    ("tonne", "tonnes"): ("mass", F(10**6), 0),
    ("lb", "lbs", "pound", "pounds"): ("mass", F(45359237, 100000), 0),
    ("oz", "ounce", "ounces"): ("mass", F(45359237, 1600000), 0),
    # time, base second
    ("ns", "nanosecond", "nanoseconds"): ("time", F(1, 10**9), 0),
    ("μs", "microsecond", "microseconds"): ("time", F(1, 10**6), 0),
    ("ms", "msec", "millisecond", "milliseconds"): ("time", F(1, 1000), 0),
    ("s", "sec", "secs", "second", "seconds"): ("time", F(1), 0),
    ("min", "mins", "minute", "minutes"): ("time", F(60), 0),
    ("h", "hr", "hrs", "hour", "hours"): ("time", F(3600), 0),
    ("day", "days"): ("time", F(86400), 0),
    ("week", "weeks"): ("time", F(604800), 0),
    ("month", "months"): ("time", F(86400 * 365, 12), 0),
    ("yr", "yrs", "year", "years"): ("time", F(86400 * 365), 0),
    ("decade", "decades"): ("time", F(86400 * 3650), 0),
    ("century", "centuries"): ("time", F(86400 * 36500), 0),
    # volume, base millilitre (cm^3 converts through length)
    ("mL", "ml", "milliliter", "milliliters", "millilitre", "millilitres"): ("volume", F(1), 0),
    ("L", "liter", "liters", "litre", "litres"): ("volume", F(1000), 0),
    ("cL", "cl", "centiliter", "centiliters", "centilitre", "centilitres"): ("volume", F(10), 0),
    ("dL", "dl", "deciliter", "deciliters", "decilitre", "decilitres"): ("volume", F(100), 0),
    ("gallon", "gallons"): ("volume", F(3785411784, 1000000), 0),
    ("quart", "quarts", "qt"): ("volume", F(946352946, 1000000), 0),
    ("pint", "pints"): ("volume", F(473176473, 1000000), 0),
    ("cup", "cups"): ("volume", F(2365882365, 10000000), 0),
    ("tablespoon", "tablespoons", "tbsp"): ("volume", F(1478676478125, 10**11), 0),
    ("teaspoon", "teaspoons", "tsp"): ("volume", F(492892159375, 10**11), 0),
    # angle, base degree
    ("deg", "degree", "degrees"): ("angle", F(1), 0),
    ("rad", "radian", "radians"): ("angle", F(180), -1),
    # area and energy, power, electricity, frequency, data: one base unit each
    ("ha", "hectare", "hectares"): ("length", F(10**4), 0),
    ("acre", "acres"): ("length", F(40468564224, 10**7), 0),
    ("joule", "joules"): ("energy", F(1), 0),
    ("kJ", "kilojoule", "kilojoules"): ("energy", F(1000), 0),
    ("cal", "calorie", "calories"): ("energy", F(4184, 1000), 0),
    ("kcal", "kilocalorie", "kilocalories", "Calorie", "Calories"): ("energy", F(4184), 0),
    ("Wh",): ("energy", F(3600), 0),
    ("kWh",): ("energy", F(3600000), 0),
    ("watt", "watts"): ("power", F(1), 0),
    ("kW", "kilowatt", "kilowatts"): ("power", F(1000), 0),
    ("MW", "megawatt", "megawatts"): ("power", F(10**6), 0),
    ("volt", "volts"): ("voltage", F(1), 0),
    ("mV", "millivolt", "millivolts"): ("voltage", F(1, 1000), 0),
    ("kV", "kilovolt", "kilovolts"): ("voltage", F(1000), 0),
    ("amp", "amps", "ampere", "amperes"): ("current", F(1), 0),
    ("mA", "milliamp", "milliamps", "milliampere", "milliamperes"): ("current", F(1, 1000), 0),
    ("ohm", "ohms"): ("resistance", F(1), 0),
    ("newton", "newtons"): ("force", F(1), 0),
    ("kN", "kilonewton", "kilonewtons"): ("force", F(1000), 0),
    ("Pa", "pascal", "pascals"): ("pressure", F(1), 0),
    ("kPa", "kilopascal", "kilopascals"): ("pressure", F(1000), 0),
    ("Hz", "hertz"): ("frequency", F(1), 0),
    ("kHz", "kilohertz"): ("frequency", F(1000), 0),
    ("MHz", "megahertz"): ("frequency", F(10**6), 0),
    ("GHz", "gigahertz"): ("frequency", F(10**9), 0),
    ("byte", "bytes"): ("data", F(1), 0),
    ("mol", "mole", "moles"): ("amount", F(1), 0),
    ("KB", "kB", "kilobyte", "kilobytes"): ("data", F(1000), 0),
    ("MB", "megabyte", "megabytes"): ("data", F(10**6), 0),
    ("GB", "gigabyte", "gigabytes"): ("data", F(10**9), 0),
    ("TB", "terabyte", "terabytes"): ("data", F(10**12), 0),
    # money: each currency its own dimension, so that 5 euros is never 5 dollars
    ("dollar", "dollars", "USD"): ("money", F(1), 0),
    ("cent", "cents"): ("money", F(1, 100), 0),
    ("euro", "euros", "EUR"): ("money EUR", F(1), 0),
    ("GBP", "sterling", "quid"): ("money GBP", F(1), 0),
    ("pence", "penny", "pennies"): ("money GBP", F(1, 100), 0),
    ("yen", "JPY"): ("money JPY", F(1), 0),
    ("yuan", "RMB", "CNY", "renminbi"): ("money CNY", F(1), 0),
    ("rupee", "rupees", "INR", "Rs"): ("money INR", F(1), 0),
    ("peso", "pesos"): ("money peso", F(1), 0),
    ("franc", "francs", "CHF"): ("money CHF", F(1), 0),
    ("KRW",): ("money KRW", F(1), 0),
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

# Hectares and acres are areas: length squared.
for _name in ("ha", "hectare", "hectares", "acre", "acres"):
    _area = _UNITS[_name]
    _UNITS[_name] = Unit(_area.name, (("length", 2),), _area.factor, 0)

DEGREE = _UNITS["degree"]
DOLLAR = _UNITS["dollar"]
CURRENCY_SIGNS = {
    "$": _UNITS["dollar"],
    "€": _UNITS["euro"],
    "£": _UNITS["GBP"],
    "¥": _UNITS["yen"],
    "₹": _UNITS["rupee"],
}
"""The unit of an amount written with a currency sign before it ("£5" is 5 pounds sterling)."""
MULTIPLIERS = {"dozen": 12, "dozens": 12, "score": 20, "grand": 1000, "lakh": 10**5, "lakhs": 10**5}
MULTIPLIERS.update({"crore": 10**7, "crores": 10**7, "gross": 144})
"""Words that multiply the value before them: "5 dozen" is 60, "5 lakh" is 500,000."""
UNIT_POWER_WORDS = {"squared": 2, "cubed": 3}
"""Words after a unit that raise it to a power ("5 mph squared")."""
_UNKNOWN_UNIT_WORDS = frozenset(
    "ton tons furlong furlongs fathom fathoms cubit cubits bushel bushels peck pecks carat carats karat karats "
    "lightyear lightyears parsec parsecs rpm bpm ppm ppb btu therm therms erg ergs dyne dynes torr atm psi "
    "millennium millennia fortnight fortnights".split()
)
_SI_PREFIXED = re.compile(r"(?:[fpnμumcdkMGTP]|da)(?:m|g|s|L|Hz|J|W|V|A|N|Pa|B|mol|Wh|eV)")
"""A prefixed SI symbol (``Mm``, ``fs``, ``GW``): read case-sensitively, refused when not in the table."""
PERCENT_WORDS = frozenset({"percent", "pct"})
# Words of two or three letters that the lexer must keep whole instead of reading as products of
# single-letter variables (``cm`` is not ``c*m``).
SHORT_UNIT_WORDS = frozenset(name for name in _UNITS if 2 <= len(name) <= 3)
_SINGLE_LETTER_UNITS = frozenset(name for name in _UNITS if len(name) == 1)
POWER_WORDS = {"square": 2, "sq": 2, "cubic": 3, "cu": 3}


def lookup_unit(word: str) -> Unit | None:
    """The unit a word names (case-sensitive first, then lower-case, except prefixed SI symbols), or None."""
    unit = _UNITS.get(word)
    if unit is None and len(word) > 1 and not _SI_PREFIXED.fullmatch(word):
        unit = _UNITS.get(word.lower())
    return unit


def is_unknown_unit(word: str) -> bool:
    """Whether ``word`` names a unit the table cannot convert ("tons", "psi", ``Mm``, ``fs``): refuse it."""
    if lookup_unit(word) is not None:
        return False
    return (
        word.lower() in _UNKNOWN_UNIT_WORDS
        or word in _UNKNOWN_UNIT_WORDS
        or bool(_SI_PREFIXED.fullmatch(word))
    )


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
