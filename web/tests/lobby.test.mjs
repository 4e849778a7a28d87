// The lobby in a real browser (headless Chromium via playwright-core) against one real local
// stack (tests/web/test_lobby_browser.py: WEB_URL, MM_URL, ISSUER_URL), mostly at a phone's
// viewport (390×844, touch: taps, not clicks): the phone layout (no horizontal scroll, the menu
// and Sign out on screen, buttons ≥ 40 px); a purchase asked first with its price, refused,
// then confirmed, and its lines in the history; a player who leaves the table for the lobby
// mid-hand and goes back (a 加倍卡 played from there is refused while the hand runs), and a
// second browser signed in as the same player that takes the
// seat; a room by code between two signed-in players with bots filling the rest; a quick match;
// a tournament created with bots, listed, joined, started, its one hand played by taps and its
// final ranking shown back in the lobby; a past hand's replay from the history, stepped
// forward and back.
// Each test signs in players of its own, so the tests stay independent on the shared stack.
// Screenshots go to ARTIFACTS (lobby-*.png).

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { CHROMIUM } from "./browser.mjs";

const URL_ = process.env.WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS || "test-artifacts";
mkdirSync(ARTIFACTS, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `lobby-${name}.png`) });
const SERVICES = `&matchmaking=${encodeURIComponent(process.env.MM_URL)}&issuer=${encodeURIComponent(process.env.ISSUER_URL)}`;
const at = (q = "") => `${URL_}/?protocol=connect${SERVICES}${q}`;
const PHONE = { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 2 };
const run = `${Date.now() % 100000}`; // names of this run (the issuer's name is the identity)

/** A browser of its own (a fresh profile): at a phone's size with touch unless ``desktop``. */
async function browser({ desktop = false } = {}) {
  const ctx = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "mahjong-lobby-")), {
    executablePath: CHROMIUM,
    headless: true,
    ...(desktop ? { viewport: { width: 1360, height: 900 } } : PHONE),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  return { ctx, page, problems };
}

/** Tap on a phone, click on a desktop. */
async function press(page, testid, nth = 0) {
  const target = page.getByTestId(testid).nth(nth);
  await target.waitFor();
  if (page.viewportSize().width < 600) await target.tap();
  else await target.click();
}

async function signIn(page, name, q = "") {
  await page.goto(at(q));
  await page.locator("#name").fill(name);
  await press(page, "sign-in");
  await page.getByTestId("account").filter({ hasText: "房卡" }).waitFor();
}

/** The replay test's player: signed in, seated at a one-hand table of bots and gone (a bot
 * plays the hand on for the seat). Started when the file loads, so the bots play that hand
 * (some ten seconds) while the other tests run; the replay test opens it from the history. */
const replayer = (async () => {
  const b = await browser();
  try {
    await signIn(b.page, `Replay${run}`);
    await b.page.locator("#hands").selectOption("1");
    await press(b.page, "create");
    await b.page.getByTestId("my-tiles").waitFor({ timeout: 30_000 });
    await press(b.page, "leave");
    await press(b.page, "leave-confirm-yes"); // mid-hand: the penalty is named, then paid
    await b.page.getByTestId("quick-match").waitFor();
    return b;
  } catch (e) {
    await b.ctx.close(); // an open browser would keep the run from ending
    throw e;
  }
})();
replayer.catch(() => {}); // its failure is the replay test's, when it awaits it

async function facts(page) {
  return page.getByTestId("account").innerText();
}

test("the lobby fits a phone: no horizontal scroll, the menu on screen, buttons a finger wide", async () => {
  const { ctx, page, problems } = await browser();
  try {
    await signIn(page, `Phone${run}`);
    await page.getByTestId("buy-room_card").waitFor();
    const layout = await page.evaluate(() => {
      const inView = (el) => {
        const r = el.getBoundingClientRect();
        return r.left >= 0 && r.right <= innerWidth && r.width > 0;
      };
      const small = [...document.querySelectorAll(".lobby .btn")]
        .filter((b) => b.offsetParent !== null && b.getBoundingClientRect().height < 40)
        .map((b) => b.textContent);
      return {
        scroll: document.documentElement.scrollWidth,
        width: innerWidth,
        signOut: inView(document.querySelector('[data-testid="sign-out"]')),
        history: inView(document.querySelector('[data-testid="history"]')),
        small,
      };
    });
    assert.equal(layout.width, 390);
    assert.ok(layout.scroll <= 390, `the lobby scrolls sideways: ${layout.scroll} px wide`);
    assert.ok(layout.signOut && layout.history, "Sign out or History is off-screen");
    assert.deepEqual(layout.small, [], "buttons under 40 px");
    await shot(page, "phone");
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});

test("a purchase says its price and waits for a yes; the history shows every change", async () => {
  const { ctx, page, problems } = await browser();
  try {
    await signIn(page, `Buyer${run}`);
    const before = await facts(page);
    assert.match(before, /0 加倍卡/);
    await press(page, "buy-double_card");
    const body = await page.getByTestId("ask-body").innerText();
    const price = Number(body.match(/cost\w* (\d+) 银子/)[1]);
    assert.ok(price > 0, body);
    await shot(page, "ask-price");
    await press(page, "ask-no"); // refused: nothing bought
    await page.getByTestId("ask").waitFor({ state: "detached" });
    assert.equal(await facts(page), before);
    await press(page, "buy-double_card");
    await press(page, "ask-yes");
    await page.getByTestId("account").filter({ hasText: "1 加倍卡" }).waitFor();
    const silver = (t) => Number(t.match(/(\d+) 银子/)[1]);
    assert.equal(silver(await facts(page)), silver(before) - price);

    await press(page, "history");
    const lines = page.getByTestId("ledger-entry");
    await lines.first().waitFor();
    const text = await page.getByTestId("ledger").innerText();
    assert.match(text, new RegExp(`-${price} 银子\\s+shop purchase`));
    assert.match(text, /\+1 加倍卡\s+shop purchase/);
    assert.match(text, /\+1000 银子\s+welcome grant/);
    await shot(page, "history");
    await press(page, "history-back");
    await page.getByTestId("quick-match").waitFor();
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});

test("back to your table: the lobby mid-hand and back, then a second browser takes the seat", async () => {
  const name = `Seated${run}`;
  const first = await browser();
  const second = await browser();
  try {
    const { page } = first;
    await signIn(page, name);
    await page.locator("#hands").selectOption("4");
    await press(page, "create");
    await page.getByTestId("my-tiles").waitFor({ timeout: 30_000 });
    const tableId = await page.getByTestId("table-id").innerText();
    await press(page, "lobby"); // mid-hand, to the lobby
    await page.getByTestId("quick-match").waitFor();
    const back = page.locator(`[data-testid="back-to-table"][data-table="${tableId}"]`);
    await back.waitFor();
    await shot(page, "your-tables");
    // a 加倍卡 doubles the next hand: mid-hand the gateway says to play it between hands
    await page.locator(`[data-testid="play-double"][data-table="${tableId}"]`).tap();
    const refusal = page.getByTestId("your-tables").getByTestId("error");
    await refusal.waitFor();
    assert.match(await refusal.innerText(), /FAILED_PRECONDITION · DOUBLE_CARD_HAND_RUNNING/);
    await back.tap();
    await page.getByTestId("my-tiles").waitFor();
    assert.equal(await page.getByTestId("table-id").innerText(), tableId);
    assert.match(await page.locator(".seat.mine .who").innerText(), new RegExp(`^${name}`));

    // another device, the same player: its own session takes the same seat
    await signIn(second.page, name);
    await second.page.locator(`[data-testid="back-to-table"][data-table="${tableId}"]`).tap();
    await second.page.getByTestId("my-tiles").waitFor();
    assert.equal(await second.page.getByTestId("table-id").innerText(), tableId);
    assert.match(await second.page.locator(".seat.mine .who").innerText(), new RegExp(`^${name}`));
    assert.ok((await second.page.getByTestId("hand-tile").count()) >= 13, "the seat's hand is shown");
    await shot(second.page, "seat-taken-back");
    assert.deepEqual([...first.problems, ...second.problems], []);
  } finally {
    await first.ctx.close();
    await second.ctx.close();
  }
});

test("a room by code: one opens and shares its link, a friend joins, bots fill the rest", async () => {
  const host = await browser();
  const friend = await browser({ desktop: true });
  try {
    await signIn(host.page, `Host${run}`);
    await host.page.locator("#room-hands").selectOption("1");
    await press(host.page, "open-room");
    const code = await host.page.getByTestId("room-code").innerText();
    assert.match(code, /^[A-Z0-9]{4,}$/);
    const link = await host.page.getByTestId("room-link").inputValue();
    assert.ok(link.includes(`room=${code}`), link);
    await press(host.page, "set-stake");
    await host.page.getByTestId("room-stake").filter({ hasText: "底分 1" }).waitFor();
    // the friend opens the link (with this stack's services), signs in and is in the room
    await signIn(friend.page, `Friend${run}`, `&room=${code}`);
    await friend.page.getByTestId("room-code").filter({ hasText: code }).waitFor();
    await press(friend.page, "accept-stake");
    await host.page.getByTestId("room-members").filter({ hasText: `Friend${run}` }).waitFor();
    await press(host.page, "invite-bot");
    await host.page.getByTestId("room-members").locator("li").nth(2).waitFor();
    await press(host.page, "invite-bot");
    await host.page.getByTestId("room-members").locator("li").nth(3).waitFor();
    await shot(host.page, "room");
    await press(friend.page, "room-start");
    await press(host.page, "room-start");
    await host.page.getByTestId("my-tiles").waitFor({ timeout: 30_000 });
    await friend.page.getByTestId("my-tiles").waitFor({ timeout: 30_000 });
    const table = await host.page.getByTestId("table-id").innerText();
    assert.equal(await friend.page.getByTestId("table-id").innerText(), table);
    assert.deepEqual([...host.problems, ...friend.problems], []);
  } finally {
    await host.ctx.close();
    await friend.ctx.close();
  }
});

test("a quick match at the player's level seats them once the queue fills", async () => {
  const { ctx, page, problems } = await browser();
  try {
    await signIn(page, `Quick${run}`);
    await page.locator("#queue-stake option").first().waitFor({ state: "attached" });
    await press(page, "join-queue");
    await page.getByTestId("queue-status").filter({ hasText: "waiting" }).waitFor();
    await page.getByTestId("my-tiles").waitFor({ timeout: 30_000 }); // bots fill the queue
    assert.match(await page.locator(".seat.mine .who").innerText(), new RegExp(`^Quick${run}`));
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});

/** One decision at the table by taps (a win, else a discard of the drawn tile, else a pass);
 * gives up soon, so the hand's result coming up over a button does not hold the loop. */
async function tapDecision(page) {
  const quick = { timeout: 1500 };
  const seen = (l) => l.first().isVisible();
  if (await seen(page.getByTestId("opt-win"))) return page.getByTestId("opt-win").first().tap(quick);
  const playable = page.locator('[data-testid="hand-tile"][data-playable="1"]');
  if ((await playable.count()) > 0) return playable.last().tap(quick);
  if (await seen(page.getByTestId("opt-pass"))) return page.getByTestId("opt-pass").tap(quick);
  await page.waitForTimeout(80);
}

test("a tournament: created with bots, joined, started, its hand played by taps, then its final ranking", { timeout: 120_000 }, async () => {
  const { ctx, page, problems } = await browser();
  try {
    await signIn(page, `Cup${run}`);
    await page.locator("#t-hands").selectOption("1");
    await page.locator("#t-bots").selectOption("3");
    await press(page, "create-tournament");
    await page.getByTestId("tournament-state").filter({ hasText: "registering" }).waitFor();
    const link = await page.getByTestId("tournament-link").inputValue();
    const tid = decodeURIComponent(link.match(/\?tournament=([^&]+)/)[1]);
    await press(page, "refresh-tournaments"); // matchmaking's public list names it
    const listed = page.locator(`[data-testid="listed-tournament"][data-id="${tid}"]`);
    await listed.waitFor();
    assert.match(await listed.innerText(), /registering · \d+ entered/);
    await press(page, "join-tournament");
    await page.getByTestId("entrants").filter({ hasText: `Cup${run}` }).waitFor();
    await shot(page, "tournament");
    await press(page, "start-tournament");
    await page.getByTestId("my-tiles").waitFor({ timeout: 30_000 }); // round 1 seats the player
    assert.match(await page.locator(".seat.mine .who").innerText(), new RegExp(`^Cup${run}`));
    // the one round of one hand, played by taps to its end (the table is then over)
    const deadline = Date.now() + 60_000;
    while (!(await page.getByTestId("table-finished").isVisible())) {
      assert.ok(Date.now() < deadline, "the tournament's hand did not end in a minute");
      await tapDecision(page).catch(() => null);
    }
    await page.waitForTimeout(700); // the result ignores a tap in its first 0.7 s
    await press(page, "new-table"); // back to the lobby: it opens the tournament last seen
    // the table's end reaches matchmaking (the gateway's report, the hand in the ledger)
    await page.getByTestId("tournament-state").filter({ hasText: "finished" }).waitFor({ timeout: 30_000 });
    const ranking = page.getByTestId("final-ranking");
    assert.match(await ranking.locator("caption").innerText(), /Final ranking/);
    const rows = await ranking.getByTestId("ranked").evaluateAll((rs) => rs.map((r) => [...r.cells].map((c) => c.textContent)));
    assert.equal(rows.length, 4, `four ranked: ${JSON.stringify(rows)}`);
    // ranked 1 to 4, most chips first (the chips from the ledger: the hand's own transfers)
    assert.deepEqual(rows.map((r) => Number(r[0])), [1, 2, 3, 4]);
    const chips = rows.map((r) => Number(r[2]));
    assert.ok(chips.every((c, i) => Number.isInteger(c) && (i === 0 || c <= chips[i - 1])), JSON.stringify(rows));
    const mine = rows.find((r) => r[1] === `Cup${run}`);
    assert.ok(mine, `the player is not in the final ranking: ${JSON.stringify(rows)}`);
    assert.match(await page.getByTestId("tournament").innerText(), /round 1/);
    await shot(page, "tournament-final");
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});

test("a replay stepped through: a past hand, one step forward and back, as the seat saw it", async () => {
  const { ctx, page, problems } = await replayer;
  try {
    await press(page, "history");
    // the hand's line opens its replay, once the hand is over (until then: HAND_NOT_FINISHED)
    const step = page.locator('[data-testid="replay-step"][data-step]');
    for (let tries = 0; ; tries++) {
      await press(page, "replay");
      await step.or(page.getByTestId("error")).first().waitFor();
      if (await step.count()) break;
      assert.match(await page.getByTestId("error").innerText(), /HAND_NOT_FINISHED/);
      assert.ok(tries < 60, "the hand never finished");
      await page.waitForTimeout(500);
      await press(page, "replay-back-to-history");
    }
    const tiles = () => page.getByTestId("replay-tile").evaluateAll((ts) => ts.map((t) => t.dataset.tile));
    assert.match(await step.innerText(), /^Step 1 \/ \d+ · hand 1 begins/);
    assert.deepEqual(await tiles(), []);
    await press(page, "replay-next");
    assert.match(await step.innerText(), /^Step 2 \/ \d+ · the deal/);
    const deal = await tiles();
    assert.ok(deal.length === 13 || deal.length === 14, `the seat's own deal: ${deal}`);
    assert.equal(await page.getByTestId("replay-seat").count(), 4);
    await press(page, "replay-next");
    assert.match(await step.innerText(), /^Step 3 /);
    await press(page, "replay-prev");
    assert.match(await step.innerText(), /^Step 2 \/ \d+ · the deal/);
    assert.deepEqual(await tiles(), deal);
    await press(page, "replay-last");
    assert.ok(await page.getByTestId("replay-next").isDisabled());
    await shot(page, "replay");
    assert.deepEqual(problems, []);
  } finally {
    await ctx.close();
  }
});
