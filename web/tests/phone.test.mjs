// The table on a phone and from the keyboard (issue 33), against the stack tests/web/
// test_browser.py started (WEB_URL, MM_URL, ISSUER_URL; PHONE=1 runs it, once per suite: the
// other runs of that test share nothing with it but would only repeat it). The gateway pauses
// between hands (--between-hands-ms) until the person presses Next.
//
// * A guest's 4-hand table at 390 × 844 with touch, played by taps: every hand's result is
//   seen (and stays while nobody pressed Next), Next is tapped (the log tells it at once:
//   next_hand_ready); the hand's tiles lie within the viewport, are at least 40 px wide, and
//   nothing scrolls sideways, in portrait and (hand 2)
//   at 844 × 390 landscape; the result fits and scrolls within itself; its breakdown reads as
//   sentences (no identifiers, no seat numbers) and marks the winning tile.
// * A guest's 4-hand table at desktop size played with the keyboard alone: arrows and Enter
//   discard, Space passes, H wins, N is Next; then "Leave table" mid-hand names the escape
//   penalty and asks (Escape keeps the seat, Leave pays it).
// Screenshots go to ARTIFACTS (phone-*.png, desktop-*.png).

import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { launch } from "./browser.mjs";

const URL_ = process.env.WEB_URL;
const ARTIFACTS = process.env.ARTIFACTS || "test-artifacts";
const SKIP = process.env.PHONE !== "1" && "the phone and keyboard tests run once per suite (PHONE=1)";
mkdirSync(ARTIFACTS, { recursive: true });
const shot = (page, name) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
const SERVICES = `&matchmaking=${encodeURIComponent(process.env.MM_URL)}&issuer=${encodeURIComponent(process.env.ISSUER_URL)}`;
const PORTRAIT = { width: 390, height: 844 };
const LANDSCAPE = { width: 844, height: 390 };
const PHONE = { viewport: PORTRAIT, hasTouch: true, isMobile: true, deviceScaleFactor: 1 };

async function visible(locator) {
  return (await locator.count()) > 0 && (await locator.first().isVisible());
}

async function guestTable(page, name, hands) {
  await page.goto(`${URL_}/?protocol=connect${SERVICES}`);
  await page.locator("#name").fill(name);
  await page.getByTestId("guest").click();
  await page.getByTestId("player-name").waitFor();
  await page.locator("#hands").selectOption(String(hands));
  await page.locator("#rules").selectOption("qiaoma");
  await page.getByTestId("create").click();
  await page.getByTestId("my-tiles").waitFor({ timeout: 30_000 });
}

/** Every hand tile, and the page, within the viewport; tiles at least 40 px wide. */
async function assertFits(page, where) {
  const vp = page.viewportSize();
  let boxes = [];
  for (let i = 0; i < 10; i++) {
    // the page draws the hand anew with each view: measured once it is drawn
    boxes = await page.getByTestId("hand-tile").evaluateAll((ts) => ts.filter((t) => t.isConnected).map((t) => t.getBoundingClientRect().toJSON()));
    if (boxes.length && boxes.every((b) => b.width > 0)) break;
    await page.waitForTimeout(100);
  }
  assert.ok(boxes.length >= 1, `${where}: no hand tiles`);
  for (const b of boxes) {
    assert.ok(b.left >= 0 && b.right <= vp.width && b.top >= 0 && b.bottom <= vp.height, `${where}: a tile at ${JSON.stringify(b)} is outside ${vp.width}×${vp.height}`);
    assert.ok(b.width >= 40 && b.height >= 40, `${where}: a tile of ${b.width}×${b.height} is too small to tap`);
  }
  const page_ = await page.evaluate(() => ({ w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight, iw: innerWidth, ih: innerHeight }));
  assert.ok(page_.w <= page_.iw && page_.h <= page_.ih, `${where}: the page scrolls (${JSON.stringify(page_)})`);
  for (const b of await page.locator(".options button, .side-actions button").evaluateAll((bs) => bs.map((x) => x.getBoundingClientRect().toJSON()))) {
    assert.ok(b.height >= 40 && b.right <= vp.width && b.bottom <= vp.height, `${where}: a button at ${JSON.stringify(b)} cannot be tapped`);
  }
  return boxes.length;
}

/** The result as a player reads it: sentences, the winning tile marked, nothing for developers. */
async function assertReadable(page) {
  const text = await page.getByTestId("breakdown").innerText();
  assert.doesNotMatch(text, /seat \d|\b[a-z]+_[a-z_]+\b|[A-Z]{3,}_[A-Z]/, `developer output in the breakdown: ${text}`);
  assert.doesNotMatch(await page.getByTestId("result").innerText(), /after \d+ hands|seat \d/);
  if (/wins|win ·/.test(await page.locator(".result h2").innerText())) {
    assert.equal(await page.getByTestId("title-win-tile").count() >= 1, true, "the winning tile is not shown");
    assert.ok((await page.getByTestId("win-tile").count()) >= 1, "the winning tile is not marked in the hand");
  }
}

// The two tables play at once (each waits mostly on the bots), beside table.test.mjs's.
describe("the table on a phone and from the keyboard", { concurrency: 2, skip: SKIP }, () => {
test("a guest plays a 4-hand table on a phone by tapping, sees every result and taps Next", { timeout: 300_000 }, async () => {
  const ctx = await launch({ device: PHONE });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  try {
    // the lobby is not yet laid out for phones (issue 33's lobby part): it is used at a
    // desktop's width, then the table is played at the phone's
    await page.setViewportSize({ width: 1100, height: 844 });
    await guestTable(page, "Phone", 4);
    await page.setViewportSize(PORTRAIT);
    const seen = new Set(); // hands whose result was on screen
    const trail = [];
    const t0 = Date.now();
    const fitted = new Set();
    let taps = 0;
    const deadline = Date.now() + 270_000;
    for (;;) {
      assert.ok(Date.now() < deadline, `the table did not end in time (results seen: ${[...seen]})`);
      if (await visible(page.getByTestId("result"))) {
        const number = Number(await page.getByTestId("result").getAttribute("data-hand"));
        seen.add(number);
        trail.push(`result ${number} at ${Math.round((Date.now() - t0) / 1000)}s`);
        const frame = await page.locator(".result-frame").boundingBox();
        const vp = page.viewportSize();
        assert.ok(frame.x >= 0 && frame.x + frame.width <= vp.width + 0.5 && frame.y >= 0 && frame.y + frame.height <= vp.height + 0.5, `the result box ${JSON.stringify(frame)} is off-screen`);
        await assertReadable(page);
        if (await visible(page.getByTestId("table-finished"))) {
          await shot(page, "phone-final");
          break;
        }
        await page.waitForTimeout(700); // Next ignores a tap in the result's first 0.7 s
        if (number === 1) {
          // the table waits: the result stays while nobody pressed Next
          await page.waitForTimeout(1500);
          assert.ok(await visible(page.getByTestId("result")), "the result went before Next was pressed");
          assert.match(await page.getByTestId("next-countdown").innerText(), /\d+s/);
          await shot(page, "phone-result");
        }
        await page.getByTestId("next-hand").tap();
        trail.push(`next at ${Math.round((Date.now() - t0) / 1000)}s`);
        if (number === 1) {
          // pressing Next is an event of the table (next_hand_ready), on the stream at once
          await page.waitForFunction(() => document.querySelector('[data-testid="log"]')?.textContent.includes("is ready for the next hand"), null, { timeout: 10_000 });
        }
        await page.getByTestId("result").waitFor({ state: "hidden" });
        continue;
      }
      const hand = Number((await page.locator(".center .meta").innerText().catch(() => "")).match(/hand (\d+)/)?.[1] ?? 0);
      if (hand && !fitted.has(hand) && (await page.getByTestId("hand-tile").count()) >= 13) {
        fitted.add(hand);
        trail.push(`hand ${hand} at ${Math.round((Date.now() - t0) / 1000)}s`);
        if (hand === 2) {
          await page.setViewportSize(LANDSCAPE);
          await page.waitForTimeout(150);
          await assertFits(page, "landscape");
          await shot(page, "phone-landscape");
          await page.setViewportSize(PORTRAIT);
          await page.waitForTimeout(150);
        }
        await assertFits(page, `portrait, hand ${hand}`);
        if (hand === 1) await shot(page, "phone-table");
      }
      const did = await tapDecision(page).catch(() => null);
      if (did) taps += 1;
      else await page.waitForTimeout(80);
    }
    assert.deepEqual([...seen].sort(), [1, 2, 3, 4], `a hand's result was never seen: ${trail.join(", ")}`);
    console.log(`# phone: ${taps} taps, results seen ${[...seen]}`);
    assert.deepEqual(problems, [], "the page threw");
  } finally {
    await ctx.close();
  }
});

// A tap gives up soon: a hand's result coming up over the button must not hold the loop (it
// would wait out the pause and miss the result).
async function tapDecision(page) {
  const quick = { timeout: 1500 };
  if (await visible(page.getByTestId("opt-win"))) return page.getByTestId("opt-win").first().tap(quick).then(() => "win");
  const playable = page.locator('[data-testid="hand-tile"][data-playable="1"]');
  if ((await playable.count()) > 0) return playable.last().tap(quick).then(() => "discard");
  if (await visible(page.getByTestId("opt-pass"))) return page.getByTestId("opt-pass").tap(quick).then(() => "pass");
  return null;
}

test("a turn played with the keyboard alone, Next by key, and Leave names its penalty", { timeout: 240_000 }, async () => {
  const ctx = await launch();
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  const problems = [];
  page.on("pageerror", (e) => problems.push(e.message));
  try {
    await guestTable(page, "Keys", 4);
    let discards = 0;
    let checked = false;
    const deadline = Date.now() + 200_000;
    // hand 1, keys only: End/arrows pick a tile, Enter discards it; H wins; Space passes
    while (!(await visible(page.getByTestId("result")))) {
      assert.ok(Date.now() < deadline, "hand 1 did not end in time");
      if (await visible(page.getByTestId("opt-win"))) {
        await page.keyboard.press("h");
      } else if ((await page.locator('[data-testid="hand-tile"][data-playable="1"]').count()) > 0) {
        const before = await page.getByTestId("hand-tile").count();
        await page.keyboard.press("End");
        await page.keyboard.press("ArrowLeft");
        await page.keyboard.press("ArrowRight");
        const picked = await page.locator('[data-testid="hand-tile"].cursor').getAttribute("data-tile");
        if (!checked) {
          // the cursor is on the last tile, and focused
          const last = await page.getByTestId("hand-tile").last().getAttribute("data-tile");
          assert.equal(picked, last);
          assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "hand-tile");
          await shot(page, "desktop-keyboard");
        }
        await page.keyboard.press("Enter");
        const mine = await page.waitForFunction(
          ([n, tile]) => {
            const log = JSON.parse(sessionStorage.getItem("mahjong.seat") ?? "{}").log ?? [];
            return log.slice(-12).some((l) => l.startsWith("Keys (you) discards") && l.includes(tile)) || document.querySelectorAll('[data-testid="hand-tile"]').length < n ? true : false;
          },
          [before, picked],
          { timeout: 10_000 },
        ).catch(() => null);
        if (mine && !checked) checked = true;
        discards += 1;
      } else if (await visible(page.getByTestId("opt-pass"))) {
        await page.keyboard.press(" ");
      }
      await page.waitForTimeout(80);
    }
    assert.ok(checked, "no discard was made with the keyboard");
    await assertReadable(page);
    await shot(page, "desktop-result");
    await page.waitForTimeout(700); // Next ignores a key in the result's first 0.7 s
    await page.keyboard.press("n");
    await page.getByTestId("result").waitFor({ state: "hidden" });
    // hand 2: "Leave table" while it runs asks first and names the penalty (RULES §9: 1 × stake
    // 1 × 底分 2 at shanghai-qiaoma)
    await page.getByTestId("hand-tile").first().waitFor();
    await page.locator(".center .meta").filter({ hasText: "hand 2" }).waitFor({ timeout: 30_000 });
    await page.getByTestId("leave").click();
    const dialog = page.getByTestId("leave-confirm");
    await dialog.waitFor();
    assert.match(await dialog.innerText(), /escape penalty of 2 chips/);
    await shot(page, "desktop-leave");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    assert.ok(await visible(page.getByTestId("my-hand")), "Escape left the table");
    await page.getByTestId("leave").click();
    await page.getByTestId("leave-confirm-yes").click();
    // (the only person left: the table ends, and the page is back in the lobby)
    await page.getByTestId("create").waitFor({ timeout: 10_000 }); // the lobby
    console.log(`# keyboard: ${discards} discards by key`);
    assert.deepEqual(problems, [], "the page threw");
  } finally {
    await ctx.close();
  }
});
});
