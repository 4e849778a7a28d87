"""Request ids (services/matchmaking/adapters/idempotency.py) on every store backend: a retry gets
the first answer and runs nothing, another request under the same id is refused, refusals are kept
but passing failures are not, a call still running holds its id, and records expire and are
swept."""

from __future__ import annotations

import threading

import pytest

from services.matchmaking.adapters.idempotency import (
    EXPIRY,
    REQUESTS,
    RequestLog,
    RequestRecord,
    check_request_id,
    request_key,
)
from shared.errors import (
    Aborted,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Refusal,
    Unavailable,
)


class Clock:
    def __init__(self) -> None:
        self.ms = 1_800_000_000_000

    def __call__(self) -> int:
        return self.ms


class Effect:
    """A call that counts how often it ran and answers its count."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self) -> bytes:
        self.runs += 1
        return f"answer {self.runs}".encode()


@pytest.fixture
def log(backend):
    clock = Clock()
    return RequestLog(backend.open(), ttl_ms=60_000, pending_ms=5_000, clock_ms=clock), clock


def test_a_retry_gets_the_first_answer_and_runs_nothing(log):
    requests, _ = log
    effect = Effect()
    assert requests.run("JoinQueue", "player:p1", "r-1", "fp", effect) == (b"answer 1", False)
    for _ in range(3):
        assert requests.run("JoinQueue", "player:p1", "r-1", "fp", effect) == (b"answer 1", True)
    assert effect.runs == 1
    # the same id of another caller, or of another method, is another request
    assert requests.run("JoinQueue", "player:p2", "r-1", "fp", effect) == (b"answer 2", False)
    assert requests.run("OpenRoom", "player:p1", "r-1", "fp", effect) == (b"answer 3", False)


def test_the_same_id_for_another_request_is_refused_before_anything_runs(log):
    requests, _ = log
    effect = Effect()
    requests.run("JoinQueue", "player:p1", "r-1", "stake 1", effect)
    with pytest.raises(FailedPrecondition) as refused:
        requests.run("JoinQueue", "player:p1", "r-1", "stake 2", effect)
    assert refused.value.reason == "REQUEST_ID_REUSED"
    assert refused.value.details == {"field": "request_id"}
    assert effect.runs == 1
    # and the first answer is still there for the first request
    assert requests.run("JoinQueue", "player:p1", "r-1", "stake 1", effect) == (b"answer 1", True)


def test_a_refusal_is_kept_and_raised_again_without_running(log):
    requests, _ = log
    runs = []

    def refuse() -> bytes:
        runs.append(1)
        raise NotFound("no room with code 123456", code="123456")

    for _ in range(3):
        with pytest.raises(NotFound) as err:
            requests.run("JoinRoom", "player:p1", "r-9", "fp", refuse)
        assert err.value.message == "no room with code 123456"
        assert err.value.details == {"code": "123456"}
    assert len(runs) == 1


@pytest.mark.parametrize(
    "failure", [Unavailable("store away"), Aborted("lost a race"), RuntimeError("bug")]
)
def test_a_passing_failure_is_not_kept_and_the_retry_runs(log, failure):
    requests, _ = log
    effect = Effect()
    calls = []

    def fails_once() -> bytes:
        calls.append(1)
        if len(calls) == 1:
            raise failure
        return effect()

    with pytest.raises(type(failure)):
        requests.run("BuyItems", "player:p1", "r-2", "fp", fails_once)
    assert requests.run("BuyItems", "player:p1", "r-2", "fp", fails_once) == (b"answer 1", False)
    assert len(calls) == 2


def test_a_call_still_running_holds_its_id_until_it_is_given_up(log):
    requests, _ = log
    inside = threading.Event()
    release = threading.Event()
    effect = Effect()
    outcome = []

    def slow() -> bytes:
        inside.set()
        release.wait(10)
        return effect()

    first = threading.Thread(
        target=lambda: outcome.append(requests.run("OpenRoom", "player:p1", "r-3", "fp", slow))
    )
    first.start()
    assert inside.wait(10)
    with pytest.raises(Aborted) as busy:
        requests.run("OpenRoom", "player:p1", "r-3", "fp", effect)
    assert busy.value.reason == "REQUEST_IN_PROGRESS" and "retry_delay_ms" in busy.value.details
    release.set()
    first.join(10)
    assert outcome == [(b"answer 1", False)]
    assert requests.run("OpenRoom", "player:p1", "r-3", "fp", effect) == (b"answer 1", True)
    assert effect.runs == 1


def test_a_claim_left_by_a_dead_replica_is_taken_over_after_the_pending_time(log):
    requests, clock = log
    key = request_key("OpenRoom", "player:p1", "r-4")
    dead = RequestRecord("fp", clock.ms, clock.ms + 60_000)  # claimed, never finished
    requests.store.put(REQUESTS, key, dead.encode())
    effect = Effect()
    with pytest.raises(Aborted):
        requests.run("OpenRoom", "player:p1", "r-4", "fp", effect)
    clock.ms += 5_000
    assert requests.run("OpenRoom", "player:p1", "r-4", "fp", effect) == (b"answer 1", False)


def test_two_at_once_apply_once(log):
    requests, _ = log
    effect = Effect()
    lock = threading.Lock()
    answers, busy = [], []
    start = threading.Barrier(8)

    def call():
        start.wait(10)
        try:
            got = requests.run("CreateTournament", "player:p1", "r-5", "fp", effect)
        except Aborted:
            got = None
        with lock:
            (answers if got else busy).append(got)

    threads = [threading.Thread(target=call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert effect.runs == 1
    assert {a[0] for a in answers} == {b"answer 1"}
    assert [a[1] for a in answers].count(False) == 1
    assert len(answers) + len(busy) == 8


def test_records_expire_and_the_sweep_deletes_them(log):
    requests, clock = log
    effect = Effect()
    for i in range(5):
        requests.run("JoinQueue", f"player:p{i}", "r-6", "fp", effect)
    clock.ms += 70_000
    requests.run("JoinQueue", "player:late", "r-6", "fp", effect)
    assert requests.sweep() == 0  # the first five expired, but their minute is not over
    clock.ms += 51_000  # now it is
    assert requests.run("JoinQueue", "player:p0", "r-6", "fp", effect) == (b"answer 7", False)
    deleted = requests.sweep()
    assert deleted == 4  # p1-p4; p0 was claimed again and lives on
    left = {k for k, _ in requests.store.scan(REQUESTS)}
    assert left == {
        request_key("JoinQueue", "player:p0", "r-6"),
        request_key("JoinQueue", "player:late", "r-6"),
    }
    clock.ms += 3 * 60_000
    assert requests.sweep() == 2
    assert list(requests.store.scan(REQUESTS)) == []
    assert list(requests.store.scan(EXPIRY)) == []


def test_a_record_survives_its_encoding_and_refuses_an_unknown_version():
    rec = RequestRecord(
        "fp", 1, 2, refusal=Refusal("NOT_FOUND", "no room", "NOT_FOUND", {"code": "1"})
    )
    assert RequestRecord.decode(rec.encode()) == rec
    done = RequestRecord("fp", 1, 2, response=b"\x00\xffbytes")
    assert RequestRecord.decode(done.encode()) == done
    with pytest.raises(ValueError, match="version 9"):
        RequestRecord.decode(rec.encode().replace(b'"v":1', b'"v":9'))


@pytest.mark.parametrize("bad", ["", "x" * 129, "tab\there"])
def test_a_request_id_is_required_printable_and_bounded(bad):
    with pytest.raises(InvalidArgument) as err:
        check_request_id(bad)
    assert err.value.details == {"field": "request_id"}
    with pytest.raises(InvalidArgument):
        check_request_id("short", min_length=16)
    assert check_request_id("a" * 128) == "a" * 128
