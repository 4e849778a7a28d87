"""A minimal scripted client for the e2e tests: reads prompts and answers them legally."""

from __future__ import annotations

import uuid

from mahjong.gateway.v1 import gateway_pb2 as pb


def legal_answer(prompt: pb.Prompt) -> pb.Action:
    """Win when offered; else discard the prompt's tile (the drawn one) or the first allowed;
    pass a claim."""
    o = prompt.options
    if o.win:
        return pb.Action(win=pb.Win())
    if prompt.kind == pb.PROMPT_KIND_OWN_TURN:
        tile = prompt.tile if prompt.tile in o.discards else o.discards[0]
        return pb.Action(discard=pb.Discard(tile=tile))
    return pb.Action(**{"pass": pb.Pass()})


def answer(stub, table_id: str, token: str, event: pb.Event, timeout: float = 5) -> pb.ActResponse:
    return stub.Act(
        pb.ActRequest(
            table_id=table_id,
            seat_token=token,
            request_id=uuid.uuid4().hex,
            last_sequence=event.sequence,
            action=legal_answer(event.prompt),
        ),
        timeout=timeout,
    )
