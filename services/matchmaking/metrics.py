"""Matchmaking metrics (Prometheus): queue wait, tables created, hands recorded, rounds; and
:class:`PrometheusMetrics`, the domain's :class:`~services.matchmaking.domain.ports.Metrics`
port counted on them."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

QUEUE_WAIT = Histogram(
    "mahjong_matchmaking_queue_wait_seconds",
    "Time from joining a quick-match queue to being seated, by stake tier.",
    ["stake"],
    buckets=(1, 2, 5, 10, 20, 30, 45, 60, 120, 300, 600),
)
TABLES = Counter(
    "mahjong_matchmaking_tables_total",
    "Tables created on a gateway, by kind (quick, room, tournament).",
    ["kind"],
)
BOT_SEATS = Counter(
    "mahjong_matchmaking_bot_seats_total", "Empty quick-match seats filled by bots."
)
HANDS = Counter(
    "mahjong_matchmaking_hands_recorded_total",
    "Settled hands reported by the gateway, by whether they were new or repeats.",
    ["result"],
)
ROUNDS = Counter(
    "mahjong_matchmaking_tournament_rounds_total",
    "Tournament steps that moved a round on: a round seated, or a tournament finished.",
)
TOURNAMENTS_STALLED = Gauge(
    "mahjong_matchmaking_tournaments_stalled",
    "Tournaments whose next step failed again and again (STALLED), as the ticker last saw them.",
)
TOURNAMENT_STEP_FAILURES = Counter(
    "mahjong_matchmaking_tournament_step_failures_total",
    "Failed tries of a tournament's next step, by step (settle, seat, create_tables); each "
    "is retried after a backoff.",
    ["step"],
)
REPORTS_REFUSED = Counter(
    "mahjong_matchmaking_reports_refused_total",
    "Gateway reports refused because matchmaking did not allocate that table with those seats, "
    "by reason (TABLE_NOT_ALLOCATED, TABLE_TAG_MISMATCH, TABLE_SEATING_MISMATCH).",
    ["reason"],
)
# The reconciliation (reconciliation.py), refreshed by the ticker: today so far, UTC.
BOT_NET_ALERTS = Gauge(
    "mahjong_matchmaking_bot_net_alerts",
    "Players whose net against the house's bot seats today passes house.bot_net_alert.",
)
BOT_NET_MAX = Gauge(
    "mahjong_matchmaking_bot_net_max_silver",
    "The largest |net| of one player against the house's bot seats today.",
)
HOUSE_NET = Gauge("mahjong_matchmaking_house_net_silver", "The house's net silver today.")
BANKRUPT = Counter(
    "mahjong_matchmaking_bankrupt_seats_total",
    "Seats whose player could no longer cover a hand (破产) and left after it.",
)
SHORTFALL_SILVER = Counter(
    "mahjong_matchmaking_shortfall_silver_total",
    "Silver of settled hands' losses that the losers could not pay (cut from the gains).",
)
PURCHASES = Counter(
    "mahjong_matchmaking_item_purchases_total", "Items bought with silver.", ["asset"]
)


class PrometheusMetrics:
    """The domain's counts on the Prometheus metrics above (one registry per process)."""

    def tables_created(self, kind: str, count: int = 1) -> None:
        TABLES.labels(kind).inc(count)

    def quick_table(self, bots: int, waits) -> None:
        TABLES.labels("quick").inc()
        BOT_SEATS.inc(bots)
        for stake, seconds in waits:
            QUEUE_WAIT.labels(str(stake)).observe(max(seconds, 0))

    def hand_recorded(self, new: bool) -> None:
        HANDS.labels("new" if new else "repeat").inc()

    def report_refused(self, reason: str) -> None:
        REPORTS_REFUSED.labels(reason).inc()

    def silver_short(self, amount: int) -> None:
        SHORTFALL_SILVER.inc(amount)

    def items_bought(self, asset: str, count: int) -> None:
        PURCHASES.labels(asset).inc(count)

    def seat_bankrupt(self) -> None:
        BANKRUPT.inc()

    def round_done(self) -> None:
        ROUNDS.inc()

    def tournament_step_failed(self, step: str) -> None:
        TOURNAMENT_STEP_FAILURES.labels(step).inc()

    def tournaments_stalled(self, count: int) -> None:
        TOURNAMENTS_STALLED.set(count)

    def books(self, house_net: int, bot_net_max: int, bot_net_alerts: int) -> None:
        HOUSE_NET.set(house_net)
        BOT_NET_MAX.set(bot_net_max)
        BOT_NET_ALERTS.set(bot_net_alerts)
