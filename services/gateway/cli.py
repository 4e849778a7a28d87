"""``mahjong`` subcommands of the gateway.

* ``mahjong replay export --store-url URL TABLE_ID [HAND_ID]`` — a finished hand (default: the
  table's last finished hand) as JSON lines: a header with the table's rules, then every event
  of the hand from the gateway's log (all tiles and every applied action).
* ``mahjong replay verify FILE.jsonl`` (``-`` = stdin) — the wall commitment holds (wall
  verifier) and every action was legal (the hand played again against the rules domain), 144
  tiles accounted for, chips summing to zero. Exit 0 verified, 1 not, 2 unreadable.
"""

from __future__ import annotations

import argparse
import json
import sys

from infra.store import open_store
from services.gateway.domain.events.kinds import SeedRevealed
from services.gateway.domain.replay import export_hand, table_header
from services.gateway.tables import read_table_log
from services.gateway.verify import verify_hand


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("replay", help="export and verify finished hands of a gateway table")
    rs = r.add_subparsers(dest="replay_command", required=True)
    e = rs.add_parser("export", help="a finished hand as JSON lines")
    e.add_argument("--store-url", default="sqlite:///.data/gateway.db")
    e.add_argument("table_id")
    e.add_argument("hand_id", nargs="?", default="")
    e.set_defaults(func=_export)
    v = rs.add_parser("verify", help="verify an exported hand")
    v.add_argument("file", help="JSON-lines file from replay export, or - for stdin")
    v.set_defaults(func=_verify)


def _export(args: argparse.Namespace) -> int:
    store = open_store(args.store_url)
    try:
        log = read_table_log(store, args.table_id)
    finally:
        store.close()
    if not log:
        print(f"replay export: no table {args.table_id!r} in {args.store_url}", file=sys.stderr)
        return 2
    finished = [e.event.hand_id for e in log if isinstance(e.event, SeedRevealed)]
    hand_id = args.hand_id or (finished[-1] if finished else "")
    if not hand_id or hand_id not in finished:
        print(
            f"replay export: hand {hand_id!r} is not a finished hand of the table", file=sys.stderr
        )
        return 2
    header = table_header(args.table_id, log)
    for rec in export_hand(header, log, hand_id):
        print(json.dumps(rec, ensure_ascii=False, separators=(",", ":")))
    return 0


def _verify(args: argparse.Namespace) -> int:
    try:
        fh = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
        with fh:
            records = [json.loads(line) for line in fh if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        print(f"replay verify: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    if not records or records[0].get("type") != "hand":
        print("replay verify: the first line must be the hand header", file=sys.stderr)
        return 2
    verdict = verify_hand(records)
    if verdict.ok:
        print(
            f"OK: hand {records[0].get('hand_id')}: {verdict.actions} actions legal; "
            f"{verdict.wall_summary}"
        )
        return 0
    print("FAILED:\n" + "\n".join(f"  - {p}" for p in verdict.problems))
    return 1
