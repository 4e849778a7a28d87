"""The table's events and what each viewer may see of them (information hiding).

An event is stored once, complete, in the table's log: ``{"seq", "t", "kind", "data"}`` with
tiles in mpsz. :func:`project` cuts it down for one viewer: a seat sees its own concealed tiles
and every public fact, never another seat's concealed tiles or the wall; a spectator (viewer
None) sees only public facts. Events no viewer may see (``action``, the log's record of each
applied action for replays) project to None, as do prompts for other seats.
"""

from __future__ import annotations

from typing import Any

from shared import tiles as T

LOG_ONLY = frozenset({"action"})
PRIVATE_TO_SEAT = frozenset({"prompt"})


def project(kind: str, data: dict[str, Any], viewer: int | None) -> dict[str, Any] | None:
    """``data`` as ``viewer`` may see it, or None when the viewer sees nothing of it."""
    if kind in LOG_ONLY:
        return None
    if kind in PRIVATE_TO_SEAT:
        return data if viewer is not None and data.get("seat") == viewer else None
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
