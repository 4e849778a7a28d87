// The web table in a real browser (headless Chromium via playwright-core) against a real local
// stack, started by tests/web/test_browser.py, which passes the gateway's web port as WEB_URL,
// matchmaking's as MM_URL and the development issuer's as ISSUER_URL. A person signs in with a
// name (an ID token of the development issuer, then matchmaking's SignIn), gets a table through
// a private room with three bots, and plays its hand to the end by clicking what the page
// offers, with a reload mid-hand; the result, its breakdown and the wall's verification are
// checked; the session is refreshed before it expires; a forged token is refused visibly; a
// spectator sees the table without a hand. A guest gets a casual table (with hints). Screenshots
// go to ARTIFACTS.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { launch } from "./browser.mjs";

const URL_ = process.env.WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS || "test-artifacts";
const PROTOCOL = process.env.WEB_PROTOCOL || "connect";
mkdirSync(ARTIFACTS, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `${PROTOCOL}-${name}.png`) });
const SERVICES = `&matchmaking=${encodeURIComponent(process.env.MM_URL)}&issuer=${encodeURIComponent(process.env.ISSUER_URL)}`;
const withProtocol = (q = "") => `${URL_}/?protocol=${PROTOCOL}${SERVICES}${q}`;
// The session's lifetime matchmaking was given (--session-lifetime-seconds), to check the refresh.
const SESSION_SECONDS = Number(process.env.SESSION_SECONDS || 0);

async function visible(locator) {
  return (await locator.count()) > 0 && (await locator.first().isVisible());
}

// One decision as a person makes it: win when offered, else follow the hint on the first
// own turn (at a casual table: a room's table is matchmaking's, for its ledger, and gives no
// hints), else discard the drawn tile; pass claims; bury the first tiles of a 换牌.
async function decide(page, state) {
  if (await visible(page.getByTestId("opt-win"))) {
    await page.getByTestId("opt-win").first().click();
    return "win";
  }
  if (await visible(page.getByTestId("opt-swap"))) {
    const tiles = page.getByTestId("hand-tile");
    const need = Number((await page.getByTestId("opt-swap").innerText()).match(/\/(\d+)/)[1]);
    for (let i = 0; i < need; i++) await tiles.nth(i).click();
    await page.getByTestId("opt-swap").click();
    return "swap";
  }
  const playable = page.locator('[data-testid="hand-tile"][data-playable="1"]');
  if ((await playable.count()) > 0) {
    if (!state.hinted && state.hints) {
      await page.getByTestId("opt-hint").click();
      await page.getByTestId("hint-plan").waitFor({ timeout: 5000 }).catch(() => {});
      state.hinted = true;
      const hinted = page.locator('[data-testid="hand-tile"].hinted');
      if ((await hinted.count()) > 0) {
        await hinted.first().click();
        return "hinted discard";
      }
    }
    await playable.last().click();
    return "discard";
  }
  if (await visible(page.getByTestId("opt-pass"))) {
    await page.getByTestId("opt-pass").click();
    return "pass";
  }
  return null;
}

// A browser on the lobby, signed in as ``name`` (or as a guest named so), with a one-hand
// table of ``rules`` chosen (not yet started); page errors are collected in ``problems``.
async function lobbyPage(rules, name, { guest = false } = {}) {
  const ctx = await launch();
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  try {
    await page.goto(withProtocol());
    assert.ok(await page.getByTestId("create").isDisabled(), "a table before signing in");
    await page.locator("#name").fill(name);
    await page.getByTestId(guest ? "guest" : "sign-in").click();
    assert.equal(await page.getByTestId("player-name").innerText(), name);
    if (!guest) await page.getByTestId("account").filter({ hasText: "房卡" }).waitFor();
    await page.locator("#hands").selectOption("1");
    await page.locator("#rules").selectOption(rules);
  } catch (e) {
    await ctx.close();
    throw e;
  }
  return { ctx, page, problems };
}

/** The log lines on screen, as their text. */
async function shownLog(page) {
  return page.evaluate(() => [...document.querySelectorAll('[data-testid="log"] li')].map((li) => li.textContent ?? ""));
}

/** Whether `part` appears in `whole` as consecutive lines. */
function isRun(part, whole) {
  for (let i = 0; i + part.length <= whole.length; i++) {
    if (part.every((line, j) => whole[i + j] === line)) return true;
  }
  return false;
}

test("a signed-in person plays a whole hand at the web table, reloads mid-hand and verifies the wall", async () => {
  const { ctx, page, problems } = await lobbyPage("qiaoma", "Tester");
  try {
    await shot(page, "lobby");
    const signedIn = await page.evaluate(() => JSON.parse(localStorage.getItem("mahjong.session")));
    assert.equal(signedIn.guest, false);
    assert.match(signedIn.playerId, /^p-/);
    await page.getByTestId("create").click();
    await page.getByTestId("my-tiles").waitFor({ timeout: 30_000 });
    const tableId = await page.getByTestId("table-id").innerText();
    assert.match(tableId, /^t_/);
    // the seat is the signed-in player's, as matchmaking's room assigned it
    assert.match(await page.locator(".seat.mine .who").innerText(), /^Tester \(you\)/);

    const state = { hinted: false, hints: false, timerChecked: false };
    let decisions = 0;
    let reloaded = false;
    const deadline = Date.now() + 150_000;
    while (!(await visible(page.getByTestId("result")))) {
      assert.ok(Date.now() < deadline, "the hand did not end in time");
      if (!state.timerChecked && (await page.locator('[data-testid="hand-tile"][data-playable="1"]').count()) > 0) {
        // the own turn's timer counts down while the person thinks (whole seconds from 10 s
        // up, redrawn every 200 ms: 1.5 s always shows a smaller number)
        const t1 = parseFloat(await page.getByTestId("timer").innerText());
        await page.waitForTimeout(1500);
        const t2 = parseFloat(await page.getByTestId("timer").innerText());
        assert.ok(t1 > 0 && t2 < t1 && t1 - t2 < 4, `the timer does not count down: ${t1}s, then ${t2}s`);
        state.timerChecked = true;
      }
      const did = await decide(page, state).catch(() => null); // the view may change under a click
      if (!did) {
        await page.waitForTimeout(80);
        continue;
      }
      decisions += 1;
      if (decisions === 3) {
        await shot(page, "mid-hand");
        // A spectator of the same table, mid-hand: public facts, no hand of its own.
        const watcher = await ctx.newPage();
        await watcher.goto(withProtocol(`&watch=${tableId}`));
        await watcher.getByTestId("spectator").waitFor();
        await watcher.getByTestId("discards-0").waitFor();
        assert.equal(await watcher.getByTestId("my-hand").count(), 0, "a spectator has no hand");
        assert.equal(await watcher.getByTestId("table-id").innerText(), tableId);
        await shot(watcher, "spectator");
        await watcher.close();
      }
      if (decisions === 4 && !reloaded && !(await visible(page.getByTestId("result")))) {
        // Reload mid-hand: the page resumes the seat from sessionStorage and its last event.
        const before = await page.getByTestId("hand-tile").count();
        const logBefore = await shownLog(page);
        await page.reload();
        await page.getByTestId("my-tiles").waitFor();
        // the hand goes on (or, if a bot won just then, its result is shown)
        await page.locator('[data-testid="hand-tile"], [data-testid="result"]').first().waitFor();
        assert.equal(await page.getByTestId("table-id").innerText(), tableId, "resumed another table");
        if (!(await visible(page.getByTestId("result")))) {
          const after = await page.getByTestId("hand-tile").count();
          assert.ok(Math.abs(after - before) <= 1, `hand had ${before} tiles, ${after} after the reload`);
        }
        // The log is kept whole across the reload. The bots play on meanwhile, so the lines
        // shown before may have scrolled out of the 14 on screen: check them against the kept
        // log, and that the screen shows a run of it, read in one step.
        const { shown, kept } = await page.evaluate(() => ({
          shown: [...document.querySelectorAll('[data-testid="log"] li')].map((li) => li.textContent ?? ""),
          kept: JSON.parse(sessionStorage.getItem("mahjong.seat") ?? "{}").log ?? [],
        }));
        assert.ok(logBefore.length > 0, "nothing was logged before the reload");
        assert.ok(isRun(logBefore, kept), `lost from the log: ${JSON.stringify({ logBefore, kept })}`);
        assert.ok(shown.length > 0 && isRun(shown, kept), `the screen's log is not the kept one: ${JSON.stringify({ shown, kept })}`);
        reloaded = true;
      }
      await page.waitForTimeout(60);
    }
    assert.equal(await page.getByTestId("opt-hint").count(), 0, "a room's table gives no hints");
    assert.ok(state.timerChecked || decisions < 2, "the person never had an own turn to time");
    assert.ok(decisions >= 1, "no decision was ever offered to the person");
    const result = page.getByTestId("result");
    await page.getByTestId("breakdown").waitFor();
    assert.ok((await page.getByTestId("payments").locator(".pay").count()) >= 4, "payments of 4 seats");
    assert.ok((await page.getByTestId("revealed").locator(".revealed-hand").count()) >= 0);
    await page.getByTestId("seed").waitFor({ timeout: 15_000 });
    await page.getByTestId("verify").click();
    await assert.doesNotReject(
      page.getByTestId("verify-result").filter({ hasText: "✓" }).waitFor({ timeout: 5000 }),
    );
    assert.ok(await result.isVisible());
    await shot(page, "result");
    console.log(`# played ${decisions} decisions, reloaded: ${reloaded}, table ${tableId}`);
    assert.ok(reloaded || decisions < 4, "the reload mid-hand never happened");

    // A forged token: the person's own token made to claim seat 1, its signature unchanged.
    const real = JSON.parse(await page.evaluate(() => sessionStorage.getItem("mahjong.seat"))).token;
    const parts = real.split(".");
    assert.equal(parts.length, 4, `a seat token has four parts: ${real}`);
    parts[2] = "1";
    // The lobby's "join a table" with the real token opens the same seat in another tab.
    const joined = await ctx.newPage();
    await joined.goto(withProtocol());
    await joined.locator("#join-table").fill(tableId);
    await joined.locator("#join-token").fill(real);
    await joined.getByTestId("join").click();
    await joined.getByTestId("my-hand").waitFor();
    assert.equal(await joined.getByTestId("table-id").innerText(), tableId);
    await joined.close();

    const forged = await ctx.newPage();
    await forged.goto(withProtocol(`&table=${tableId}&token=${encodeURIComponent(parts.join("."))}`));
    const error = forged.getByTestId("error");
    await error.waitFor();
    assert.match(await error.innerText(), /UNAUTHENTICATED/);
    assert.match(await error.innerText(), /signature does not verify/);
    assert.equal(await forged.getByTestId("hand-tile").count(), 0, "a forged token saw tiles");
    await shot(forged, "forged-token");
    if (SESSION_SECONDS) {
      // RefreshSession before the session token expires (a quarter of its life early): a new
      // session token and a new (rotated) refresh token, kept for every tab
      const refreshed = await page.waitForFunction(
        (old) => {
          const s = JSON.parse(localStorage.getItem("mahjong.session") ?? "null");
          return s && s.sessionToken !== old.sessionToken && s.refreshToken !== old.refreshToken ? s : false;
        },
        signedIn,
        { timeout: SESSION_SECONDS * 1000, polling: 500 },
      );
      const now = await refreshed.jsonValue();
      assert.equal(now.playerId, signedIn.playerId);
      assert.ok(now.expiresAt > signedIn.expiresAt);
    }
    assert.deepEqual(problems, [], "the page threw");
  } finally {
    await ctx.close();
  }
});

// The kind after an indicator (RULES-presets §13.B.9, flipped_wild "next"): 1→…→9→1 in a suit,
// 东→南→西→北→东 (the dragons are bonus tiles in shanghai-baida, so never an indicator).
function nextKind(code) {
  const rank = Number(code[0]);
  const suit = code[1];
  return suit === "z" ? `${(rank % 4) + 1}z` : `${(rank % 9) + 1}${suit}`;
}

test("a guest's flipped 百搭 table shows the indicator turned up and the wild kind", async () => {
  const { ctx, page, problems } = await lobbyPage("baida-flipped", "Visitor", { guest: true });
  try {
    const guest = await page.evaluate(() => JSON.parse(localStorage.getItem("mahjong.session")));
    assert.equal(guest.guest, true);
    await page.getByTestId("create").click();
    await page.getByTestId("my-tiles").waitFor();
    const wild = page.getByTestId("wild");
    await wild.waitFor({ timeout: 15_000 });
    assert.match(await wild.innerText(), /百搭/);
    assert.equal(await page.getByTestId("rules").innerText(), "上海百搭");
    const indicator = await page.getByTestId("wild-indicator").getAttribute("data-tile");
    const kind = await page.getByTestId("wild-kind").getAttribute("data-tile");
    assert.match(indicator, /^[1-9][mps]$|^[1-4]z$/, `the indicator is a playing tile: ${indicator}`);
    assert.equal(kind, nextKind(indicator), `indicator ${indicator} makes ${nextKind(indicator)} wild`);
    // the log tells it as the event came, and the person's own tiles of that kind are marked.
    // The view (and so the indicator) is drawn before the stream opens, so the line is awaited;
    // it is read from the page's whole log (its last 60 lines, kept in sessionStorage), since
    // the bots may already have pushed it out of the 14 lines on screen.
    const line = await page.waitForFunction(
      (ind) => {
        const seat = JSON.parse(sessionStorage.getItem("mahjong.seat") ?? "{}");
        return (seat.log ?? []).find((l) => l.startsWith(`翻百搭: ${ind}`)) ?? false;
      },
      indicator,
      { timeout: 10_000 },
    );
    const flipped = await line.jsonValue();
    assert.ok(flipped.includes(`— ${kind}`), `the log names the wild kind ${kind}: ${flipped}`);
    const mine = await page.getByTestId("hand-tile").evaluateAll((ts) =>
      ts.map((t) => [t.dataset.tile, t.classList.contains("wild-tile")]),
    );
    for (const [code, marked] of mine) assert.equal(marked, code === kind, `${code} marked ${marked}`);
    await shot(page, "baida-flipped");
    // a guest's table is a casual one: the hint is offered on the own turn
    await page.locator('[data-testid="opt-hint"], [data-testid="result"]').first().waitFor({ timeout: 60_000 });
    if (await visible(page.getByTestId("opt-hint"))) {
      await page.getByTestId("opt-hint").click();
      await page.getByTestId("hint-plan").waitFor({ timeout: 5000 });
    }
    assert.deepEqual(problems, [], "the page threw");
  } finally {
    await ctx.close();
  }
});

// Over HTTPS (WEB_URL https://…, the gateway's --web-tls-dir): the browser trusts the page only
// through the pin of the gateway's key (WEB_SPKI, browser.mjs). It is a secure context; without
// the pin the same Chromium refuses the certificate, so the pin, not a blanket exception, is
// what lets the other tests in.
test("over HTTPS the page is trusted only through the gateway certificate's pin", {
  skip: !URL_.startsWith("https:") && "the page is served over plain HTTP (loopback)",
}, async () => {
  assert.ok(process.env.WEB_SPKI, "WEB_SPKI (the gateway key's pin) is needed over HTTPS");
  const pinned = await launch();
  try {
    const page = pinned.pages()[0] ?? (await pinned.newPage());
    const resp = await page.goto(withProtocol());
    assert.equal(resp.status(), 200);
    const seen = await page.evaluate(() => [location.protocol, window.isSecureContext]);
    assert.deepEqual(seen, ["https:", true]);
    const tls = await resp.securityDetails();
    assert.ok(tls, "no TLS details for an https page");
    assert.match(tls.protocol, /^TLS 1\.[23]$/);
  } finally {
    await pinned.close();
  }
  for (const spki of ["", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]) {
    const bare = await launch({ spki });
    try {
      const page = bare.pages()[0] ?? (await bare.newPage());
      await assert.rejects(page.goto(withProtocol()), /ERR_CERT_/, `trusted with pin "${spki}"`);
    } finally {
      await bare.close();
    }
  }
});
