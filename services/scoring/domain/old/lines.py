"""One scored line of the 户/番 model before it becomes a breakdown item: the option it
comes from (``HU_<option>`` / ``FAN_<option>`` codes in the breakdown catalog), its amount and
a sentence with the tiles."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Line:
    option: str  # the [old_hu] / [old_fan] option, e.g. "pong_terminal_exposed", "menqing"
    amount: int
    detail: str = ""
