"""Matchmaking metrics (Prometheus): queue wait, tables created, hands recorded, rounds."""

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
