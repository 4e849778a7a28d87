"""The table's events and what each viewer may see of them (information hiding).

An event is stored once, complete, in the table's log: ``{"seq", "t", "kind", "data"}`` with
tiles in mpsz. :func:`project` cuts it down for one viewer: a seat sees its own concealed tiles
and every public fact, never another seat's concealed tiles or the wall; a spectator (viewer
None) sees only public facts. Events no viewer may see (``action``, the log's record of each
applied action for replays) project to None, as do prompts for other seats.

Who may claim a discard or rob a kong (抢杠) is secret: a prompt of that kind, the ``timed_out``
of a missed one and anything an event marks ``"private": true`` (the 托管 it starts, see
:meth:`TableSession._timeout`) go to their seat only, and so does a ``seat_changed``'s
``deadline_ms`` marked ``deadline_private`` (托管 resumed while a claim is pending). An own
turn is public, its timeout too, except ``in_a_row``, which counts missed claims as well
(others see 0).
"""

from __future__ import annotations

from typing import Any

from services.gateway.domain.hand import CLAIM, ROB_KONG
from shared import tiles as T

LOG_ONLY = frozenset({"action"})
PRIVATE_TO_SEAT = frozenset({"prompt"})
# Prompt kinds whose very existence tells what a seat holds.
SECRET_PROMPT_KINDS = frozenset({CLAIM, ROB_KONG})


def project(kind: str, data: dict[str, Any], viewer: int | None) -> dict[str, Any] | None:
    """``data`` as ``viewer`` may see it, or None when the viewer sees nothing of it."""
    if kind in LOG_ONLY:
        return None
    own = viewer is not None and data.get("seat") == viewer
    if (
        kind in PRIVATE_TO_SEAT
        or data.get("private")
        or (kind == "timed_out" and data.get("kind") in SECRET_PROMPT_KINDS)
    ):
        return data if own else None
    if kind == "timed_out" and not own:
        return {**data, "in_a_row": 0}
    if kind == "seat_changed" and data.get("deadline_private") and not own:
        # 托管 ended while a claim was pending: the new deadline is the seat's own
        return {k: v for k, v in data.items() if k not in ("deadline_ms", "deadline_private")}
    if kind == "tiles_dealt":
        hands = [h if seat == viewer else "" for seat, h in enumerate(data["hands"])]
        counts = [len(T.parse(h)) for h in data["hands"]]
        return {**data, "hands": hands, "counts": counts}
    if kind == "tile_drawn" and data.get("seat") != viewer:
        return {**data, "tile": ""}
    if kind == "flowers_exposed" and data.get("seat") != viewer:
        return {
            **data,
            "replacements": "",
            "replacement_count": len(T.parse(data.get("replacements", ""))),
        }
    if kind == "tiles_swapped" and data.get("seat") != viewer:
        return {**data, "buried": "", "taken": "", "count": len(T.parse(data["buried"]))}
    if kind == "meld_declared" and data.get("seat") != viewer:
        meld = data["meld"]
        if meld.get("kind") == "concealed_kong":
            return {**data, "meld": {"kind": "concealed_kong", "tiles": ""}}
    return data
