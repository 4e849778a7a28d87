import pytest

from services.matchmaking import tokens
from shared.errors import Unauthenticated
from shared.store.memory import MemoryStore


def test_token_round_trip():
    t = tokens.sign_player_token(b"k", "p-1")
    assert tokens.verify_player_token(b"k", t) == "p-1"


@pytest.mark.parametrize("bad", ["", "p-1", "p-1.", ".abc", "p-2.AAAA"])
def test_forged_or_malformed_tokens_are_unauthenticated(bad):
    with pytest.raises(Unauthenticated):
        tokens.verify_player_token(b"k", bad)


def test_token_for_one_player_does_not_verify_for_another():
    sig = tokens.sign_player_token(b"k", "p-1").rpartition(".")[2]
    with pytest.raises(Unauthenticated):
        tokens.verify_player_token(b"k", f"p-2.{sig}")


def test_other_secret_rejects():
    with pytest.raises(Unauthenticated):
        tokens.verify_player_token(b"other", tokens.sign_player_token(b"k", "p-1"))


def test_secret_is_created_once_and_kept_in_the_store():
    store = MemoryStore()
    first = tokens.load_or_create_secret(store)
    assert len(first) == 32
    assert tokens.load_or_create_secret(store) == first
