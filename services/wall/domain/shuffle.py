"""The committed shuffle: a secret seed → the wall's tile order and the dice (RULES.md §3,
"Fairness"). Language-neutral by design, so a client in any language can verify a hand:

1. **Seed and commitment.** The seed is 32 bytes from a CSPRNG (:func:`new_seed`); the
   commitment published when the hand starts is ``SHA-256(seed)`` (:func:`commitment`).
2. **Byte stream.** For an ASCII label ``L`` the stream is the concatenation of the blocks
   ``HMAC-SHA256(key=seed, msg=L || uint64_be(i))`` for ``i = 0, 1, 2, …`` (32 bytes each).
   Labels: :data:`SHUFFLE_LABEL` for the shuffle and the dice, :data:`SWAP_LABEL` for 换牌.
3. **Uniform integers** (rejection sampling, no modulo bias): to draw ``r`` in ``[0, n)``, read
   the next 4 bytes of the stream as a big-endian unsigned ``x``; if
   ``x < 2**32 - (2**32 mod n)`` then ``r = x mod n``, otherwise discard ``x`` and read again.
4. **Shuffle** (Fisher–Yates): start from the table's ``N`` tiles in canonical order (RULES.md
   §1: 1m×4, 2m×4, …, 7z×4, then 1f … 8f once each; as kind indices 0-33 ×4 then 34-41 — the
   144 of the standard set; the 百搭 set of RULES-presets §13.B.1 continues with 1a … 4a once
   each (42-45) when it has the extras, then 1j ×4 (46) when it has dedicated 百搭: 152, 148 or
   144 tiles); for ``i`` from ``N − 1`` down to 1, draw ``j`` uniform in ``[0, i]`` and swap
   elements ``i`` and ``j``. Element ``p`` of the result is the tile at wall position ``p``.
5. **Dice:** continuing the same stream, ``first = 1 + uniform(6)``, ``second = 1 + uniform(6)``.

How positions form the physical wall is :mod:`services.wall.domain.wall`.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Sequence
from typing import Final

from shared.tiles import canonical_set

SEED_BYTES: Final = 32
SHUFFLE_LABEL: Final = b"mahjong/wall/v1/shuffle"
SWAP_LABEL: Final = b"mahjong/wall/v1/swap"

_U32: Final = 1 << 32
_CANONICAL: Final = tuple(canonical_set())


def new_seed() -> bytes:
    """A fresh secret 32-byte seed (``secrets``, the OS CSPRNG)."""
    return secrets.token_bytes(SEED_BYTES)


def commitment(seed: bytes) -> bytes:
    """The published commitment: SHA-256 of the seed."""
    return hashlib.sha256(seed).digest()


def check_seed(seed: bytes) -> None:
    if not isinstance(seed, bytes | bytearray) or len(seed) != SEED_BYTES:
        raise ValueError(f"a seed is {SEED_BYTES} bytes, got {len(seed)}")


_PACK_BLOCK: Final = struct.Struct(">Q").pack
_UNPACK_WORDS: Final = struct.Struct(">8I").unpack


class _Words:
    """The stream as big-endian 32-bit words, from block ``block`` on: one HMAC block is
    computed when the words before it are used up. (A native class, not a generator: compiled,
    each word is a plain method call instead of a generator resume.)"""

    __slots__ = ("_block", "_k", "_label", "_seed", "_words")

    def __init__(self, seed: bytes, label: bytes, block: int) -> None:
        self._seed = seed
        self._label = label
        self._block = block
        self._words: tuple[int, ...] = ()
        self._k = 0

    def next(self) -> int:
        k = self._k
        words = self._words
        if k == len(words):
            words = self._words = _UNPACK_WORDS(
                hmac.digest(self._seed, self._label + _PACK_BLOCK(self._block), "sha256")
            )
            self._block += 1
            k = 0
        self._k = k + 1
        return words[k]


# Rejection limits 2**32 - (2**32 mod n) for the ranges the shuffle and dice use (a table on the
# hot path); other ranges compute theirs.
_TABLE_SIZE: Final = 256
_LIMITS: Final = [0] + [_U32 - (_U32 % n) for n in range(1, _TABLE_SIZE)]


class ByteStream:
    """The deterministic HMAC-SHA256 byte stream of a seed and a label, read as uniform ints
    (4 bytes at a time, step 3).

    ``position`` (bytes consumed, a multiple of 4) makes a stream resumable:
    ``ByteStream(seed, label, n)`` continues where one that had consumed ``n`` bytes stopped.
    """

    __slots__ = ("_words", "_words_read")

    def __init__(self, seed: bytes, label: bytes, position: int = 0) -> None:
        check_seed(seed)
        if position % 4:
            raise ValueError(f"stream position {position} is not a multiple of 4")
        block, skip = divmod(position // 4, 8)
        words = _Words(bytes(seed), label, block)
        for _ in range(skip):
            words.next()
        self._words = words
        self._words_read = position // 4

    @property
    def position(self) -> int:
        """Bytes consumed so far."""
        return 4 * self._words_read

    def word(self) -> int:
        """The next 4 bytes as a big-endian unsigned integer."""
        self._words_read += 1
        return self._words.next()

    def uniform(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` by rejection sampling on 32-bit words."""
        if not 1 <= n <= _U32:
            raise ValueError(f"uniform range {n} out of 1..2**32")
        limit = _LIMITS[n] if n < _TABLE_SIZE else _U32 - (_U32 % n)
        while True:
            self._words_read += 1
            x = self._words.next()
            if x < limit:
                return x % n


def shuffle_and_dice(
    seed: bytes, tile_set: Sequence[int] = _CANONICAL
) -> tuple[list[int], tuple[int, int]]:
    """The wall's tiles by position (0 … N − 1) and the two dice, from the seed (steps 2-5).
    ``tile_set`` is the set in canonical order (default: the 144 tiles of RULES §1;
    :meth:`shared.tile_set.TileSet.tiles` for another ruleset's)."""
    check_seed(seed)
    if not 2 <= len(tile_set) < _TABLE_SIZE:
        raise ValueError(f"a tile set of {len(tile_set)} tiles cannot be shuffled")
    words = _Words(bytes(seed), SHUFFLE_LABEL, 0)
    limits = _LIMITS
    tiles = list(tile_set)
    for i in range(len(tiles) - 1, 0, -1):  # inlined uniform(i + 1): the hot path
        n = i + 1
        x = words.next()
        while x >= limits[n]:
            x = words.next()
        j = x % n
        tiles[i], tiles[j] = tiles[j], tiles[i]
    dice = []
    for _ in range(2):
        x = words.next()
        while x >= limits[6]:
            x = words.next()
        dice.append(1 + x % 6)
    return tiles, (dice[0], dice[1])
