"""Every scoring vector (tests/vectors/scoring.jsonl) through the domain and through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from services.scoring.vector_format import settle_object, settlement_json
from tests.conftest import VECTORS, load_vectors

SCORING = load_vectors("scoring.jsonl")


@pytest.mark.parametrize("vector", SCORING, ids=[v["name"] for v in SCORING])
def test_vector(vector):
    got = settlement_json(settle_object(vector))
    expect = vector["expect"]
    assert {k: got[k] for k in expect} == expect
    assert sum(got["payments"]) + got["house"] == 0


def test_cli_prints_the_expect_keys_for_every_vector():
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli", "score", str(VECTORS / "scoring.jsonl")],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[3],
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(lines) == len(SCORING)
    for got, vector in zip(lines, SCORING, strict=True):
        assert {k: got[k] for k in vector["expect"]} == vector["expect"], vector["name"]
        assert set(got) == set(vector["expect"]) | {"breakdown"}
        assert all(
            {"code", "label", "label_zh", "amount", "unit"} <= set(i) for i in got["breakdown"]
        )
