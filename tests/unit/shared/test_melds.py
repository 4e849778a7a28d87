"""shared.melds: meld shapes and their JSON form (RULES.md §4)."""

from __future__ import annotations

import pytest

from shared.melds import Meld, MeldError, MeldKind


@pytest.mark.parametrize(
    ("kind", "tiles", "from_seat"),
    [
        ("chow", "123m", 3),
        ("chow", "798s", 0),
        ("pong", "555z", 1),
        ("exposed_kong", "1111p", 2),
        ("added_kong", "7777z", 0),
        ("concealed_kong", "9999m", None),
    ],
)
def test_valid_melds(kind, tiles, from_seat):
    meld = Meld.of(kind, tiles, from_seat)
    assert meld.tiles == tuple(sorted(meld.tiles))
    assert Meld.from_json(meld.to_json()) == meld


@pytest.mark.parametrize(
    ("kind", "tiles", "from_seat", "words"),
    [
        ("chow", "124m", 0, "not a run of three in one suit"),
        ("chow", "89m1p", 0, "not a run of three in one suit"),
        ("chow", "123z", 0, "honors cannot chow"),
        ("chow", "1234m", 0, "needs 3 tiles"),
        ("pong", "556z", 0, "not of identical tiles"),
        ("pong", "55z", 0, "needs 3 tiles"),
        ("exposed_kong", "111m", 0, "needs 4 tiles"),
        ("pong", "111f", 0, "flower"),
        ("concealed_kong", "1111m", 2, "not claimed from anyone"),
        ("pong", "111m", 4, "seats are 0-3"),
    ],
)
def test_invalid_melds_name_the_problem(kind, tiles, from_seat, words):
    with pytest.raises(MeldError, match=words):
        Meld.of(kind, tiles, from_seat)


def test_kind_properties_and_labels():
    assert MeldKind.CONCEALED_KONG.is_kong and not MeldKind.CONCEALED_KONG.is_exposed
    assert MeldKind.PONG.is_exposed and not MeldKind.PONG.is_kong
    assert MeldKind.from_label("added_kong") is MeldKind.ADDED_KONG
    with pytest.raises(ValueError, match="unknown meld kind 'triple'"):
        MeldKind.from_label("triple")
    assert Meld.of("pong", "555z", 1).to_json() == {"kind": "pong", "tiles": "555z", "from": 1}
    assert "from" not in Meld.of("concealed_kong", "5555z").to_json()


def _outcome(check) -> str:
    try:
        check()
    except Exception as exc:  # the full checks' own answer, whatever it is
        return f"{type(exc).__name__}: {exc}"
    return "ok"


def test_the_known_shapes_shortcut_answers_as_the_full_checks():
    """validate() accepts a known shape of exact ints at once; everything else, and every
    refusal, is the full checks' answer (bool and float tiles, lists, seats out of range)."""
    shapes = set()
    for k in range(-1, 49):
        shapes |= {(k, k + 1, k + 2), (k + 2, k, k + 1), (k, k, k), (k, k, k, k), (k, k + 1)}
    odd = [(True, True, True), (1.0, 2, 3), (0, 1, True), [0, 1, 2], (5, 5, 5.0, 5)]
    accepted = 0
    for kind in MeldKind:
        for tiles in [*shapes, *odd]:
            for seat in (None, 0, 3, 4, -1, True):
                meld = Meld(kind, tiles, seat)  # type: ignore[arg-type]
                answer = _outcome(meld.validate)
                assert answer == _outcome(meld._validate_fully), (kind, tiles, seat)
                accepted += answer == "ok"
    assert accepted > 500  # the shortcut's cases are among them
