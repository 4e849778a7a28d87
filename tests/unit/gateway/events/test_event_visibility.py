"""Deny by default, checked on generated events of every kind for every viewer against a
statement of what is secret written here, apart from the view rules: no other seat's
concealed tiles, no other seat's drawn, replacement or 换牌 tile, no concealed kong's face,
nothing of the log's action records or a claim window's fillers, and nothing that tells who
may claim."""

from __future__ import annotations

from hypothesis import given, settings

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.views import project
from shared.melds import MeldKind
from tests.unit.gateway.events.strategies import any_event

VIEWERS = (None, 0, 1, 2, 3)


def expected_secret_free(ev: K.TableEvent, seen: K.TableEvent | None, viewer: int | None) -> None:
    own = viewer is not None and getattr(ev, "seat", None) == viewer
    if isinstance(ev, K.ActionTaken | K.WindowPadding):
        assert seen is None, "the log's action records and a window's fillers go to nobody"
        return
    if isinstance(ev, K.Prompt):
        assert (seen is not None) == own, "a prompt is its seat's only"
        return
    if isinstance(ev, K.TimedOut) and ev.kind in (K.CLAIM, K.ROB_KONG) and not own:
        assert seen is None, "a missed claim tells the seat could claim"
        return
    if isinstance(ev, K.SeatChanged) and ev.private and not own:
        assert seen is None, "an unannounced 托管 is its seat's only"
        return
    assert seen is not None, f"{type(ev).__name__} is public"
    if isinstance(ev, K.TilesDealt):
        assert isinstance(seen, K.TilesDealt)
        for s, hand in enumerate(seen.hands):
            assert hand == (ev.hands[s] if s == viewer else ()), "another seat's deal"
        assert seen.counts == tuple(len(h) for h in ev.hands)
    elif isinstance(ev, K.TileDrawn) and not own:
        assert isinstance(seen, K.TileDrawn) and seen.tile is None, "another seat's draw"
    elif isinstance(ev, K.FlowersExposed) and not own:
        assert isinstance(seen, K.FlowersExposed)
        assert seen.replacements == () and seen.replacement_count == len(ev.replacements)
        assert seen.flowers == ev.flowers  # flowers are shown to all
    elif isinstance(ev, K.TilesSwapped) and not own:
        assert isinstance(seen, K.TilesSwapped)
        assert seen.buried == () and seen.taken == () and seen.count == len(ev.buried)
    elif isinstance(ev, K.MeldDeclared) and not own:
        assert isinstance(seen, K.MeldDeclared)
        if ev.meld.kind is MeldKind.CONCEALED_KONG:
            assert seen.meld.tiles == () and seen.meld.claimed is None, "a concealed kong's face"
        else:
            assert seen.meld == ev.meld
    elif isinstance(ev, K.TimedOut) and not own:
        assert isinstance(seen, K.TimedOut) and seen.in_a_row == 0
    elif isinstance(ev, K.SeatChanged) and ev.deadline_private and not own:
        assert isinstance(seen, K.SeatChanged) and seen.deadline_ms == 0
    elif isinstance(ev, K.TableHalted):
        assert isinstance(seen, K.TableHalted) and seen.error == "" and seen.reason == ev.reason
    else:  # everything else is public, whole
        assert seen == ev


@settings(max_examples=1500, deadline=None)
@given(any_event)
def test_no_viewer_sees_what_is_not_its_own(ev):
    for viewer in VIEWERS:
        expected_secret_free(ev, project(ev, viewer), viewer)


@settings(max_examples=300, deadline=None)
@given(any_event)
def test_the_owner_of_an_event_sees_all_of_it(ev):
    seat = getattr(ev, "seat", None)
    if seat is None or isinstance(ev, K.ActionTaken | K.TableHalted):
        return
    assert project(ev, seat) == ev
