"""Work for the wall repository's multi-process tests (run in spawned processes)."""

from __future__ import annotations

from infra.store import open_store
from services.wall.storage.repository import WallRepository
from shared.errors import FailedPrecondition


def draw_until_exhausted(url: str, hand_id: str, name: str, barrier, queue) -> None:
    store = open_store(url, pool_size=2)
    try:
        repo = WallRepository(store)
        barrier.wait(60)
        tiles: list[int] = []
        i = int(name[1:])
        while True:
            try:
                draw = repo.draw if i % 2 else repo.draw_replacement
                event, _ = draw(hand_id, i % 4, f"{name}-{len(tiles)}")
            except FailedPrecondition:
                break
            tiles.extend(event.tiles)
        queue.put((name, tiles))
    except BaseException as exc:
        queue.put((name, repr(exc)))
        raise
    finally:
        store.close()
