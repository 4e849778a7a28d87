"""The operator role in an ID token (issue 32): only an issuer configured with a roles claim
(``roles=`` in ``--issuers``) grants it, only the exact role ``operator`` in that claim counts,
and the flag form round-trips."""

from __future__ import annotations

import dataclasses

import pytest

from services.matchmaking.domain.players.issuers import format_issuer, parse_issuer
from services.matchmaking.domain.players.oidc import IdTokenVerifier
from tests.support.identity import id_token, issuer_config


@pytest.mark.parametrize(
    ("claims", "operator"),
    [
        ({"roles": ["operator"]}, True),
        ({"roles": "operator"}, True),
        ({"roles": ["player", "operator"]}, True),
        ({"roles": ["Operator"]}, False),
        ({"roles": ["moderator"]}, False),
        ({"roles": {"operator": True}}, False),
        ({"role": ["operator"]}, False),  # another claim
        ({}, False),
    ],
)
def test_the_configured_claim_names_the_role(claims, operator):
    verifier = IdTokenVerifier([issuer_config()])
    assert verifier.verify(id_token("Ops", "ops-1", **claims)).operator is operator


def test_an_issuer_without_a_roles_claim_grants_no_role():
    plain = dataclasses.replace(issuer_config(), roles_claim="")
    verifier = IdTokenVerifier([plain])
    assert not verifier.verify(id_token("Ops", "ops-1", roles=["operator"])).operator


def test_the_flag_form_keeps_the_roles_claim():
    config = issuer_config()
    assert config.roles_claim == "roles"
    assert parse_issuer(format_issuer(config)) == config
    plain = dataclasses.replace(config, roles_claim="")
    assert "roles=" not in format_issuer(plain)
    assert parse_issuer(format_issuer(plain)) == plain
