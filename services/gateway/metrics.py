"""Game metrics of the gateway (Prometheus), derived from the events tables emit: hands, wins
by hand type, drawn hands, timeouts, active tables, actions; the tables held in memory; and
the tables whose lease this replica took over or lost."""

from __future__ import annotations

from prometheus_client import Counter, Gauge

from services.gateway.domain.events import kinds as K
from services.gateway.domain.events.log import LoggedEvent

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
    "Engine steps (draw, options, claims, scoring, reveal) whose service call failed for a "
    "transient reason; each is retried, stalled = the retries with short backoff are used up "
    "and the table waits longer.",
    ["stalled"],
)


OWNERSHIP = Counter(
    "mahjong_gateway_table_ownership_changes_total",
    "Tables whose lease changed hands on this replica: taken_over (adopted from a replica that "
    "released it on drain or let it expire), lost (another replica took it: this one was "
    "paused or cut off longer than the lease).",
    ["change"],
)
TABLES_HALTED = Counter(
    "mahjong_gateway_tables_halted_total",
    "Tables whose engine stopped on an error no retry mends (a bug); their logs are kept.",
)
FLOOD_EXEMPT = Counter(
    "mahjong_gateway_flood_exempt_calls_total",
    "Calls flood control did not count against a seat's budget (services/gateway/flood.py): "
    "answer (the first Act per open prompt), arrival (the GetTableState after a JoinSeat or "
    "Subscribe), sent_on (an Act or GetTableState past this replica's budget, sent to the "
    "table's owner to decide).",
    ["why"],
)


def observe(table, logged: LoggedEvent | None, what: str) -> None:
    """The TableManager's on_event hook: an event appended, or a table taken over or lost."""
    if logged is None:
        if what == "taken_over":
            ACTIVE_TABLES.inc()
            OWNERSHIP.labels("taken_over").inc()
        elif what == "lost":  # another replica runs it now
            ACTIVE_TABLES.dec()
            OWNERSHIP.labels("lost").inc()
        return
    ev = logged.event
    if isinstance(ev, K.HandResult):
        HANDS.labels(ev.outcome).inc()
        for w in ev.winners:
            WINS.labels(w.hand).inc()
        if ev.outcome == "draw":
            DRAWS.inc()
    elif isinstance(ev, K.TimedOut):
        TIMEOUTS.labels(ev.kind).inc()
    elif isinstance(ev, K.TableStarted):
        ACTIVE_TABLES.inc()
    elif isinstance(ev, K.TableFinished | K.TableHalted):
        ACTIVE_TABLES.dec()
    elif isinstance(ev, K.ActionTaken):
        ACTIONS.labels("auto" if ev.auto else "player").inc()
