// How a player gets a seat. Signed in with an identity: a private room of matchmaking's (开房,
// one 房卡; with none left, one is bought with silver once the player confirmed its price), 底分 1, three invited bots, Start —
// the room answers the seat (its Assignment: table, seat and seat token) once the gateway made
// the table. A guest: a casual table against three bots, created on the gateway directly (the
// gateway's public tables; guests have no ledger account).

import { create } from "@bufbuild/protobuf";
import { SeatAssignmentSchema } from "./gen/mahjong/gateway/v1/gateway_pb";
import { Asset, RoomState, type Room } from "./gen/mahjong/matchmaking/v1/matchmaking_pb";
import { gateway, matchmaking, requestId } from "./api";
import { buyConfirmed } from "./items";
import type { SignedIn } from "./session";
import type { Seat } from "./saved";

export interface Rules {
  name: string; // the preset
  options: Record<string, string>;
}

const START_WAIT_MS = 30_000;

/** The player said no to a price: nothing was bought and nothing started. */
export class Declined extends Error {}

export function seatOf(room: Room): Seat | null {
  const a = room.assignment;
  if (room.state !== RoomState.PLAYING || !a || !a.tableId || !a.seatToken) return null;
  return { tableId: a.tableId, token: a.seatToken, seat: a.seat > 0 ? a.seat - 1 : null, lastSeq: "0" };
}

/** A table against three bots, through a private room; ``say`` tells how far it got. */
export async function roomTable(s: SignedIn, rules: Rules, maxHands: number, say: (text: string) => void): Promise<Seat> {
  const token = s.sessionToken;
  const me = (await matchmaking.getPlayer({ sessionToken: token })).player;
  if (me?.roomCode) {
    // Still in a room: back to its table, or out of it (a room not started keeps its old rules).
    const { room } = await matchmaking.getRoom({ sessionToken: token, code: me.roomCode });
    const seated = room && seatOf(room);
    if (seated) return seated;
    if (room && room.state === RoomState.OPEN) await matchmaking.leaveRoom({ sessionToken: token, code: room.code, requestId: requestId() });
  }
  if (me && me.roomCards === 0) {
    say("no 房卡 left: buy one?");
    if (!(await buyConfirmed(token, Asset.ROOM_CARD, 1, "A private room takes one 房卡 and you have none. ")))
      throw new Declined("no 房卡 bought: no room opened");
  }
  say("opening a room…");
  const opened = await matchmaking.openRoom({ sessionToken: token, ruleset: rules, maxHands, requestId: requestId() });
  const code = opened.room!.code;
  await matchmaking.setRoomStake({ sessionToken: token, code, stake: 1n, requestId: requestId() });
  for (let i = 1; i <= 3; i++) {
    say(`room ${code}: inviting bot ${i}…`);
    await matchmaking.inviteBot({ sessionToken: token, code, requestId: requestId() });
  }
  say(`room ${code}: Start`);
  let room = (await matchmaking.pressStart({ sessionToken: token, code, requestId: requestId() })).room;
  const until = Date.now() + START_WAIT_MS;
  for (;;) {
    const seated = room && seatOf(room);
    if (seated) return seated;
    if (room && (room.state === RoomState.FINISHED || room.state === RoomState.CLOSED))
      throw new Error(`room ${code} ended without a table${room.failure ? `: ${room.failure}` : ""}`);
    if (Date.now() > until) throw new Error(`room ${code}: no table after ${START_WAIT_MS / 1000} s`);
    await new Promise((ok) => setTimeout(ok, 300));
    room = (await matchmaking.getRoom({ sessionToken: token, code })).room;
  }
}

/** A guest's casual table: the gateway's public CreateTable, the guest and three bots. */
export async function casualTable(s: SignedIn, rules: Rules, maxHands: number): Promise<Seat> {
  const r = await gateway.createTable({
    requestId: requestId(),
    ruleset: rules,
    stake: 1n,
    maxHands,
    seats: [
      create(SeatAssignmentSchema, { playerId: s.playerId, displayName: s.name }),
      ...[1, 2, 3].map((i) => create(SeatAssignmentSchema, { bot: true, displayName: `Bot ${i}` })),
    ],
  });
  return { tableId: r.tableId, token: r.seatTokens[0], seat: 0, lastSeq: "0" };
}
