// What a reload needs to resume the seat: table id, token and the last event number seen,
// kept in sessionStorage (per tab); the last hand's result too, so a reload between hands
// still shows it.

import { fromJsonString, toJsonString } from "@bufbuild/protobuf";
import { EventSchema, type Event } from "./gen/mahjong/gateway/v1/gateway_pb";

export interface Seat {
  tableId: string;
  token: string;
  seat: number | null; // null: a spectator
  lastSeq: string; // bigint as text
  log?: string[]; // the table's log as shown, so a reload keeps it
}

const SEAT = "mahjong.seat";
const EVENTS = "mahjong.result";

export function loadSeat(): Seat | null {
  const raw = sessionStorage.getItem(SEAT);
  if (!raw) return null;
  try {
    const s = JSON.parse(raw) as Seat;
    return s.tableId && s.token ? s : null;
  } catch {
    return null;
  }
}

export function saveSeat(s: Seat): void {
  sessionStorage.setItem(SEAT, JSON.stringify(s));
}

export function forgetSeat(): void {
  sessionStorage.removeItem(SEAT);
  sessionStorage.removeItem(EVENTS);
}

/** The events of the last settled hand (hand_result, seed_revealed, table_finished). */
export function loadResult(tableId: string): Event[] {
  try {
    const raw = JSON.parse(sessionStorage.getItem(EVENTS) ?? "null") as { t: string; e: string[] } | null;
    return raw && raw.t === tableId ? raw.e.map((j) => fromJsonString(EventSchema, j)) : [];
  } catch {
    return [];
  }
}

export function saveResult(tableId: string, events: Event[]): void {
  sessionStorage.setItem(
    EVENTS,
    JSON.stringify({ t: tableId, e: events.map((e) => toJsonString(EventSchema, e)) }),
  );
}
