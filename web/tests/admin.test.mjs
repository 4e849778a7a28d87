// The operator's console (?admin) in a real browser against a real local stack (started by
// tests/web/test_lobby_browser.py, which shares it with lobby.test.mjs: WEB_URL the gateway's
// web port, MM_URL matchmaking's, ISSUER_URL the development issuer). A player is seated at a
// quick-match table of the lowest stake tier, apart from the lobby's quick match (over
// matchmaking's web port, as the lobby does); an operator signs in with the operator role,
// lists the live tables, inspects that one (state and log), ends it with a reason, finds the
// player by name, suspends and lifts them, and reads the audit log showing those actions under
// the operator's session (matchmaking's log; the local stack's gateway keeps its EndTable
// entries in a store of its own). Screenshot: ARTIFACTS/admin-console.png.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { launch } from "./browser.mjs";

const URL_ = process.env.WEB_URL;
const MM = process.env.MM_URL;
const ISSUER = process.env.ISSUER_URL;
const ARTIFACTS = process.env.ARTIFACTS || "test-artifacts";
mkdirSync(ARTIFACTS, { recursive: true });
const run = `${Date.now() % 100000}`;

/** One Connect JSON call to matchmaking's web port (what the page's client sends). */
async function mm(method, body) {
  const resp = await fetch(`${MM}/mahjong.matchmaking.v1.MatchmakingService/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const out = await resp.json();
  assert.ok(resp.ok, `${method}: ${JSON.stringify(out)}`);
  return out;
}

test("an operator lists, inspects and ends a table, suspends and lifts a player, reads the audit log", async () => {
  const cheat = `Cheat${run}`;
  const token = (await (await fetch(`${ISSUER}/token?name=${cheat}`)).json()).id_token;
  const signed = await mm("SignIn", { idToken: token, displayName: cheat, requestId: crypto.randomUUID() });
  // the lowest tier's queue (stake 1): the lobby's quick match, at its players' own level's
  // tier (8 with their starting silver), is never seated with it
  await mm("JoinQueue", { sessionToken: signed.session.sessionToken, stake: 1, requestId: crypto.randomUUID() });

  const ctx = await launch();
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("dialog", (d) => void d.dismiss());
  try {
    const services = `&matchmaking=${encodeURIComponent(MM)}&issuer=${encodeURIComponent(ISSUER)}`;
    await page.goto(`${URL_}/?admin${services}`);
    await page.getByTestId("op-name").fill(`Ops${run}`);
    await page.getByTestId("op-signin-go").click();
    await page.getByTestId("op-tables").waitFor();

    // the player's table (bots fill the queue within a second), found by its level
    const row = page.getByTestId("op-table-row").filter({ hasText: signed.player.playerId });
    for (let i = 0; i < 40 && (await row.count()) === 0; i++) {
      await page.getByTestId("op-list-tables").click();
      await page.waitForTimeout(250);
    }
    const tableId = await row.getAttribute("data-table");
    await page.getByTestId("op-f-halted").check();
    await page.getByTestId("op-list-tables").click();
    await page.getByTestId("op-no-tables").waitFor(); // none halted
    await page.getByTestId("op-f-halted").uncheck();
    await page.getByTestId("op-list-tables").click();

    await row.getByTestId("op-inspect").click();
    await page.getByTestId("op-table-state").filter({ hasText: tableId }).waitFor();
    assert.ok((await page.getByTestId("op-table-log").locator("li").count()) > 0, "the log has events");

    await row.getByTestId("op-end").click();
    await page.getByTestId("op-end-confirm").click(); // no reason: refused on the page
    await page.getByTestId("error").waitFor();
    await page.getByTestId("op-end-reason").fill("collusion under review");
    await page.getByTestId("op-end-confirm").click();
    await page.getByTestId("op-ended").waitFor();
    await row.filter({ hasText: "finished" }).waitFor({ timeout: 5000 });

    await page.getByTestId("op-find-q").fill(cheat);
    await page.getByTestId("op-find").click();
    const dossier = page.getByTestId("op-dossier").filter({ hasText: signed.player.playerId });
    await dossier.getByTestId("op-not-suspended").waitFor();
    await dossier.getByTestId("op-susp-reason").fill("chip dumping");
    await dossier.getByTestId("op-suspend").click();
    await page.getByTestId("op-suspended").filter({ hasText: "chip dumping" }).waitFor();
    await page.getByTestId("op-susp-reason").fill("appeal upheld");
    await page.getByTestId("op-lift").click();
    await page.getByTestId("op-not-suspended").waitFor();

    await page.getByTestId("op-audit-read").click();
    const audit = page.getByTestId("op-audit-row");
    await audit.first().waitFor();
    const rows = await audit.allInnerTexts();
    // (EndTable's entry is in the gateway's store: the local stack gives it a store of its own)
    for (const [action, why] of [["SuspendPlayer", "chip dumping"], ["LiftSuspension", "appeal upheld"]]) {
      const line = rows.find((r) => r.includes(action) && r.includes(why));
      assert.ok(line, `the audit log shows ${action}: ${rows.join("\n")}`);
      assert.match(line, /session:p-/, `${action} names the operator's session`);
    }
    await page.screenshot({ path: join(ARTIFACTS, "admin-console.png"), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});
