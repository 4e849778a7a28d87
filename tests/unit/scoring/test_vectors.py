"""Every scoring vector (tests/vectors/scoring.jsonl and, for shanghai-old and -baida,
presets-scoring.jsonl) through the domain and through the CLI."""

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
FILES = {"scoring.jsonl": SCORING, "presets-scoring.jsonl": PRESETS}


def test_the_vector_files_hold_every_example():
    assert (len(SCORING), len(PRESETS)) == (11, 26)


@pytest.mark.parametrize("vector", SCORING + PRESETS, ids=[v["name"] for v in SCORING + PRESETS])
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
