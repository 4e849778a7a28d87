"""The operator's console in the domain (a memory store, a manual clock): finding players,
suspensions (sessions end, every call and sign-in refused PLAYER_SUSPENDED, an end time lifts
it by itself), revoking one session, and the audit log every action and grant is appended to —
refusals included."""

from __future__ import annotations

import pytest

from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.operations import audit
from services.matchmaking.domain.operations.audit import AuditEntry
from shared.errors import InvalidArgument, NotFound, PermissionDenied, Unauthenticated
from tests.support.identity import id_token, sign_in, unique_subject
from tests.unit.matchmaking.mm_fakes import make_service, seated_quick_table

OP = "spiffe://mahjong.local/operator"


def _log(mm):
    entries, _ = mm.operations.audit_page(0, 1000)
    return [e for _, e in entries]


def test_find_by_id_and_name_shows_sessions_seats_balances_and_entries():
    mm, alloc, _ = make_service()
    table_id, tag, ids, _ = seated_quick_table(mm, alloc)
    (found,) = mm.operations.find_players(ids[1], "", 3)
    assert found.player.player_id == ids[1] and len(found.sessions) == 1
    assert [(s.table_id, s.seat, s.tag) for s in found.seats] == [(table_id, 1, tag)]
    assert found.balances[ledger.SILVER] == 1000 and 1 <= len(found.last_entries) <= 3
    assert found.suspension is None
    named = mm.operations.find_players("", "b", 0)  # display names "A".."D", any case
    assert [d.player.display_name for d in named] == ["B"] and named[0].player.player_id in ids
    assert mm.operations.find_players("", "nobody", 0) == []
    with pytest.raises(NotFound):
        mm.operations.find_players("p-unknown", "", 0)
    for bad in (("", "", 0), (ids[0], "A", 0), (ids[0], "", -1), (ids[0], "", 101)):
        with pytest.raises(InvalidArgument):
            mm.operations.find_players(*bad)


def test_a_suspension_ends_sessions_refuses_every_call_and_ends_by_itself():
    mm, _, clock = make_service()
    subject = unique_subject("Cheat")
    player, token = sign_in(mm, "Cheat", subject)
    _, other = sign_in(mm, "Honest")
    until = int(clock() * 1000) + 60_000
    done = mm.operations.suspend(OP, player.player_id, "chip dumping", until)
    assert done.sessions_revoked == 1 and done.suspension.until_ms == until
    for call in (
        lambda: mm.authenticate_session(token),
        lambda: mm.sign_in(id_token("Cheat", subject), "Cheat"),
        lambda: mm.join_queue(token, "", 0),
    ):
        with pytest.raises(PermissionDenied) as err:
            call()
        assert err.value.reason == "PLAYER_SUSPENDED"
    mm.authenticate_session(other)  # others play on
    (dossier,) = mm.operations.find_players(player.player_id, "", 0)
    assert dossier.suspension.reason == "chip dumping" and dossier.sessions == ()
    clock.advance(61)  # the end time passed: signing in works again
    got = mm.sign_in(id_token("Cheat", subject), "Cheat")
    mm.authenticate_session(got.session.session_token)
    # suspended until lifted, then lifted
    mm.operations.suspend(OP, player.player_id, "again", 0)
    with pytest.raises(PermissionDenied):
        mm.refresh_session(got.session.refresh_token)
    assert mm.operations.lift(OP, player.player_id, "appeal upheld") is True
    assert mm.operations.lift(OP, player.player_id, "twice") is False
    mm.sign_in(id_token("Cheat", subject), "Cheat")


def test_bad_suspensions_change_nothing_and_are_audited_as_refused():
    mm, _, clock = make_service()
    player, token = sign_in(mm, "P")
    now = int(clock() * 1000)
    for args, field in (
        ((player.player_id, "", 0), "reason"),
        ((player.player_id, "x" * 501, 0), "reason"),
        ((player.player_id, "why", now - 1), "until_unix_ms"),
        ((player.player_id, "why", now + 101 * 365 * 86_400_000), "until_unix_ms"),
    ):
        with pytest.raises(InvalidArgument) as err:
            mm.operations.suspend(OP, *args)
        assert err.value.details["field"] == field
    with pytest.raises(NotFound):
        mm.operations.suspend(OP, "p-nobody", "why", 0)
    mm.authenticate_session(token)  # still live: nothing applied
    results = [(e.action, e.result) for e in _log(mm)]
    assert results == [("SuspendPlayer", "INVALID_ARGUMENT")] * 4 + [("SuspendPlayer", "NOT_FOUND")]


def test_revoke_one_session_and_the_audit_log_of_actions_and_grants():
    mm, _, clock = make_service()
    subject = unique_subject("Two")
    player, first = sign_in(mm, "Two", subject)
    _, second = sign_in(mm, "Two", subject)
    claims = mm.authenticate_session(first)[1]
    assert mm.operations.revoke_session(OP, player.player_id, claims.session_id, "lost phone")
    with pytest.raises(Unauthenticated):
        mm.authenticate_session(first)
    mm.authenticate_session(second)  # the other device plays on
    assert not mm.operations.revoke_session(OP, player.player_id, claims.session_id, "again")
    with pytest.raises(InvalidArgument):
        mm.operations.revoke_session(OP, player.player_id, "a/b", "why")
    mm.grant_assets(OP, player.player_id, [(ledger.ROOM_CARD, 2)], "support ticket 7", "g1")
    with pytest.raises(InvalidArgument):
        mm.grant_assets(OP, player.player_id, [(ledger.ROOM_CARD, -2)], "oops", "g2")
    entries = _log(mm)
    assert [(e.action, e.result) for e in entries] == [
        ("RevokeSession", "OK"),
        ("RevokeSession", "OK"),
        ("RevokeSession", "INVALID_ARGUMENT"),
        ("GrantAssets", "OK"),
        ("GrantAssets", "INVALID_ARGUMENT"),
    ]
    grant = entries[3]
    assert (grant.actor, grant.target, grant.reason) == (OP, player.player_id, "support ticket 7")
    assert "room_card=2" in grant.detail and grant.at_ms == int(clock() * 1000)
    assert entries[1].detail == "the session had already ended"
    # paging, and the stored form is versioned
    page, after = mm.operations.audit_page(0, 2)
    assert [s for s, _ in page] == [1, 2] and after == 2
    page, after = mm.operations.audit_page(4, 2)
    assert [s for s, _ in page] == [5] and after == 0
    for bad in ((-1, 0), (0, -1), (0, 1001)):
        with pytest.raises(InvalidArgument):
            mm.operations.audit_page(*bad)
    raw = entries[0].dump()
    assert AuditEntry.load(raw) == entries[0]
    with pytest.raises(ValueError):
        AuditEntry.load(raw.replace(b'"version":1', b'"version":9'))
    assert audit.clip("a\nb" + "x" * 600).startswith("a b") and len(audit.clip("x" * 600)) == 500
