// The console in a real browser: Debian's Chromium, headless, driven by playwright-core,
// against a real `shogi-arbiter serve` (embedded bus) on a free port. Run by `make
// test-browser` (which builds the binary first) or `npm test` in web/console/.
//
// Screenshots of each step, and of any step that fails, go to target/browser-test/ (or
// $BROWSER_TEST_OUT).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createInterface } from "node:readline";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const binary = process.env.SHOGI_ARBITER_BIN ?? path.join(root, "target/debug/shogi-arbiter");
const browserPath = process.env.CHROMIUM ?? "/usr/bin/chromium";
const out = process.env.BROWSER_TEST_OUT ?? path.join(root, "target/browser-test");
// Generous for a loaded 2-core machine; a wait ends as soon as the page shows what it waits for.
const TIMEOUT = 20_000;

// The README's perpetual-check game: Black's rook checks on every move, the position after
// ply 1 occurs again at plies 5, 9 and 13.
const PERPETUAL_SFEN = "6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1";
const PERPETUAL_MOVES = "5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h".split(" ");
// ../shared/rules/declaration.tsv, lishogi-black-yes: Black has 28 points and 12 pieces in
// camp, enough under the 27-point rule (Black needs 28).
const IMPASSE_SFEN = "2SGS4/+B+RGKGLLRB/3G5/9/7pp/8k/9/9/9 b - 1";

let browser;

// One hook: when a prerequisite is missing, no browser is started that would keep the run alive.
before(async () => {
  assert.ok(existsSync(binary), `no shogi-arbiter binary at ${binary}: build it with \`cargo build -p shogi-arbiter\` (make test-browser does) or set SHOGI_ARBITER_BIN`);
  assert.ok(existsSync(browserPath), `no Chromium at ${browserPath}: install Debian's chromium (make setup does) or set CHROMIUM`);
  mkdirSync(out, { recursive: true });
  // As root (CI), Chromium runs only without its sandbox.
  browser = await chromium.launch({ executablePath: browserPath, headless: true, args: ["--no-sandbox"] });
});

after(async () => {
  await browser?.close();
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

/** Runs `steps` on a new page of `server`; a failure leaves a screenshot named after `name`. */
async function onPage(name, server, steps) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(TIMEOUT);
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  try {
    await page.goto(server.url);
    await page.waitForSelector("body[data-ready=true]");
    await steps(page);
  } catch (e) {
    await page.screenshot({ path: path.join(out, `${name}-failure.png`), fullPage: true }).catch(() => {});
    e.message += `\n${problems.join("\n")}\nserver log:\n${server.log().slice(-4000)}`;
    throw e;
  } finally {
    await page.close();
  }
}

async function createGame(page, preset, sfen) {
  await page.selectOption("#preset", preset);
  await page.fill("#sfen", sfen);
  await page.click("#create");
  await page.waitForSelector("#game:not([hidden]) [data-square='5e']");
  await page.waitForSelector("#moves tr[data-ply='0']");
}

/** Plays `usi` (a board move) by clicking its two squares, then waits for its row. */
async function play(page, usi, ply) {
  await page.click(`[data-square='${usi.slice(0, 2)}']`);
  await page.waitForSelector(`[data-square='${usi.slice(2, 4)}'].target`);
  await page.click(`[data-square='${usi.slice(2, 4)}']`);
  await page.waitForSelector(`#moves tr[data-ply='${ply}']`);
}

const text = (page, selector) => page.locator(selector).innerText();

test("plays the README's perpetual-check game by clicks and shows the verdict with its evidence", async () => {
  const server = await startServer();
  try {
    await onPage("perpetual-check", server, async (page) => {
      await createGame(page, "online", PERPETUAL_SFEN);
      // The arbiter's legal destinations of the rook on 5h are highlighted when it is clicked.
      await page.click("[data-square='5h']");
      const targets = await page.locator(".sq.target").evaluateAll((els) => els.map((e) => e.dataset.square).sort());
      assert.ok(targets.includes("3h") && targets.includes("5a") && !targets.includes("5h"), `targets ${targets}`);
      await page.click("[data-square='5h']"); // unselect
      for (const [i, usi] of PERPETUAL_MOVES.slice(0, 12).entries()) await play(page, usi, i + 1);
      // Before the last move: ply 9 was the third occurrence, and Black is at risk.
      await page.waitForSelector("#warnings li[data-warning=thirdOccurrence]");
      await page.waitForSelector("#warnings li[data-warning=perpetualCheckRisk]");
      assert.match(await text(page, "#warnings"), /perpetual-check risk: Black has checked on every move since ply 1/);
      assert.equal(await text(page, "#moves tr[data-ply='9'] [data-field=occurrence]"), "3");
      assert.match(await text(page, "#streaks"), /Black: 6 checks in a row/);
      await page.screenshot({ path: path.join(out, "perpetual-check-warning.png"), fullPage: true });
      await play(page, PERPETUAL_MOVES[12], 13);
      await page.waitForSelector("#verdict:not([hidden])");
      const verdict = await text(page, "#verdict");
      assert.match(verdict, /perpetual_check: White wins, at ply 13/);
      assert.match(verdict, /Occurrence plies: 1, 5, 9, 13/);
      assert.match(verdict, /Checker \(loses\): Black/);
      assert.match(verdict, /Check plies: 3, 5, 7, 9, 11, 13/);
      assert.equal(await text(page, "#moves tr[data-ply='13'] [data-field=occurrence]"), "4");
      assert.match(await text(page, "#status"), /Game over after 13 plies/);
      await page.screenshot({ path: path.join(out, "perpetual-check-verdict.png"), fullPage: true });
      // The list shows the game as ended.
      await page.click("#games-refresh");
      await page.waitForSelector("#games li .ended");
    });
  } finally {
    await server.stop();
  }
});

test("declares: refused where it does not qualify, and in a 27-point impasse position the report first, then the win with its points", async () => {
  const server = await startServer();
  try {
    await onPage("declaration", server, async (page) => {
      // Under `online` a declaration that does not qualify is refused and play goes on.
      await createGame(page, "online", "");
      await page.click("#declare");
      await page.waitForSelector("#declare-result [data-code]");
      assert.match(await text(page, "#declare-report"), /Black declaring under points27: refused/);
      assert.match(await text(page, "#declare-report"), /28 to win, 28 short/);
      assert.equal(await text(page, "#declare-report [data-condition=king_in_camp] td:last-child"), "fails");
      assert.match(await text(page, "#declare-result"), /Refused: Black's declaration does not qualify; play goes on/);
      assert.match(await text(page, "#status"), /Ply 0; Black to move/);
      assert.ok(await page.locator("#verdict").isHidden());
      await page.screenshot({ path: path.join(out, "declaration-refused.png"), fullPage: true });

      await createGame(page, "amateur", IMPASSE_SFEN);
      assert.ok(await page.locator("#declaration").isHidden(), "a new game shows no old report");
      // Both sides' points are shown before anyone declares.
      const black = await text(page, "#impasse .report[data-declarer=black]");
      assert.match(black, /Points: 28 \(in camp 28 \+ in hand 0 \+ credit 0\); 28 to win, 0 short/);
      assert.match(black, /Pieces in camp: 12; king in camp: yes/);
      await page.click("#declare");
      await page.waitForSelector("#declare-result [data-code]");
      const report = await text(page, "#declare-report");
      assert.match(report, /Black declaring under points27: win/);
      assert.match(report, /Points: 28/);
      for (const condition of ["declarers_turn", "king_in_camp", "pieces_in_camp", "not_in_check", "has_time", "points"]) {
        assert.equal(await text(page, `#declare-report [data-condition=${condition}] td:last-child`), "holds", condition);
      }
      const result = await text(page, "#declare-result");
      assert.match(result, /declaration: Black wins, at ply 0/);
      assert.match(result, /Points: 28 \(in camp 28 \+ in hand 0 \+ credit 0\); 28 to win, 0 short/);
      await page.waitForSelector("#verdict:not([hidden])");
      assert.match(await text(page, "#verdict"), /declaration: Black wins/);
      await page.screenshot({ path: path.join(out, "declaration-win.png"), fullPage: true });
    });
  } finally {
    await server.stop();
  }
});

test("asks before a move that may promote, and plays the choice", async () => {
  const server = await startServer();
  try {
    await onPage("promotion", server, async (page) => {
      await createGame(page, "amateur", "k8/9/9/7P1/9/9/9/9/K8 b - 1");
      await page.click("[data-square='2d']");
      await page.click("[data-square='2c']");
      await page.waitForSelector("#promotion:not([hidden])");
      await page.screenshot({ path: path.join(out, "promotion-asked.png"), fullPage: true });
      await page.click("#promote-yes");
      await page.waitForSelector("#moves tr[data-ply='1']");
      assert.match(await text(page, "#moves tr[data-ply='1']"), /2d2c\+/);
      assert.equal(await text(page, "[data-square='2c']"), "と");
    });
  } finally {
    await server.stop();
  }
});

test("with a bearer token configured, the page is refused without it and works with it", async () => {
  const server = await startServer({ MOVE_VALIDATOR_AUTH_TOKEN: "console-test-token" });
  try {
    await onPage("token", server, async (page) => {
      await page.waitForSelector("#error:not([hidden])");
      assert.match(await text(page, "#error"), /unauthenticated: missing or wrong bearer token/);
      await page.fill("#token", "not-the-token");
      await page.click("#token-save");
      await page.waitForSelector("#error:not([hidden])");
      assert.match(await text(page, "#error"), /unauthenticated/);
      await page.screenshot({ path: path.join(out, "token-refused.png"), fullPage: true });
      await page.fill("#token", "console-test-token");
      await page.click("#token-save");
      await page.waitForSelector("#error", { state: "hidden" });
      await createGame(page, "jsa", "");
      await play(page, "7g7f", 1);
      assert.match(await text(page, "#status"), /Ply 1; White to move/);
      await page.screenshot({ path: path.join(out, "token-accepted.png"), fullPage: true });
    });
  } finally {
    await server.stop();
  }
});
