"""Game metrics of the gateway (Prometheus), derived from the events tables emit: hands, wins
by hand type, drawn hands, timeouts, active tables, actions; and the tables held in memory."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

HANDS = Counter("mahjong_gateway_hands_total", "Hands finished, by outcome.", ["outcome"])
WINS = Counter("mahjong_gateway_wins_total", "Winning hands, by hand type.", ["hand"])
DRAWS = Counter("mahjong_gateway_drawn_hands_total", "Drawn hands (流局).")
TIMEOUTS = Counter("mahjong_gateway_timeouts_total", "Decisions missed by the timer.", ["kind"])
ACTIVE_TABLES = Gauge("mahjong_gateway_active_tables", "Tables running on this replica.")
# Running tables plus finished ones not yet evicted (--finished-table-ttl-seconds).
TABLES_HELD = Gauge("mahjong_gateway_tables_in_memory", "Tables held in memory by this replica.")
ACTIONS = Counter("mahjong_gateway_actions_total", "Actions applied, by who acted.", ["by"])
STEP_FAILURES = Counter(
    "mahjong_gateway_step_failures_total",
    "Engine steps (draw, options, claims, scoring, reveal) whose service call failed; each is "
    "retried, stalled = the retries with short backoff are used up and the table waits longer.",
    ["stalled"],
)


def observe(table, event) -> None:
    """The TableManager's on_event hook."""
    kind, d = event.kind, event.data
    if kind == "hand_result":
        HANDS.labels(d["outcome"]).inc()
        for w in d["winners"]:
            WINS.labels(w["hand"]).inc()
        if d["outcome"] == "draw":
            DRAWS.inc()
    elif kind == "timed_out":
        TIMEOUTS.labels(d["kind"]).inc()
    elif kind in ("table_started", "table_taken_over"):
        ACTIVE_TABLES.inc()
    elif kind in ("table_finished", "table_lost"):  # lost: another replica runs it now
        ACTIVE_TABLES.dec()
    elif kind == "action":
        ACTIONS.labels("auto" if d.get("auto") else "player").inc()
