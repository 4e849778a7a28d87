// The web table: a lobby (sign in, then a table against three bots, a seat of a given table,
// or watching one: lobby.ts) and the table itself (table.ts). A reload resumes the seat kept in
// sessionStorage; ?table=&token= opens a seat by its token, ?watch= watches a table.

import "./style.css";
import { live } from "./session";
import { lobby, open, watchTable } from "./lobby";
import { loadSeat } from "./saved";
import { TableScreen } from "./table";

const params = new URLSearchParams(location.search);
void live(); // a kept session is refreshed when due (and kept fresh while the page is open)
if (params.has("admin")) {
  void import("./admin").then((m) => m.admin()); // the operator's console
} else if (params.get("table") && params.get("token")) {
  open({ tableId: params.get("table")!, token: params.get("token")!, seat: null, lastSeq: "0" });
} else if (params.get("watch")) {
  void watchTable(params.get("watch")!);
} else {
  const saved = loadSeat();
  if (saved) new TableScreen(saved, lobby).start();
  else lobby();
}
