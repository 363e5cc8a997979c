"""Quantities in names compared as quantities (robomemory.quantities)."""

from __future__ import annotations

import pytest

from robomemory.quantities import Quantity, in_order, parse_quantity, quantity_in


@pytest.mark.parametrize(
    "text, value, dimension",
    [
        ("19ml", 19, "volume"),
        ("1,500 mg", 1500, "mass"),
        ("2 g", 2000, "mass"),
        ("0.5 l", 500, "volume"),
        ("3 kg", 3_000_000, "mass"),
        ("250 ml of water", 250, "volume"),
        ("12.5 cm", 125, "length"),
        ("2 Litres", 2000, "volume"),
        ("4 km", 4_000_000, "length"),
    ],
)
def test_a_quantity_reads_in_its_dimension_s_smallest_unit(text, value, dimension):
    assert parse_quantity(text) == Quantity(value, dimension)


def test_quantities_compare_as_quantities_not_words():
    assert parse_quantity("1,500 mg") < parse_quantity("2 g")
    assert parse_quantity("19ml") < parse_quantity("1 l")
    assert parse_quantity("0.5 l") == parse_quantity("500 ml")
    assert parse_quantity("1.1 l") == parse_quantity("1100 ml")  # exact, no float residue
    assert parse_quantity("3 kg") >= parse_quantity("3000 g") > parse_quantity("2999 g")


def test_mass_and_volume_do_not_compare():
    with pytest.raises(ValueError, match="cannot compare mass with volume"):
        _ = parse_quantity("2 g") < parse_quantity("2 ml")
    assert parse_quantity("2 g") != parse_quantity("2 ml")


def test_a_name_without_a_quantity_has_none():
    assert quantity_in("5 limes") == Quantity(5, "count")  # "l..." is no unit: 5 of them
    assert quantity_in("3 mangos and 2 grapes") == Quantity(3, "count")
    assert quantity_in("1,024 grapefruits") < quantity_in("2,048 grapes")
    assert quantity_in("the red box") is None
    assert quantity_in("box 5") is None  # a count begins the name
    assert quantity_in("a box of 7g of salt") == Quantity(7000, "mass")
    with pytest.raises(ValueError, match="no quantity in 'the red box'"):
        parse_quantity("the red box")


def test_names_sort_by_their_quantity():
    names = ["19ml of aluminum", "3l of oil", "box", "250ml of water", "key"]
    assert in_order(names) == ["19ml of aluminum", "250ml of water", "3l of oil", "box", "key"]
    assert in_order(names, descending=True) == [
        "3l of oil",
        "250ml of water",
        "19ml of aluminum",
        "box",
        "key",
    ]
    assert in_order(["1 kg of rice", "900 g of flour", "1,500 mg of salt"]) == [
        "1,500 mg of salt",
        "900 g of flour",
        "1 kg of rice",
    ]


def test_names_of_two_dimensions_do_not_sort():
    with pytest.raises(ValueError, match="cannot compare"):
        in_order(["2 g of salt", "2 ml of water"])
