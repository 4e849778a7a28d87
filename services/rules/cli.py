"""``mahjong`` subcommands of the rules service.

``mahjong judge [FILE|-]`` reads hands in the rule-vector format (tests/vectors/README.md: one
JSON object per line with ``concealed`` and ``melds`` in mpsz, optional ``ruleset`` and
``options`` (``{"section.option": value}``; RULES-presets §13.0: ``1j`` 百搭 in ``concealed``
under shanghai-baida, and ``1j`` ending the waits when a drawn 百搭 completes the hand); other keys
such as ``name`` and ``expect`` are ignored). Two more keys serve shanghai-baida's options:
``wild_indicator`` — the turned-up tile of a flipped-百搭 table (``baida_tiles.wildcards =
"flipped"``, §13.B.9; required there, refused elsewhere, as ``mahjong score`` reads it): the
tiles of the wild kind it makes (``flipped_wild``) are 百搭, and a drawn one is the 百搭 wait,
listed as that kind; ``visible`` — mpsz tiles seen outside the hand (discards, the other
seats' exposed melds; the indicator is added), which with ``baida_tiles.wildcard_fifth_copy``
false a 百搭 may not make a fifth copy of (§13.B.3). It prints one JSON object per line
with the keys of ``expect``: ``{"waits": "45z"}`` for a 13-tile hand, ``{"hand":
"full_flush"}`` (or null) for a 14-tile hand. A line that cannot be judged prints
``{"error": "..."}`` naming the problem; the exit status is then 1 (2 when the file cannot be
read).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from services.rules.domain import evaluate_hand, hand_waits
from shared.errors import InvalidArgument
from shared.hand.input import COMPLETE_SIZE, check_hand, counts_and_wildcards
from shared.melds import Meld
from shared.ruleset import RulesetError, resolve_ruleset
from shared.tile_set import check_indicator_copies, flipped_wild_kind, tile_set_of
from shared.tiles import NotationError, format_tiles, parse


def register(sub: argparse._SubParsersAction) -> None:
    j = sub.add_parser(
        "judge", help="judge hands in the rule-vector format: waits or winning hand per line"
    )
    j.add_argument("file", nargs="?", default="-", help="JSON-lines file; - or none = stdin")
    j.set_defaults(func=_judge)


def judge_line(obj: Any) -> dict[str, Any]:
    """The answer for one vector-format object (InvalidArgument when it is malformed)."""
    if not isinstance(obj, dict):
        raise InvalidArgument("each line must be a JSON object")
    try:
        ruleset = resolve_ruleset(obj.get("ruleset") or "", obj.get("options") or {})
        tiles = parse(_mpsz(obj.get("concealed", ""), "concealed"))
        tile_set_of(ruleset).check_tiles(tiles, "concealed")
        counts, jokers = counts_and_wildcards(tiles, "concealed tiles")
        melds_in = obj.get("melds") or []
        if not isinstance(melds_in, list):
            raise InvalidArgument("melds must be a list of {kind, tiles, from}")
        melds = [Meld.from_json(m) for m in melds_in]
        indicator = _one_tile(obj.get("wild_indicator"), "wild_indicator")
        visible = parse(_mpsz(obj.get("visible", ""), "visible"))
    except (NotationError, RulesetError, ValueError, KeyError, TypeError) as exc:
        raise InvalidArgument(str(exc)) from None
    size = check_hand(counts, melds, jokers=jokers)
    ts = tile_set_of(ruleset)
    wild = flipped_wild_kind(ts, indicator, ruleset.name)
    if indicator is not None:
        check_indicator_copies(counts, melds, indicator, "the hand")
        visible.append(indicator)  # face up beside the wall
    if size == COMPLETE_SIZE:
        hand = evaluate_hand(counts, melds, ruleset, (), jokers, wild, visible).hand
        return {"hand": None if hand is None else hand.label}
    return {"waits": format_tiles(hand_waits(counts, melds, ruleset, jokers, wild, visible))}


def _mpsz(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{key} must be an mpsz string such as '3p'")
    return value


def _one_tile(value: Any, key: str) -> int | None:
    """The one tile an mpsz string such as ``"3p"`` names (None when the key is absent)."""
    if value is None:
        return None
    tiles = parse(_mpsz(value, key))
    if len(tiles) != 1:
        raise InvalidArgument(f"{key} must be one tile such as '3p', got {value!r}")
    return tiles[0]


def judge_stream(lines: TextIO, out: TextIO) -> int:
    """Judge every non-blank line; returns the exit status (0 all judged, 1 some failed)."""
    status = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            answer = judge_line(json.loads(line))
        except json.JSONDecodeError as exc:
            answer, status = {"error": f"line {number}: not JSON: {exc.msg}"}, 1
        except InvalidArgument as exc:
            answer, status = {"error": f"line {number}: {exc.message}"}, 1
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    return status


def _judge(args: argparse.Namespace) -> int:
    if args.file == "-":
        return judge_stream(sys.stdin, sys.stdout)
    try:
        with open(args.file, encoding="utf-8") as fh:
            return judge_stream(fh, sys.stdout)
    except OSError as exc:
        print(f"mahjong judge: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
