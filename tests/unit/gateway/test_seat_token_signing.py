"""Seat tokens are signed by infra.signing (one HMAC implementation for every service) and
keep their format, so tokens handed out before the change still verify."""

from __future__ import annotations

import pytest

from infra.signing import signature
from services.gateway.domain import tokens
from services.gateway.domain.tokens import (
    sign_seat_token,
    sign_spectator_token,
    verify_seat_token,
)
from shared.errors import Unauthenticated

SECRET = b"k" * 32


def test_token_mac_is_the_shared_signature_of_table_and_seat():
    tok = sign_seat_token(SECRET, "t_abc", 1)
    prefix, table, seat, mac = tok.split(".")
    assert (prefix, table, seat) == ("st1", "t_abc", "1")
    assert mac == signature(SECRET, "st1|t_abc|1")
    spectator = sign_spectator_token(SECRET, "t_abc", "0123456789abcdef")
    assert spectator.split(".")[2] == "s0123456789abcdef"
    assert spectator.rsplit(".", 1)[1] == signature(SECRET, "st1|t_abc|s0123456789abcdef")


def test_a_token_issued_before_the_change_still_verifies():
    # Issued by the gateway's own HMAC code before tokens moved onto infra.signing.
    old = "st1.t_abc.1.-_BRSOgoQufKK-l25FR7ZMqB"
    assert verify_seat_token(SECRET, old, "t_abc") == 1
    with pytest.raises(Unauthenticated):
        verify_seat_token(SECRET, old[:-1] + ("A" if old[-1] != "A" else "B"), "t_abc")


def test_the_gateway_has_no_hmac_code_of_its_own():
    assert not hasattr(tokens, "hmac") and not hasattr(tokens, "_mac")


def test_a_non_ascii_signature_is_unauthenticated_not_a_crash():
    with pytest.raises(Unauthenticated):
        verify_seat_token(SECRET, "st1.t_abc.1.\u00e9\u00e9", "t_abc")


def test_each_spectator_token_names_its_own_spectator_and_cannot_be_made_anothers():
    ids = {tokens.new_spectator_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) == 16 for i in ids)
    sid = "0123456789abcdef"
    tok = sign_spectator_token(SECRET, "t_abc", sid)
    assert tokens.read_seat_token(SECRET, tok, "t_abc") == tokens.SeatToken("t_abc", None, sid)
    prefix, table, _, mac = tok.split(".")
    for other in ("s0123456789abcde0", "s", "0"):  # another spectator, the shared one, a seat
        with pytest.raises(Unauthenticated):
            verify_seat_token(SECRET, f"{prefix}.{table}.{other}.{mac}", "t_abc")
    for malformed in ("s0123", "s0123456789ABCDEF", "s0123456789abcdefg", "x0123456789abcdef"):
        with pytest.raises(Unauthenticated, match="malformed"):
            verify_seat_token(SECRET, f"{prefix}.{table}.{malformed}.{mac}", "t_abc")


def test_the_spectator_token_of_earlier_releases_reads_as_a_spectator_without_an_id():
    shared = f"st1.t_abc.s.{signature(SECRET, 'st1|t_abc|s')}"
    assert tokens.read_seat_token(SECRET, shared, "t_abc") == tokens.SeatToken("t_abc", None, "")
