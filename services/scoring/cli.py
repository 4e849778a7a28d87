"""``mahjong`` subcommands of the scoring service.

``mahjong score [FILE|-]`` reads hands in the scoring-vector format (tests/vectors/README.md:
one JSON object per line; ``name`` and ``expect`` are ignored) and prints one JSON object per
line with the keys of ``expect`` (``winners``, ``payments``, ``house``) plus ``breakdown``.
``--explain`` prints each breakdown as a readable table instead: every 花 source, the hand,
each multiplier, floor and cap, each payment and why. A line that cannot be settled prints
``{"error": "line N: ..."}`` naming the problem (with ``--explain``: ``line N: error: ...``);
the exit status is then 1 (2 when the file cannot be read).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from services.scoring.domain import render_table
from services.scoring.vector_format import settle_object, settlement_json
from shared.errors import InvalidArgument


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser(
        "score",
        help="settle hands in the scoring-vector format: winners, payments, house, breakdown",
    )
    s.add_argument("file", nargs="?", default="-", help="JSON-lines file; - or none = stdin")
    s.add_argument(
        "--explain", action="store_true", help="print each breakdown as a table for people"
    )
    s.set_defaults(func=_score)


def score_stream(lines: TextIO, out: TextIO, explain: bool = False) -> int:
    """Settle every non-blank line; returns the exit status (0 all settled, 1 some failed)."""
    status = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        name = ""
        try:
            obj = json.loads(line)
            name = obj.get("name", "") if isinstance(obj, dict) else ""
            settlement = settle_object(obj)
        except json.JSONDecodeError as exc:
            status = 1
            _error(out, explain, f"line {number}: not JSON: {exc.msg}")
            continue
        except InvalidArgument as exc:
            status = 1
            _error(out, explain, f"line {number}: {exc.message}")
            continue
        if explain:
            title = f"line {number}" + (f": {name}" if name else "")
            out.write(render_table(settlement.breakdown, title) + "\n")
            out.write(
                f"payments by seat: {list(settlement.payments)}  house: {settlement.house}\n\n"
            )
        else:
            out.write(json.dumps(settlement_json(settlement), ensure_ascii=False) + "\n")
    return status


def _error(out: TextIO, explain: bool, message: str) -> None:
    if explain:
        out.write(f"error: {message}\n\n")
    else:
        out.write(json.dumps({"error": message}, ensure_ascii=False) + "\n")


def _score(args: argparse.Namespace) -> int:
    if args.file == "-":
        return score_stream(sys.stdin, sys.stdout, args.explain)
    try:
        with open(args.file, encoding="utf-8") as fh:
            return score_stream(fh, sys.stdout, args.explain)
    except OSError as exc:
        print(f"mahjong score: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
