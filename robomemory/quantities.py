"""Quantities in names ("19ml of aluminum", "1,500 mg"), compared as quantities, not words (pure).

Mass (mg, g, kg), volume (ml, l) and length (mm, cm, m, km), the units a sorting task names,
and a count ("40 oranges");
each value is kept in its dimension's smallest unit here (mg, ml, mm), so every factor is whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from decimal import Decimal
from typing import NamedTuple

# (dimension, the unit's words, how many of the dimension's smallest unit it is)
_TABLE: tuple[tuple[str, tuple[str, ...], int], ...] = (
    ("mass", ("mg", "milligram", "milligrams"), 1),
    ("mass", ("g", "gram", "grams"), 1_000),
    ("mass", ("kg", "kilogram", "kilograms"), 1_000_000),
    ("volume", ("ml", "millilitre", "millilitres", "milliliter", "milliliters"), 1),
    ("volume", ("l", "litre", "litres", "liter", "liters"), 1_000),
    ("length", ("mm", "millimetre", "millimetres", "millimeter", "millimeters"), 1),
    ("length", ("cm", "centimetre", "centimetres", "centimeter", "centimeters"), 10),
    ("length", ("m", "metre", "metres", "meter", "meters"), 1_000),
    ("length", ("km", "kilometre", "kilometres", "kilometer", "kilometers"), 1_000_000),
)
_UNITS: dict[str, tuple[str, int]] = {w: (d, f) for d, words, f in _TABLE for w in words}

# a number ("19", "1,500", "12.5", ".5") not inside another word, then a unit word
_QUANTITY = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)\s*("
    + "|".join(sorted(_UNITS, key=len, reverse=True))
    + r")(?![a-z])",
    re.IGNORECASE,
)


class Quantity(NamedTuple):
    """A value in its dimension's smallest unit (mg, ml, mm); ordered only within a dimension."""

    value: float
    dimension: str

    def _value_of(self, other: object) -> float | None:
        """``other``'s value if it is a Quantity (a ValueError if of another dimension)."""
        if not isinstance(other, Quantity):
            return None
        if other.dimension != self.dimension:
            raise ValueError(f"cannot compare {self.dimension} with {other.dimension}")
        return other.value

    def __lt__(self, other: object) -> bool:
        v = self._value_of(other)
        return NotImplemented if v is None else self.value < v

    def __le__(self, other: object) -> bool:
        v = self._value_of(other)
        return NotImplemented if v is None else self.value <= v

    def __gt__(self, other: object) -> bool:
        v = self._value_of(other)
        return NotImplemented if v is None else self.value > v

    def __ge__(self, other: object) -> bool:
        v = self._value_of(other)
        return NotImplemented if v is None else self.value >= v


# a name that begins with a bare number: how many ("40 oranges": a count)
_COUNT = re.compile(r"^\s*(\d{1,3}(?:,\d{3})+|\d+)\s+[a-z]", re.IGNORECASE)


def quantity_in(text: str) -> Quantity | None:
    """The first quantity ``text`` names ("19ml of aluminum" -> 19 ml), else the count a
    name begins with ("40 oranges" -> 40, dimension ``count``), or None."""
    m = _QUANTITY.search(text)
    if m is None:
        c = _COUNT.match(text)
        return Quantity(float(c.group(1).replace(",", "")), "count") if c else None
    dimension, factor = _UNITS[m.group(2).lower()]
    value = Decimal(m.group(1).replace(",", "")) * factor  # exact: 0.5 l is 500 ml
    return Quantity(float(value), dimension)


def parse_quantity(text: str) -> Quantity:
    """The first quantity ``text`` names; a ValueError in one line if it names none."""
    found = quantity_in(text)
    if found is None:
        raise ValueError(f"no quantity in {text!r}: write a number and a unit (19ml, 1,500 mg)")
    return found


def in_order(names: Iterable[str], descending: bool = False) -> list[str]:
    """``names`` by the quantity each names, smallest first (``descending``: largest); names
    without one keep their order, at the end. A ValueError if two dimensions are mixed."""
    found = [(n, quantity_in(n)) for n in names]
    measured = [(q, n) for n, q in found if q is not None]
    ranked = sorted(measured, key=lambda qn: qn[0], reverse=descending)  # stable on ties
    return [n for _, n in ranked] + [n for n, q in found if q is None]
