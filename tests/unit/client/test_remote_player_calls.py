"""The Python client's unary calls (mahjong_client/player.py) across a moving table:
a read of the seat's view is retried while the gateway answers UNAVAILABLE (its table between
replicas), so the prompt it decides on is not lost; refusals are not retried."""

from __future__ import annotations

import grpc
import pytest
from mahjong.gateway.v1 import gateway_pb2

from mahjong_client.player import RemotePlayer


class Refusal(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode) -> None:
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return f"{self._code.name} for a test"


class Done:
    """A try's future, already answered (``answer``) or failed (``error``)."""

    def __init__(self, answer=None, error=None) -> None:
        self.answer, self.error = answer, error

    def add_done_callback(self, cb) -> None:
        cb(self)

    def done(self) -> bool:
        return True

    def exception(self):
        return self.error

    def result(self):
        return self.answer

    def cancel(self) -> None:
        pass


class Stub:
    """GetTableState answering ``failures`` first (in turn), then the view; the player's every
    connection (``stub(k)``) is this one."""

    def __init__(self, *failures: grpc.StatusCode) -> None:
        self.failures = list(failures)
        self.calls = 0
        self.current = 0
        self.targets = ["one"]
        self.GetTableState = self  # GetTableState.future(request, timeout)

    def future(self, req, timeout):
        self.calls += 1
        if self.failures:
            return Done(error=Refusal(self.failures.pop(0)))
        return Done(
            gateway_pb2.GetTableStateResponse(
                table=gateway_pb2.TableView(table_id=req.table_id, last_sequence=7)
            )
        )

    def stub(self, k: int | None = None):
        return self

    def rotate(self, away_from: int | None = None) -> int:
        return 0

    def close(self) -> None:
        pass


def player(stub: Stub) -> RemotePlayer:
    p = RemotePlayer(grpc.insecure_channel("127.0.0.1:9"), "t_1", "token", seat=0)
    p.connections = stub  # type: ignore[assignment]
    return p


def test_a_view_read_outlasts_a_table_moving_between_replicas():
    stub = Stub(grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    p = player(stub)
    try:
        assert p.state().last_sequence == 7 and stub.calls == 3
    finally:
        p.close()


def test_a_refused_view_read_is_raised_at_once():
    stub = Stub(grpc.StatusCode.PERMISSION_DENIED)
    p = player(stub)
    try:
        with pytest.raises(grpc.RpcError) as refused:
            p.state()
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED and stub.calls == 1
    finally:
        p.close()


class ReadyStub(Stub):
    """ReadyForNextHand answering ``refusal`` (None: accepted), on every connection."""

    def __init__(self, refusal: grpc.StatusCode | None) -> None:
        super().__init__()
        self.refusal = refusal
        self.requests: list = []
        self.ReadyForNextHand = self

    def future(self, req, timeout):
        self.requests.append(req)
        if self.refusal is not None:
            return Done(error=Refusal(self.refusal))
        return Done(gateway_pb2.ReadyForNextHandResponse())


@pytest.mark.parametrize("refusal", [None, grpc.StatusCode.FAILED_PRECONDITION])
def test_a_seat_presses_next_on_each_hand_result_and_a_refusal_is_no_error(refusal):
    stub = ReadyStub(refusal)
    p = player(stub)
    try:
        p._handle(gateway_pb2.Event(sequence=1, hand_result=gateway_pb2.HandResult()))
        assert [(r.table_id, r.seat_token) for r in stub.requests] == [("t_1", "token")]
        assert len(p.log.hand_results) == 1
        assert p.ready_for_next_hand() is (refusal is None)
    finally:
        p.close()
