// The console in a real browser: Debian's Chromium, headless, driven by playwright-core,
// against a real `shogi-arbiter serve` (embedded bus) on a free port. Run by `make
// test-browser` (which builds the binary first) or `npm test` in web/console/.
//
// Every page fails its test on any console error or page error. Accessibility is checked with
// axe-core (pinned in package.json): no serious or critical violation, at 1280x800 and 375x812.
// Screenshots of each verdict (a time-up among them), of a live game with a warning, of a live
// game's clocks, of a move's comment and of the operator view at both sizes, and of any step that fails, go to
// target/browser-test/ (or $BROWSER_TEST_OUT).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { createInterface } from "node:readline";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { moveValidator } from "../.build/test/client.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const binary = process.env.SHOGI_ARBITER_BIN ?? path.join(root, "target/debug/shogi-arbiter");
const browserPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const out = process.env.BROWSER_TEST_OUT ?? path.join(root, "target/browser-test");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
/**
 * How much longer than on an idle machine a wait may take here, now: the one-minute load
 * average per core, clamped to 1..8, times ARBITER_TEST_PATIENCE when set, as the Rust tests'
 * deadlines scale (crates/test-support/src/patience.rs).
 */
function patience() {
  const perCore = os.loadavg()[0] / os.availableParallelism();
  const factor = Number(process.env.ARBITER_TEST_PATIENCE);
  return Math.min(8, Math.max(1, perCore)) * (Number.isFinite(factor) && factor > 0 ? factor : 1);
}
// 20 s on an idle machine, scaled to the machine when the tests start; a wait ends as soon as
// the page shows what it waits for.
const TIMEOUT = 20_000 * patience();
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 375, height: 812 };

// The README's perpetual-check game: Black's rook checks on every move, the position after
// ply 1 occurs again at plies 5, 9 and 13.
const PERPETUAL_SFEN = "6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1";
const PERPETUAL_MOVES = "5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h".split(" ");
// ../shared/rules/declaration.tsv, lishogi-black-yes: Black has 28 points and 12 pieces in
// camp, enough under the 27-point rule (Black needs 28).
const IMPASSE_SFEN = "2SGS4/+B+RGKGLLRB/3G5/9/7pp/8k/9/9/9 b - 1";
// White's king on 9a, Black's gold on 8c and one in hand: G*9b mates.
const MATE_SFEN = "k8/9/1G7/9/9/9/9/9/K8 b G 1";

let browser;
let server;
let api;

before(async () => {
  assert.ok(existsSync(binary), `no shogi-arbiter binary at ${binary}: build it with \`cargo build -p shogi-arbiter\` (make test-browser does) or set SHOGI_ARBITER_BIN`);
  assert.ok(existsSync(browserPath), `no Chromium at ${browserPath}: install Debian's chromium (make setup does) or set CHROMIUM`);
  mkdirSync(out, { recursive: true });
  // As root (CI), Chromium runs only without its sandbox.
  browser = await chromium.launch({ executablePath: browserPath, headless: true, args: ["--no-sandbox"] });
  server = await startServer();
  api = moveValidator(server.url.replace(/\/$/, ""));
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

/** Starts `shogi-arbiter serve` on a free port; resolves with its address once it printed it. */
async function startServer(env = {}) {
  const environment = { ...process.env, ...env };
  if (!("MOVE_VALIDATOR_AUTH_TOKEN" in env)) delete environment.MOVE_VALIDATOR_AUTH_TOKEN;
  const child = spawn(binary, ["serve", "--listen", "127.0.0.1:0"], {
    env: environment,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stderr.on("data", (d) => {
    log += d;
  });
  const first = await new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once("line", resolve);
    child.once("exit", (code) => reject(new Error(`shogi-arbiter serve exited with ${code}:\n${log}`)));
    setTimeout(() => reject(new Error(`shogi-arbiter serve printed no address in 60 s:\n${log}`)), 60_000).unref();
  });
  return {
    url: `http://${first.trim()}/`,
    log: () => log,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * Runs `steps` on a new page of `on` (the shared server by default); a failure leaves a
 * screenshot named after `name`. Any console error or page error fails the test.
 */
async function onPage(name, steps, { on = server, hash = "" } = {}) {
  const page = await browser.newPage({ viewport: DESKTOP });
  page.setDefaultTimeout(TIMEOUT);
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console error: ${m.text()}`));
  try {
    await page.goto(on.url + hash);
    await page.waitForSelector("body[data-ready=true]");
    await steps(page);
    assert.deepEqual(problems, [], "the page logged errors");
  } catch (e) {
    await page.screenshot({ path: path.join(out, `${name}-failure.png`), fullPage: true }).catch(() => {});
    e.message += `\n${problems.join("\n")}\nserver log:\n${on.log().slice(-4000)}`;
    throw e;
  } finally {
    await page.close();
  }
}

/** axe-core on the page as it is: no serious or critical violation. */
async function axe(page, what) {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ["violations"] });
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join("; ")})`);
  });
  assert.deepEqual(violations, [], `axe-core on ${what}`);
}

/**
 * At both sizes: no horizontal scrolling, of the page or of a part of it, axe-core clean, and a
 * screenshot `<name>-<width>.png` of the whole page. Leaves the page at the desktop size.
 */
async function atBothSizes(page, name) {
  for (const size of [DESKTOP, PHONE]) {
    await page.setViewportSize(size);
    await page.waitForFunction((w) => window.innerWidth === w, size.width);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${name} at ${size.width}x${size.height}: scrolls ${overflow} px sideways`);
    // Nor does any part of it hide columns behind a scroll of its own (a table cut at the
    // right edge reads as a table without those columns); screen-reader text is 1 px wide.
    const cut = await page.evaluate(() => [...document.querySelectorAll("body *")]
      .filter((e) => e.getClientRects().length > 0 && e.clientWidth > 1 && e.scrollWidth > e.clientWidth + 1
        && ["auto", "scroll", "hidden"].includes(getComputedStyle(e).overflowX))
      .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ""}${e.className ? `.${e.className}` : ""}`
        + ` "${(e.querySelector("h2, h3")?.textContent ?? "").slice(0, 40)}" (${e.scrollWidth - e.clientWidth} px)`));
    assert.deepEqual(cut, [], `${name} at ${size.width}x${size.height}: parts scroll sideways`);
    await axe(page, `${name} at ${size.width}x${size.height}`);
    await page.screenshot({ path: path.join(out, `${name}-${size.width}.png`), fullPage: true });
  }
  await page.setViewportSize(DESKTOP);
}

/**
 * Creates a game through the form; `clock` fills its time control (`main`, `byoyomi`,
 * `periods`, `increment`, as typed), and without it the game has no clock.
 */
async function createGame(page, preset, sfen, id = "", clock = null) {
  await page.selectOption("#preset", preset);
  await page.fill("#sfen", sfen);
  await page.fill("#game-id", id);
  if (clock) {
    await page.evaluate(() => { document.querySelector("#clock-fields").open = true; });
    for (const field of ["main", "byoyomi", "periods", "increment"]) await page.fill(`#time-${field}`, clock[field] ?? "");
  } else {
    await page.evaluate(() => document.querySelectorAll("#clock-fields input").forEach((i) => { i.value = ""; }));
  }
  const before = await page.evaluate(() => location.hash);
  await page.click("#create");
  // The new game's URL, then the new game on the page.
  await page.waitForFunction((b) => /^#\/games\/./.test(location.hash) && location.hash !== b, before);
  const opened = await page.evaluate(() => decodeURIComponent(location.hash.slice("#/games/".length)));
  await page.waitForFunction((g) => document.querySelector("#game-id-text")?.textContent === g, opened);
  await page.waitForSelector("#analysis:not([hidden]) #moves tr[data-ply='0']");
  return opened;
}

/** Plays `usi` (a board move) by clicking its two squares, then waits for its row. */
async function play(page, usi, ply) {
  await page.click(`[data-square='${usi.slice(0, 2)}']`);
  await page.waitForSelector(`[data-square='${usi.slice(2, 4)}'].target`);
  await page.click(`[data-square='${usi.slice(2, 4)}']`);
  await page.waitForSelector(`#moves tr[data-ply='${ply}']`);
}

/** Plays `moves` as another client would (a platform's server), from ply `first`. */
async function playElsewhere(gameId, moves, first = 1) {
  let answer;
  for (const [i, usi] of moves.entries()) answer = await api.submitMove({ gameId, ply: first + i, usi });
  return answer;
}

const text = (page, selector) => page.locator(selector).innerText();

/** What a side's clock on the page shows. */
async function clockOf(page, side) {
  return page.evaluate((s) => {
    const el = document.querySelector(`#game .clock[data-clock=${s}]`);
    return el && {
      running: el.dataset.running === "true",
      phase: el.dataset.phase,
      ms: Number(el.dataset.ms),
      periods: Number(el.dataset.periods),
      time: el.querySelector(".time").textContent,
      note: el.querySelector(".note")?.textContent ?? "",
    };
  }, side);
}

/** An amount of the time-up's evidence as the page writes it (under a minute). */
const seconds = (ms) => `${(Number(ms) / 1000).toFixed(3)} s`;
const iso = (unixMs) => new Date(Number(unixMs)).toISOString();

/** Moves the keyboard focus on the board to `sq` with the arrow keys. */
async function arrowTo(page, sq) {
  const files = "987654321";
  const ranks = "abcdefghi";
  for (;;) {
    const at = await page.evaluate(() => document.activeElement?.dataset.square ?? null);
    assert.ok(at, "the focus left the board");
    if (at === sq) return;
    const dc = files.indexOf(sq[0]) - files.indexOf(at[0]);
    const dr = ranks.indexOf(sq[1]) - ranks.indexOf(at[1]);
    const key = dc < 0 ? "ArrowLeft" : dc > 0 ? "ArrowRight" : dr < 0 ? "ArrowUp" : "ArrowDown";
    await page.keyboard.press(key);
  }
}

/** Tabs (forward, or backward) until a square of the board has the focus. */
async function tabToBoard(page, backward = false) {
  for (let i = 0; i < 80; i++) {
    await page.keyboard.press(backward ? "Shift+Tab" : "Tab");
    if (await page.evaluate(() => !!document.activeElement?.dataset.square)) return;
  }
  assert.fail("Tab never reached the board");
}

async function keyMove(page, usi, ply) {
  await arrowTo(page, usi.slice(0, 2));
  await page.keyboard.press("Enter");
  await page.waitForSelector(`[data-square='${usi.slice(2, 4)}'].target`);
  await arrowTo(page, usi.slice(2, 4));
  await page.keyboard.press("Enter");
  if (usi.endsWith("+")) {
    await page.waitForSelector("#promotion:not([hidden])");
    assert.equal(await page.evaluate(() => document.activeElement?.id), "promote-yes");
    await page.keyboard.press("Enter");
  }
  await page.waitForSelector(`#moves tr[data-ply='${ply}']`);
}

/** The ply the page shows, and the square its last move went to. */
async function shown(page) {
  return page.evaluate(() => ({
    ply: Number(document.querySelector("#moves tr.shown")?.dataset.ply),
    last: document.querySelector(".sq.last")?.dataset.square ?? null,
  }));
}

/** Clicks every evidence ply of the verdict and checks that the board shows that position. */
async function openEvidence(page, moves) {
  const plies = await page.locator("#verdict [data-evidence] [data-goto-ply]").evaluateAll((els) => els.map((e) => Number(e.dataset.gotoPly)));
  assert.ok(plies.length > 0, "the verdict names plies");
  for (const [i, ply] of plies.entries()) {
    await page.locator("#verdict [data-evidence] [data-goto-ply]").nth(i).click();
    await page.waitForFunction((p) => document.querySelector("#moves tr.shown")?.dataset.ply === String(p), ply);
    const s = await shown(page);
    assert.equal(s.last, ply > 0 ? moves[ply - 1].slice(2, 4) : null, `ply ${ply}: the last move's square`);
  }
  return plies;
}

test("plays a game by keyboard only, with the moves in KIF notation", async () => {
  await onPage("keyboard", async (page) => {
    await createGame(page, "jsa", "");
    await tabToBoard(page);
    assert.match(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), /^５五 empty/);
    await keyMove(page, "7g7f", 1);
    await keyMove(page, "3c3d", 2);
    await keyMove(page, "8h2b+", 3);
    await keyMove(page, "3a2b", 4);
    // A drop: Tab from the board to Black's hand (below it), Enter, back to the board.
    await page.keyboard.press("Tab");
    assert.match(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), /Black's bishop in hand/);
    await page.keyboard.press("Enter");
    // The hand is drawn again with the bishop picked, and the focus stays on it (it fell to
    // the page's body before, and a redraw right after the Tab lost it in one run of 30).
    await page.waitForSelector("[data-hand='black:B'][aria-pressed='true']");
    assert.match(await page.evaluate(() => document.activeElement.getAttribute("aria-label")), /Black's bishop in hand/);
    await tabToBoard(page, true);
    await page.waitForSelector("[data-square='4e'].target");
    await arrowTo(page, "4e");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#moves tr[data-ply='5']");
    const moves = await page.locator("#moves tbody button.move").allInnerTexts();
    assert.deepEqual(moves.slice(1), ["▲７六歩(77)", "△３四歩(33)", "▲２二角成(88)", "△同　銀(31)", "▲４五角打"]);
    assert.equal(await page.locator("#moves tr[data-ply='3'] button.move").getAttribute("title"), "USI 8h2b+");
    assert.match(await page.getAttribute("[data-square='4e']", "aria-label"), /^４五 ▲角 Black bishop, last move/);
    assert.match(await text(page, "#status"), /☖ White to move, ply 6/);
    assert.ok(await page.locator("#hand-top.to-move").count(), "White's hand, on top, is marked as the one to move");
    // The USI option names the moves as the arbiter does.
    await page.check("#usi");
    assert.equal(await text(page, "#moves tr[data-ply='3'] button.move"), "8h2b+");
    await page.uncheck("#usi");
    // Flipped, White's side is at the bottom and the files run the other way.
    await page.click("#flip");
    assert.equal(await page.locator("#files span").first().innerText(), "１");
    assert.equal(await page.locator("#board .sq").first().getAttribute("data-square"), "1i");
    await page.click("#flip");
  });
});

test("a perpetual check: the live warning, the verdict, stepping through it, its evidence, its URL after a reload", async () => {
  await onPage("perpetual-check", async (page) => {
    const id = await createGame(page, "online", PERPETUAL_SFEN);
    // Twelve moves from another client; the page follows.
    await playElsewhere(id, PERPETUAL_MOVES.slice(0, 12));
    await page.waitForSelector("#moves tr[data-ply='12']");
    await page.waitForSelector("#current-warnings li[data-warning=perpetualCheckRisk]");
    // The last ply's warnings are current; the earlier ones are folded away.
    assert.match(await text(page, "#current-warnings"), /Ply 12: perpetual-check risk: Black has checked on every move since ply 4/);
    assert.match(await text(page, "#current-warnings"), /Ply 12: this position stood before at plies 4 8; once more ends the game/);
    assert.match(await page.locator("#warnings details.earlier").textContent(), /Ply 9: perpetual-check risk: Black has checked on every move since ply 1/);
    assert.equal(await page.locator("#warnings details.earlier[open]").count(), 0);
    assert.equal(await text(page, "#moves tr[data-ply='9'] [data-field=occurrence]"), "×3");
    assert.match(await text(page, "#streaks"), /Black 6/);
    await atBothSizes(page, "live-game-warning");
    // The last move by a click on the page.
    await play(page, PERPETUAL_MOVES[12], 13);
    await page.waitForSelector("#verdict:not([hidden])");
    const verdict = await text(page, "#verdict");
    assert.match(verdict, /☖ White wins — Perpetual check/);
    assert.match(verdict, /at ply 13/);
    assert.match(await text(page, "#verdict [data-evidence=plies]"), /1 5 9 13/);
    assert.match(await text(page, "#verdict [data-evidence=check-plies]"), /3 5 7 9 11 13/);
    assert.match(await text(page, "#verdict [data-evidence=checker]"), /Black, loses/);
    assert.match(await text(page, "#status"), /Game over after 13 plies/);
    // The warnings are over with the game: folded away, none current.
    assert.equal(await page.locator("#current-warnings").count(), 0);
    assert.match(await text(page, "#warnings"), /None: the game is over/);
    await atBothSizes(page, "verdict-perpetual-check");
    const plies = await openEvidence(page, PERPETUAL_MOVES);
    assert.deepEqual(plies, [1, 5, 9, 13, 3, 5, 7, 9, 11, 13]);
    // Stepping: keys, buttons, the slider.
    await page.keyboard.press("Home");
    assert.equal((await shown(page)).ply, 0);
    await page.keyboard.press("ArrowRight");
    assert.deepEqual(await shown(page), { ply: 1, last: "3h" });
    await page.click("#step-forward");
    assert.equal((await shown(page)).ply, 2);
    await page.locator("#step-slider").fill("7");
    assert.equal((await shown(page)).ply, 7);
    assert.match(await text(page, "#viewing"), /after ply 7 \(▲２八飛\(38\)\)/);
    await page.click("#step-back");
    assert.equal((await shown(page)).ply, 6);
    await page.keyboard.press("End");
    assert.equal((await shown(page)).ply, 13);
    assert.ok(await page.locator("#viewing").isHidden());
    // The game has a URL: a reload opens it again.
    assert.equal(new URL(page.url()).hash, `#/games/${id}`);
    await page.reload();
    await page.waitForSelector("body[data-ready=true]");
    await page.waitForSelector("#verdict:not([hidden])");
    assert.equal(await text(page, "#game-id-text"), id);
    assert.match(await text(page, "#verdict"), /Perpetual check/);
  });
});

test("a repetition, a checkmate and both declarations, each at both sizes", async () => {
  await onPage("verdicts", async (page) => {
    // A fourfold repetition of the kings' walk, played by another client.
    const id = await createGame(page, "online", "");
    const walk = ["5i4h", "5a4b", "4h5i", "4b5a"];
    const moves = [];
    for (let ply = 1; ply <= 40; ply++) {
      const usi = walk[(ply - 1) % 4];
      moves.push(usi);
      const answer = await api.submitMove({ gameId: id, ply, usi });
      if (answer.verdict) break;
    }
    await page.waitForSelector("#verdict:not([hidden]) [data-code=repetition]");
    assert.match(await text(page, "#verdict"), /Repetition/);
    await atBothSizes(page, "verdict-repetition");
    const plies = await openEvidence(page, moves);
    assert.equal(plies.length, 4);
    await page.keyboard.press("End");

    // A checkmate by a drop from the hand, by clicks.
    await createGame(page, "online", MATE_SFEN);
    await page.click("[data-hand='black:G']");
    await page.waitForSelector("[data-square='9b'].target");
    await page.click("[data-square='9b']");
    await page.waitForSelector("#verdict:not([hidden]) [data-code=checkmate]");
    assert.match(await text(page, "#verdict"), /☗ Black wins — Checkmate/);
    assert.match(await text(page, "#verdict [data-evidence=mate]"), /Mated by ▲９二金打 at ply 1/);
    await atBothSizes(page, "verdict-checkmate");

    // A declaration that does not qualify is refused and play goes on.
    await createGame(page, "online", "");
    assert.match(await text(page, "#declaration"), /If ☗ Black declared now \(27-point rule\): refused/);
    await page.click("#declare");
    await page.waitForSelector("#declare-result [data-code=refused]");
    assert.match(await text(page, "#declare-result"), /Refused: Black's declaration at ply 0 does not qualify; play goes on/);
    assert.ok(await page.locator("#verdict").isHidden());
    assert.equal(await page.getAttribute("#declaration-body [data-condition=king_in_camp]", "data-met"), "false");
    await atBothSizes(page, "verdict-declaration-refused");

    // A 27-point declaration that wins: the live report first, then the verdict's own.
    await createGame(page, "amateur", IMPASSE_SFEN);
    assert.ok(await page.locator("#declare-result [data-code]").count() === 0, "a new game shows no old answer");
    assert.match(await text(page, "#declaration"), /If ☗ Black declared now \(27-point rule\): win/);
    assert.match(await text(page, "#declaration [data-field=points]"), /Points: 28 of 28 needed \(in camp 28, in hand 0\)/);
    await page.click("#declare");
    await page.waitForSelector("#verdict:not([hidden]) [data-code=declaration]");
    assert.match(await text(page, "#verdict"), /☗ Black wins — Declaration/);
    const report = await text(page, "#declaration");
    assert.match(report, /☗ Black declared \(27-point rule\): win/);
    assert.doesNotMatch(await text(page, "#games-view"), /loss/, "no recomputed loss beside the win");
    assert.equal(await page.locator("#declaration .report").count(), 1, "one report on the screen");
    for (const c of ["declarers_turn", "king_in_camp", "pieces_in_camp", "not_in_check", "has_time", "points"]) {
      assert.equal(await page.getAttribute(`#declaration [data-condition=${c}]`, "data-met"), "true", c);
    }
    // The pieces in the camp are shown on the board: the king's twelve companions.
    assert.equal(await page.locator(".sq.camp").count(), 13);
    await atBothSizes(page, "verdict-declaration-win");
  });
});

test("a move's comment (an engine's evaluation) beside its move, as text, stepped through, after a reload", async () => {
  await onPage("move-comment", async (page) => {
    const id = await createGame(page, "jsa", "");
    // What a CSA engine sends after its move (floodgate's `'*` evaluation and line), a move
    // without one, and a hostile one: markup, and one word too long for any line.
    const evaluation = "* 30 -3334FU +2726FU";
    const hostile = `<img src=x onerror="window.__pwned = 1"> & ${"７六歩".repeat(400)}`;
    await api.submitMove({ gameId: id, ply: 1, usi: "7g7f", comment: evaluation });
    await api.submitMove({ gameId: id, ply: 2, usi: "3c3d" });
    await api.submitMove({ gameId: id, ply: 3, usi: "2g2f", comment: hostile });
    await page.waitForSelector("#moves tr[data-ply='3'] .has-comment");
    const marked = await page.locator("#moves tbody tr").evaluateAll((rows) => rows.map((r) => !!r.querySelector(".has-comment")));
    assert.deepEqual(marked, [false, true, false, true]);
    // The current ply's comment, as the text it is.
    await page.waitForSelector("#comment:not([hidden])");
    assert.equal(await text(page, "#comment-move"), "With ply 3, ▲２六歩(27):");
    assert.equal(await page.locator("#comment-text").textContent(), hostile);
    assert.equal(await page.locator("#comment img").count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    await atBothSizes(page, "move-comment");
    // Stepping: a move without a comment hides it; the first move's is shown.
    await page.click("#step-back");
    assert.ok(await page.locator("#comment").isHidden());
    await page.click("#step-back");
    assert.equal(await text(page, "#comment-text"), evaluation);
    assert.equal(await text(page, "#comment-move"), "With ply 1, ▲７六歩(77):");
    await page.keyboard.press("Home");
    assert.ok(await page.locator("#comment").isHidden());
    // A live move's comment comes with it; a reload reads them all again from the game's log.
    await page.keyboard.press("End");
    await api.submitMove({ gameId: id, ply: 4, usi: "8c8d", comment: "* -12 +2625FU" });
    await page.waitForSelector("#moves tr[data-ply='4'] .has-comment");
    await page.waitForFunction(() => document.querySelector("#comment-text")?.textContent === "* -12 +2625FU");
    await page.reload();
    await page.waitForSelector("body[data-ready=true]");
    await page.waitForSelector("#moves tr[data-ply='4'] .has-comment");
    const again = await page.locator("#moves tbody tr").evaluateAll((rows) => rows.map((r) => !!r.querySelector(".has-comment")));
    assert.deepEqual(again, [false, true, false, true, true]);
    await page.locator("#moves tr[data-ply='3'] button.move").click();
    assert.equal(await page.locator("#comment-text").textContent(), hostile);
  });
});

test("the arbiter's clocks: both count down, byoyomi periods, a side without a limit, a late move's time-up and its evidence", async () => {
  await onPage("clock", async (page) => {
    // A game without a clock shows none.
    await createGame(page, "online", "");
    assert.equal(await page.locator("#game .clock").count(), 0);
    assert.match(await text(page, "#ruleset"), /no clock/);

    // A time the form cannot read is refused before any call, naming the field.
    await page.evaluate(() => { document.querySelector("#clock-fields").open = true; });
    await page.fill("#time-main", "ten minutes");
    await page.click("#create");
    await page.waitForSelector("#error:not([hidden])");
    assert.match(await text(page, "#error"), /main time: "ten minutes" is not a time \(seconds, m:ss or h:mm:ss\)/);

    // Ten minutes and three periods of 30 seconds, from the form.
    const id = await createGame(page, "online", "", "", { main: "10:00", byoyomi: "30", periods: "3" });
    assert.match(await text(page, "#ruleset"), /clock: 10 min, byoyomi 30 s × 3/);
    // Black's clock runs from the creation; White's stands at its main time.
    await page.waitForSelector("#game .clock[data-clock=black].running");
    assert.deepEqual(await clockOf(page, "white"),
      { running: false, phase: "main", ms: 600_000, periods: 3, time: "10:00", note: "+3 × 30 s" });
    // With the arbiter's clock, a declaration's time is the clock's: no "has time" box.
    assert.ok(await page.locator("#has-time-label").isHidden());
    await play(page, "7g7f", 1);
    await page.waitForSelector("#game .clock[data-clock=white].running");
    // White's reading falls while it thinks, from the deadline and the time now.
    const thinking = (await clockOf(page, "white")).ms;
    await page.waitForFunction((ms) => Number(document.querySelector("#game .clock[data-clock=white]").dataset.ms) < ms, thinking);
    await play(page, "3c3d", 2);
    await page.waitForSelector("#game .clock[data-clock=black].running");
    // What each clock shows is what the arbiter says: the idle side's time as it left it, the
    // running side's less the time since its turn started.
    const { clock } = (await api.getGame({ gameId: id })).game;
    const white = await clockOf(page, "white");
    assert.equal(white.ms, Number(clock.white.remainingMs));
    assert.ok(white.ms < 600_000 && white.periods === 3, `White after its move: ${JSON.stringify(white)}`);
    const black = await clockOf(page, "black");
    assert.equal(black.phase, "main");
    assert.ok(black.ms <= Number(clock.black.remainingMs), `Black's running clock ${black.ms} over its ${clock.black.remainingMs}`);
    assert.match(await page.getAttribute("#hand-bottom .clock", "data-clock"), /black/);
    await atBothSizes(page, "clock-live");

    // Time odds: a side without a limit says so (set by another client; the form sets both).
    const odds = await api.createGame({
      ruleset: {
        preset: "online",
        overrides: { timeMain: { seconds: 60n }, timeMainWhite: { seconds: 0n }, timeByoyomiWhite: { seconds: 0n }, timeIncrementWhite: { seconds: 0n } },
      },
    });
    const oddsId = odds.game.gameId;
    await page.evaluate((g) => { location.hash = `#/games/${encodeURIComponent(g)}`; }, oddsId);
    await page.waitForFunction((g) => document.querySelector("#game-id-text")?.textContent === g, oddsId);
    await page.waitForSelector("#game .clock[data-clock=white].none");
    assert.equal((await clockOf(page, "white")).time, "no limit");
    assert.match(await text(page, "#ruleset"), /clock: ☗ 1 min; ☖ no limit/);
    await playElsewhere(oddsId, ["7g7f"]);
    await page.waitForSelector("#game .clock[data-clock=white].none.running");
    assert.equal((await clockOf(page, "black")).running, false);

    // A short clock, scaled to the machine so that the page's two moves fit in it: Black then
    // thinks through its main time and both periods, and moves too late.
    const unit = Math.ceil(patience());
    const lateId = await createGame(page, "online", "", "", { main: String(3 * unit), byoyomi: String(unit), periods: "2" });
    await play(page, "7g7f", 1);
    await play(page, "3c3d", 2);
    await page.click("[data-square='2g']");
    await page.waitForSelector("[data-square='2f'].target");
    const { deadlineUnixMs } = (await api.getGame({ gameId: lateId })).game.clock;
    const deadline = Number(deadlineUnixMs);
    // The page asks the arbiter again once the deadline it shows has passed.
    const askedAfter = page.waitForRequest((r) => r.url().endsWith("/AnalyzeGame") && Date.now() >= deadline, { timeout: TIMEOUT + 6 * unit * 1000 });
    await page.waitForSelector("#game .clock[data-clock=black][data-phase=byoyomi][data-periods='1']", { timeout: TIMEOUT + 6 * unit * 1000 });
    await page.waitForSelector("#game .clock[data-clock=black][data-phase=out]", { timeout: TIMEOUT + 6 * unit * 1000 });
    await askedAfter;
    // The page has not decided anything: past the deadline it awaits the arbiter's word, and
    // only a verdict shows the time up (a flag of the silent side may come at any moment; a
    // move after it is not sent).
    const note = (await clockOf(page, "black")).note;
    const flaggedFirst = await page.locator("#verdict").isVisible();
    assert.ok(note === "awaiting the arbiter" || (note === "time up" && flaggedFirst), `Black's clock says "${note}"`);
    await page.click("[data-square='2f']");
    await page.waitForSelector("#verdict:not([hidden]) [data-code=timeout]");
    assert.match(await text(page, "#verdict .headline"), /☖ White wins — Time out \(切れ負け\), at ply 2/);
    assert.match(await text(page, "#status"), /Game over after 2 plies/);
    assert.ok(await page.locator("#error").isHidden(), "a late move is a verdict, not an error");
    // The evidence, as the arbiter judged it.
    const verdict = (await api.getGame({ gameId: lateId })).game.verdict;
    const ev = verdict.evidence.value;
    assert.equal(verdict.evidence.case, "timeUp");
    assert.ok(ev.atUnixMs >= ev.deadlineUnixMs && ev.chargedMs >= ev.availableMs, JSON.stringify(ev, (_, x) => typeof x === "bigint" ? Number(x) : x));
    const byCall = verdict.receivedUnixMs !== 0n;
    console.log(`time-up ended by ${byCall ? "the late move" : "the flag"}, ${Number(ev.atUnixMs - ev.deadlineUnixMs)} ms after the deadline`);
    if (byCall) assert.ok(!flaggedFirst, "a late move ended a game that a flag had ended");
    assert.match(await text(page, "#verdict [data-evidence=side]"), /☗ Black/);
    assert.equal(await page.getAttribute("#verdict [data-evidence=turn-started] time", "datetime"), iso(ev.turnStartedUnixMs));
    assert.equal(await page.getAttribute("#verdict [data-evidence=deadline] time", "datetime"), iso(ev.deadlineUnixMs));
    assert.equal(ev.deadlineUnixMs, deadlineUnixMs);
    const at = byCall ? "call" : "flag";
    assert.equal(await page.getAttribute(`#verdict [data-evidence=${at}] time`, "datetime"), iso(ev.atUnixMs));
    assert.match(await text(page, `#verdict [data-evidence=${at}]`), new RegExp(`\\(${seconds(ev.atUnixMs - ev.deadlineUnixMs)} past the deadline\\)`));
    const periods = ev.before.periodsLeft;
    assert.equal(await text(page, "#verdict [data-evidence=before]"),
      `${seconds(ev.before.remainingMs)} main time, ${periods} byoyomi ${periods === 1 ? "period" : "periods"} of ${unit} s`);
    assert.equal(await text(page, "#verdict [data-evidence=available]"), seconds(ev.availableMs));
    assert.equal(await text(page, "#verdict [data-evidence=elapsed]"), seconds(ev.elapsedMs));
    assert.equal(await text(page, "#verdict [data-evidence=charged]"), seconds(ev.chargedMs));
    // The clocks stop: Black's shows its time up, White's what it had left.
    assert.deepEqual(await clockOf(page, "black"), { running: false, phase: "out", ms: 0, periods: 0, time: "0:00.0", note: "time up" });
    assert.equal((await clockOf(page, "white")).running, false);
    await atBothSizes(page, "verdict-time-up");
  });
});

test("create says when it reopened a game, ids are whole, bad input is shown, and the operator view counts it all", async () => {
  await onPage("operator", async (page) => {
    const id = "a-long-client-chosen-game-id-for-the-console-test-1";
    await createGame(page, "jsa", "", id);
    assert.ok(await page.locator("#notice").isHidden());
    assert.equal(await page.inputValue("#game-id"), "", "the id field is cleared");
    await page.click("#nav-games");
    await createGame(page, "jsa", "", id);
    assert.match(await text(page, "#notice"), /already existed with these rules: it was reopened/);
    assert.equal(await text(page, `#games li[data-game='${id}'] a`), id);
    // A bad SFEN is refused with the arbiter's reason.
    await page.fill("#sfen", "not an sfen");
    await page.click("#create");
    await page.waitForSelector("#error:not([hidden])");
    assert.match(await text(page, "#error"), /invalid_argument/);
    await page.fill("#sfen", "");

    await page.click("#nav-operator");
    await page.waitForSelector("#op-verdict-table");
    await page.waitForFunction(() => document.querySelector("#op-errors table"));
    const live = Number(await text(page, "#op-live"));
    const ended = Number(await text(page, "#op-ended"));
    assert.ok(live >= 3 && ended >= 4, `live ${live}, ended ${ended}`);
    const verdicts = await text(page, "#op-verdict-table");
    for (const kind of ["checkmate", "declaration", "perpetual check", "repetition"]) assert.match(verdicts, new RegExp(kind));
    assert.match(await text(page, "#op-errors"), /MoveValidator\/CreateGame\s+INVALID_ARGUMENT/);
    assert.match(await text(page, "#op-aside"), /no event aside/);
    // Refreshed live: a new verdict shows without a click.
    const before = await text(page, "#operator-updated");
    await page.waitForFunction((b) => document.querySelector("#operator-updated").textContent !== b, before);
    await atBothSizes(page, "operator");
  });
});

// 200 ms at the p99 on an idle machine (issue 23), scaled as every wait is: on a busy machine the
// SubmitMove call alone takes longer than that, and the figure is measured and printed, not
// made a test of the machine's speed; what fails it is a page that polls or redraws slowly.
test("a move another client submits appears on the page within 200 ms at the p99, over 100 moves", async () => {
  await onPage("latency", async (page) => {
    const slowdown = patience();
    const id = await createGame(page, "online", "");
    // When each ply's row first appears, by the page's clock (epoch-based, as Node's).
    await page.evaluate(() => {
      window.seen = {};
      const body = document.querySelector("#moves tbody");
      const mark = () => {
        const now = performance.timeOrigin + performance.now();
        for (const row of body.children) window.seen[row.dataset.ply] ??= now;
      };
      new MutationObserver(mark).observe(body, { childList: true });
      mark();
    });
    // A deterministic walk through legal moves (the same every run), from another client.
    let seed = 12345;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    let sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
    // From the call's start to the row on the page; and, of that, the call itself.
    const latencies = [];
    const calls = [];
    for (let ply = 1; ply <= 100; ply++) {
      const legal = (await api.legalMoves({ sfen })).moves;
      const usi = legal[next() % legal.length];
      const sent = performance.timeOrigin + performance.now();
      const answer = await api.submitMove({ gameId: id, ply, usi });
      calls.push(performance.timeOrigin + performance.now() - sent);
      assert.ok(!answer.verdict, `ply ${ply} ${usi} ended the game: choose another walk`);
      sfen = answer.sfenAfter;
      await page.waitForFunction((p) => window.seen[p] !== undefined, String(ply), { polling: 10 });
      latencies.push((await page.evaluate((p) => window.seen[p], String(ply))) - sent);
    }
    const quantiles = (xs) => {
      const sorted = [...xs].sort((a, b) => a - b);
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
      return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] };
    };
    const shown = quantiles(latencies);
    const call = quantiles(calls);
    const summary = `moves from another client to the page, ${latencies.length} moves: ` +
      `p50 ${shown.p50.toFixed(1)} ms, p99 ${shown.p99.toFixed(1)} ms, max ${shown.max.toFixed(1)} ms ` +
      `(of which the SubmitMove call: p50 ${call.p50.toFixed(1)} ms, p99 ${call.p99.toFixed(1)} ms)`;
    // The busier of the machine at the start and at the end of the measure.
    const bound = 200 * Math.max(slowdown, patience());
    console.log(`${summary}; bound ${bound.toFixed(0)} ms (200 ms scaled by the load, ${os.loadavg()[0].toFixed(1)} now)`);
    assert.ok(shown.p99 <= bound, `p99 over ${bound.toFixed(0)} ms: ${summary}`);
  });
});

test("the page's own files: index.html and the icon are served, unknown paths are not pages", async () => {
  for (const [file, type] of [["", "text/html"], ["index.html", "text/html"], ["favicon.ico", "image/svg\\+xml"], ["favicon.svg", "image/svg\\+xml"]]) {
    const r = await fetch(server.url + file);
    assert.equal(r.status, 200, file);
    assert.match(r.headers.get("content-type"), new RegExp(type), file);
  }
});

test("with a bearer token configured, the page is refused without it and works with it", async () => {
  const secured = await startServer({ MOVE_VALIDATOR_AUTH_TOKEN: "console-test-token" });
  try {
    await onPage("token", async (page) => {
      await page.waitForSelector("#error:not([hidden])");
      assert.match(await text(page, "#error"), /unauthenticated: missing or wrong bearer token/);
      await page.fill("#token", "not-the-token");
      await page.click("#token-save");
      await page.waitForSelector("#error:not([hidden])");
      assert.match(await text(page, "#error"), /unauthenticated/);
      await page.fill("#token", "console-test-token");
      await page.click("#token-save");
      await page.waitForSelector("#error", { state: "hidden" });
      await createGame(page, "jsa", "");
      await play(page, "7g7f", 1);
      assert.match(await text(page, "#status"), /☖ White to move, ply 2/);
    }, { on: secured });
  } finally {
    await secured.stop();
  }
});
