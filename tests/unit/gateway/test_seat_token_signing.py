"""Seat tokens are signed by shared.signing (one HMAC implementation for every service) and
keep their format, so tokens handed out before the change still verify."""

from __future__ import annotations

import pytest

from services.gateway.domain import tokens
from services.gateway.domain.tokens import sign_seat_token, verify_seat_token
from shared.errors import Unauthenticated
from shared.signing import signature

SECRET = b"k" * 32


def test_token_mac_is_the_shared_signature_of_table_and_seat():
    tok = sign_seat_token(SECRET, "t_abc", 1)
    prefix, table, seat, mac = tok.split(".")
    assert (prefix, table, seat) == ("st1", "t_abc", "1")
    assert mac == signature(SECRET, "st1|t_abc|1")
    spectator = sign_seat_token(SECRET, "t_abc", None)
    assert spectator.rsplit(".", 1)[1] == signature(SECRET, "st1|t_abc|s")


def test_a_token_issued_before_the_change_still_verifies():
    # Issued by the gateway's own HMAC code before tokens moved onto shared.signing.
    old = "st1.t_abc.1.-_BRSOgoQufKK-l25FR7ZMqB"
    assert verify_seat_token(SECRET, old, "t_abc") == 1
    with pytest.raises(Unauthenticated):
        verify_seat_token(SECRET, old[:-1] + ("A" if old[-1] != "A" else "B"), "t_abc")


def test_the_gateway_has_no_hmac_code_of_its_own():
    assert not hasattr(tokens, "hmac") and not hasattr(tokens, "_mac")


def test_a_non_ascii_signature_is_unauthenticated_not_a_crash():
    with pytest.raises(Unauthenticated):
        verify_seat_token(SECRET, "st1.t_abc.1.\u00e9\u00e9", "t_abc")
