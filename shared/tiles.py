"""Tiles and mpsz notation (RULES.md §1).

A tile *kind* is an integer in canonical order:

====== ========= ===========================================
index  notation  tiles
====== ========= ===========================================
0-8    1m-9m     万 characters
9-17   1p-9p     筒 dots
18-26  1s-9s     条 bamboo
27-30  1z-4z     winds 东 南 西 北
31-33  5z-7z     dragons 白 发 中
34-41  1f-8f     flowers 春 夏 秋 冬 梅 兰 竹 菊 (one copy each)
42-45  1a-4a     extra bonus tiles 老鼠 财神 猫 聚宝盆 (one copy each; RULES-presets §13.0)
46     1j        百搭 wildcard (four copies; RULES-presets §13.0)
====== ========= ===========================================

The protobuf ``Tile`` enum is the kind plus one (``TILE_UNSPECIFIED = 0``). Hands are usually
handled as *count arrays*: a list of 34 ints, ``counts[kind]`` = copies held. The count arrays
cover the playing kinds only: a hand's 百搭 are counted on their own (an int beside the array),
so natural-hand code never sees a wildcard and its arrays and tables keep their size. Which of
the kinds a table uses is the ruleset's (``shared/tile_set.py``): ``1a``-``4a`` and ``1j``
exist only in ``shanghai-baida``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

NUM_KINDS: Final = 34  # suited and honor kinds, four copies each
NUM_FLOWERS: Final = 8
FLOWER_BASE: Final = 34
NUM_EXTRAS: Final = 4
EXTRA_BASE: Final = 42  # 1a-4a 老鼠 财神 猫 聚宝盆
WILDCARD: Final = 46  # 1j 百搭
NUM_TILE_KINDS: Final = 47  # 1m … 8f, 1a … 4a, 1j
COPIES: Final = 4
WALL_SIZE: Final = NUM_KINDS * COPIES + NUM_FLOWERS  # 144: the standard set of RULES §1

MAN: Final = 0
PIN: Final = 1
SOU: Final = 2
HONOR: Final = 3
FLOWER: Final = 4
EXTRA: Final = 5
JOKER: Final = 6
SUIT_LETTERS = "mpszfaj"
_SUIT_OF_LETTER = {letter: i for i, letter in enumerate(SUIT_LETTERS)}
_RANKS_IN_SUIT: Final = (9, 9, 9, 7, 8, 4, 1)
_SUIT_BASE: Final = (0, 9, 18, 27, 34, 42, 46)

EAST: Final = 27
SOUTH: Final = 28
WEST: Final = 29
NORTH: Final = 30
WHITE: Final = 31
GREEN: Final = 32
RED: Final = 33
WINDS: Final = (EAST, SOUTH, WEST, NORTH)
DRAGONS: Final = (WHITE, GREEN, RED)

_NAMES_ZH = (
    [f"{n}万" for n in "一二三四五六七八九"]
    + [f"{n}筒" for n in "一二三四五六七八九"]
    + [f"{n}条" for n in "一二三四五六七八九"]
    + ["东", "南", "西", "北", "白", "发", "中"]
    + ["春", "夏", "秋", "冬", "梅", "兰", "竹", "菊"]
    + ["老鼠", "财神", "猫", "聚宝盆"]
    + ["百搭"]
)


class NotationError(ValueError):
    """A string that is not valid mpsz notation; the message names the offending character."""


def kind(suit: int, rank: int) -> int:
    """Kind index of ``rank`` (1-based) in ``suit`` (MAN, PIN, SOU, HONOR, FLOWER, EXTRA,
    JOKER)."""
    if not 1 <= rank <= _RANKS_IN_SUIT[suit]:
        raise ValueError(f"rank {rank} out of range for suit {SUIT_LETTERS[suit]}")
    return _SUIT_BASE[suit] + rank - 1


def suit_of(k: int) -> int:
    """Suit of a kind: MAN, PIN, SOU, HONOR, FLOWER, EXTRA or JOKER."""
    if k < 27:
        return k // 9
    if k < FLOWER_BASE:
        return HONOR
    if k < EXTRA_BASE:
        return FLOWER
    return EXTRA if k < WILDCARD else JOKER


def rank_of(k: int) -> int:
    """1-based rank of a kind within its suit (1z = East … 7z = Red, 1f … 8f, 1a … 4a, 1j)."""
    return k - _SUIT_BASE[suit_of(k)] + 1


def is_suited(k: int) -> bool:
    return 0 <= k < 27


def is_honor(k: int) -> bool:
    """字牌 honor: a wind or a dragon."""
    return 27 <= k < FLOWER_BASE


def is_wind(k: int) -> bool:
    return 27 <= k <= 30


def is_dragon(k: int) -> bool:
    return 31 <= k <= 33


def is_flower(k: int) -> bool:
    """花 flower tile 1f-8f."""
    return FLOWER_BASE <= k < EXTRA_BASE


def is_extra(k: int) -> bool:
    """老鼠 财神 猫 聚宝盆 extra bonus tile 1a-4a (shanghai-baida)."""
    return EXTRA_BASE <= k < WILDCARD


def is_bonus(k: int) -> bool:
    """A tile that is never held (a flower or an extra); which dragons are bonus tiles too is
    the ruleset's (``shared.tile_set``)."""
    return FLOWER_BASE <= k < WILDCARD


def is_wildcard(k: int) -> bool:
    """百搭 wildcard tile 1j (shanghai-baida)."""
    return k == WILDCARD


def is_playing(k: int) -> bool:
    """A suited or honor kind: one of the 34 entries of a count array."""
    return 0 <= k < NUM_KINDS


def is_valid_kind(k: object) -> bool:
    return isinstance(k, int) and 0 <= k < NUM_TILE_KINDS


def copies_of(k: int) -> int:
    """How many copies of a kind a set holding it has: 4, or 1 for a flower or an extra."""
    return 1 if is_bonus(k) else COPIES


def name_zh(k: int) -> str:
    """Chinese name of a kind, for people: ``一万``, ``东``, ``梅``."""
    return _NAMES_ZH[k]


def canonical_set(extras: bool = False, wildcards: bool = False) -> list[int]:
    """The tiles of a set in canonical order: each suited/honor kind ×4, the 8 flowers, then
    with ``extras`` 1a-4a once each and with ``wildcards`` 1j ×4 (144, 148 or 152 tiles)."""
    tiles = [k for k in range(NUM_KINDS) for _ in range(COPIES)]
    tiles.extend(range(FLOWER_BASE, EXTRA_BASE))
    if extras:
        tiles.extend(range(EXTRA_BASE, WILDCARD))
    if wildcards:
        tiles.extend([WILDCARD] * COPIES)
    return tiles


def parse(text: str) -> list[int]:
    """Parse mpsz notation (``"123m55z1f"``) into kinds, in the order written.

    Whitespace is ignored. Raises :class:`NotationError` naming the bad character and its
    position: a character that is neither a digit nor a suit letter, a rank out of range for
    its suit (``8z``, ``0m``, ``9f``), or digits with no suit letter after them.
    """
    tiles: list[int] = []
    pending: list[tuple[int, str]] = []  # (position, digit)
    for pos, ch in enumerate(text):
        if ch.isspace():
            continue
        if "0" <= ch <= "9":
            pending.append((pos, ch))
            continue
        suit = _SUIT_OF_LETTER.get(ch)
        if suit is None:
            raise NotationError(f"bad character {ch!r} at position {pos} in {text!r}")
        if not pending:
            raise NotationError(f"suit letter {ch!r} at position {pos} has no digits before it")
        for dpos, digit in pending:
            rank = int(digit)
            if not 1 <= rank <= _RANKS_IN_SUIT[suit]:
                raise NotationError(
                    f"bad character {digit!r} at position {dpos} in {text!r}: no tile {digit}{ch}"
                )
            tiles.append(_SUIT_BASE[suit] + rank - 1)
        pending.clear()
    if pending:
        pos, digit = pending[0]
        raise NotationError(
            f"digits from position {pos} in {text!r} have no suit letter after them"
        )
    return tiles


def format_tiles(tiles: Iterable[int], *, sort: bool = True) -> str:
    """Format kinds as compact mpsz (``[0, 1, 2, 31, 31]`` → ``"123m55z"``).

    With ``sort`` (the default) tiles are written in canonical order.
    """
    seq = sorted(tiles) if sort else list(tiles)
    out: list[str] = []
    run_suit = -1
    for k in seq:
        if not is_valid_kind(k):
            raise ValueError(f"not a tile kind: {k!r}")
        s = suit_of(k)
        if s != run_suit and run_suit != -1:
            out.append(SUIT_LETTERS[run_suit])
        out.append(str(rank_of(k)))
        run_suit = s
    if run_suit != -1:
        out.append(SUIT_LETTERS[run_suit])
    return "".join(out)


def format_tile(k: int) -> str:
    """One kind in mpsz: ``0`` → ``"1m"``."""
    return format_tiles((k,))


def to_counts(tiles: Iterable[int]) -> list[int]:
    """Count array of the 34 suited/honor kinds; bonus tiles and 百搭 are not counted here
    (:func:`count_wildcards` counts the 百搭)."""
    counts = [0] * NUM_KINDS
    for k in tiles:
        if k < NUM_KINDS:
            counts[k] += 1
    return counts


def count_wildcards(tiles: Iterable[int]) -> int:
    """How many 百搭 ``1j`` are among ``tiles``."""
    return sum(1 for k in tiles if k == WILDCARD)


def from_counts(counts: Sequence[int], wildcards: int = 0) -> list[int]:
    """Kinds in canonical order from a count array, then ``wildcards`` × 1j."""
    tiles = [k for k, n in enumerate(counts) for _ in range(n)]
    tiles.extend([WILDCARD] * wildcards)
    return tiles


def parse_counts(text: str) -> list[int]:
    """Parse mpsz into a 34-count array; bonus tiles and 百搭 in the text are an error."""
    tiles = parse(text)
    for k in tiles:
        if not is_playing(k):
            raise NotationError(f"{format_tile(k)} where only natural hand tiles are allowed")
    return to_counts(tiles)
