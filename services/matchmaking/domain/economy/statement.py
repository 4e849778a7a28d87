"""An account's statement, page by page: its ledger entries newest first, each page ending
with an opaque token for the next (:func:`entries_page`, ``ListLedgerEntries``)."""

from __future__ import annotations

import base64
import binascii

from services.matchmaking.domain import records
from services.matchmaking.domain.economy import ledger
from services.matchmaking.domain.economy.books import Cursor, books_of
from services.matchmaking.domain.economy.ledger import Entry
from services.matchmaking.domain.ports import Records
from shared.errors import InvalidArgument

MAX_PAGE = 500
DEFAULT_PAGE = 100


def _token(e: Entry) -> str:
    raw = records.dump([e.at, e.ref, e.seq])
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor(token: str) -> Cursor | None:
    if not token:
        return None
    try:
        at, ref, seq = records.load(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if not isinstance(ref, str) or not isinstance(seq, int) or isinstance(at, bool):
            raise ValueError(token)
        return Cursor(float(at), ref, seq)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        raise InvalidArgument(
            "page_token is not one this service gave", field="page_token"
        ) from None


def entries_page(
    store: Records, account: str, asset: str | None, page_token: str, page_size: int
) -> tuple[list[Entry], str]:
    """A page of the account's entries, newest first, and the next page's token ("" on the
    last): ``page_size`` 1-500 (0 = 100), ``asset`` None = every asset."""
    if page_size < 0 or page_size > MAX_PAGE:
        raise InvalidArgument(f"page_size {page_size} is not in 1-{MAX_PAGE}", field="page_size")
    if asset is not None:
        ledger.check_asset(asset)
    size = page_size or DEFAULT_PAGE
    found = books_of(store).entries_page(account, asset, _cursor(page_token), size + 1)
    if len(found) > size:
        return found[:size], _token(found[size - 1])
    return found, ""
