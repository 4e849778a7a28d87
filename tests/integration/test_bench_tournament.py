"""The tournament bench's core (tests/bench/bench_tournament.py) at a small size: 16 bot
entrants, 2 Swiss rounds of one hand, through the real cluster on PostgreSQL (a schema of this
test's own), every check of the bench passing and its figures there."""

from __future__ import annotations

import pytest

from tests.bench.bench_tournament import print_report, run_tournament

pytestmark = pytest.mark.integration


def test_the_tournament_bench_runs_a_small_tournament_to_its_end(postgres_url):
    lines: list[str] = []
    r = run_tournament(postgres_url, 16, rounds=2, timeout=240, out=lines.append)
    print_report(r, lines.append)
    print("\n".join(lines))
    assert r.ok, "\n".join(lines)
    assert [t.round for t in r.timings] == [1, 2]
    assert all(t.tables == 4 and t.duration_s > 0 for t in r.timings), r.timings
    assert all(t.table_max_s is not None and t.table_max_s > 0 for t in r.timings), r.timings
    assert r.hands == 8 and r.acts > 0, r
    assert r.commits is not None and r.commits > 0, r
    assert r.cpu_s and all(s >= 0 for s in r.cpu_s.values()), r.cpu_s
