"""Every scoring vector (tests/vectors/scoring.jsonl, for shanghai-old and -baida
presets-scoring.jsonl, for 加倍卡 double-card-scoring.jsonl) through the domain and through the
CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from services.scoring.vector_format import settle_object, settlement_json
from tests.conftest import VECTORS, load_vectors

SCORING = load_vectors("scoring.jsonl")
PRESETS = load_vectors("presets-scoring.jsonl")
DOUBLED = load_vectors("double-card-scoring.jsonl")
FILES = {
    "scoring.jsonl": SCORING,
    "presets-scoring.jsonl": PRESETS,
    "double-card-scoring.jsonl": DOUBLED,
}
ALL = SCORING + PRESETS + DOUBLED


def test_the_vector_files_hold_every_example():
    assert (len(SCORING), len(PRESETS), len(DOUBLED)) == (11, 26, 9)


@pytest.mark.parametrize("vector", ALL, ids=[v["name"] for v in ALL])
def test_vector(vector):
    got = settlement_json(settle_object(vector))
    expect = vector["expect"]
    assert {k: got[k] for k in expect} == expect
    assert sum(got["payments"]) + got["house"] == 0


@pytest.mark.parametrize("name", FILES)
def test_cli_prints_the_expect_keys_for_every_vector(name):
    vectors = FILES[name]
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli", "score", str(VECTORS / name)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).parents[3],
    )
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    assert len(lines) == len(vectors)
    for got, vector in zip(lines, vectors, strict=True):
        assert {k: got[k] for k in vector["expect"]} == vector["expect"], vector["name"]
        assert set(got) == set(vector["expect"]) | {"breakdown"}
        assert all(
            {"code", "label", "label_zh", "amount", "unit"} <= set(i) for i in got["breakdown"]
        )
