// The page's KIF notation and position tracking (src/notation.ts, bundled for Node by
// `npm test`), against moves whose notation is known.

import { test } from "node:test";
import assert from "node:assert/strict";
import { kifMoves, kifMove, parseSfen, play, positions, squareName, toSfen } from "../.build/test/notation.mjs";

const START = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";

test("an opening in KIF: pawns, a bishop exchange with 成 and 同　, a drop with 打", () => {
  const moves = ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e", "B*6e"];
  assert.deepEqual(kifMoves(START, moves), [
    "▲７六歩(77)", "△３四歩(33)", "▲２二角成(88)", "△同　銀(31)", "▲４五角打", "△６五角打",
  ]);
});

test("不成 only where promotion was open and declined", () => {
  const silver = "4k4/9/9/4S4/9/9/9/9/4K4 b - 1";
  assert.equal(kifMove(parseSfen(silver), "5d5c"), "▲５三銀不成(54)");
  assert.equal(kifMove(parseSfen(silver), "5d5c+"), "▲５三銀成(54)");
  assert.equal(kifMove(parseSfen(silver), "5d4e"), "▲４五銀(54)");
  // Out of the zone counts too: a silver leaving it may promote.
  assert.equal(kifMove(parseSfen("4k4/9/4S4/9/9/9/9/9/4K4 b - 1"), "5c5d"), "▲５四銀不成(53)");
  // White's zone is ranks 7 to 9; a gold and a king never promote.
  assert.equal(kifMove(parseSfen("4k4/9/9/9/9/4s4/9/9/4K4 w - 1"), "5f5g"), "△５七銀不成(56)");
  assert.equal(kifMove(parseSfen("4k4/9/9/9/9/4g4/9/9/4K4 w - 1"), "5f5g"), "△５七金(56)");
  assert.equal(kifMove(parseSfen("4k4/9/9/9/9/9/9/9/4K4 b - 1"), "5i5h"), "▲５八玉(59)");
});

test("promoted pieces move under their own names", () => {
  assert.equal(kifMove(parseSfen("4k4/9/9/9/9/9/9/9/+B3K4 b - 1"), "9i5e"), "▲５五馬(99)");
  assert.equal(kifMove(parseSfen("4k4/9/9/9/+s8/9/9/9/4K4 w - 1"), "9e9f"), "△９六成銀(95)");
  assert.equal(kifMove(parseSfen("4k4/9/9/9/9/9/9/+R8/4K4 b - 1"), "9h9a"), "▲９一龍(98)");
  assert.equal(kifMove(parseSfen("4k4/9/9/9/9/9/9/+L8/4K4 b - 1"), "9h9g"), "▲９七成香(98)");
});

test("moves played on the SFEN: captures go to the hand unpromoted, drops leave it", () => {
  const after = positions(START, ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e"]);
  assert.equal(toSfen(after[1]), "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2");
  assert.equal(toSfen(after[4]), "lnsgkg1nl/1r5s1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL b Bb 5");
  assert.equal(toSfen(after[5]), "lnsgkg1nl/1r5s1/pppppp1pp/6p2/5B3/2P6/PP1PPPPPP/7R1/LNSGKGSNL w b 6");
  const hands = "4k4/9/9/9/9/9/9/9/4K4 b 2P10p 1";
  assert.equal(toSfen(parseSfen(hands)), hands);
  assert.equal(toSfen(play(parseSfen(hands), "P*5e")), "4k4/9/9/9/4P4/9/9/9/4K4 w P10p 2");
});

test("squares as people write them", () => {
  assert.equal(squareName("7f"), "７六");
  assert.equal(squareName("1a"), "１一");
  assert.equal(squareName("9i"), "９九");
});

// Against the arbiter's own KIF writer (crates/shogi-records), over every record of the shared
// corpus: the same moves named the same way (the Rust writer leaves 不成 to KI2, so it is set
// aside here), whatever the openings, captures, drops and promotions.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

test("every move of the shared corpus as the arbiter's KIF writer names it", () => {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
  const binary = process.env.SHOGI_ARBITER_BIN ?? path.join(root, "target/debug/shogi-arbiter");
  const corpus = path.join(root, "../shared/corpus/records");
  assert.ok(existsSync(binary), `no shogi-arbiter binary at ${binary}: build it (make test-browser does) or set SHOGI_ARBITER_BIN`);
  assert.ok(existsSync(corpus), `no corpus at ${corpus}: the tests read ../shared as CI has it`);
  const dir = mkdtempSync(path.join(tmpdir(), "kif-"));
  try {
    // A record that cannot be replayed is reported and left out; the others are written.
    for (const to of ["usi", "kif"]) {
      const r = spawnSync(binary, ["convert", "--to", to, "--out-dir", path.join(dir, to), corpus], { stdio: "ignore" });
      assert.ok(existsSync(path.join(dir, to)), `convert --to ${to} wrote nothing (exit ${r.status})`);
    }
    const stem = (f) => f.replace(/\.[^.]+$/, "");
    const kifs = new Map(readdirSync(path.join(dir, "kif")).map((f) => [stem(f), f]));
    let records = 0;
    let moves = 0;
    for (const f of readdirSync(path.join(dir, "usi"))) {
      const kifFile = kifs.get(stem(f));
      if (!kifFile) continue;
      const usi = readFileSync(path.join(dir, "usi", f), "utf8").trim();
      const m = /^position (startpos|sfen (\S+ \S+ \S+ \S+))(?: moves (.*))?$/.exec(usi);
      assert.ok(m, `${f}: ${usi.slice(0, 80)}`);
      const start = m[1] === "startpos" ? START : m[2];
      // Moves only: a declaration (`win`) ends the list.
      const tokens = m[3] ? m[3].split(" ") : [];
      const end = tokens.findIndex((t) => !/^([1-9][a-i][1-9][a-i]\+?|[PLNSGBR]\*[1-9][a-i])$/.test(t));
      const played = end < 0 ? tokens : tokens.slice(0, end);
      // The main line's moves: `   1 ７六歩(77)   ( 0:01/00:00:01)`, up to the first variation.
      const written = [];
      for (const line of readFileSync(path.join(dir, "kif", kifFile), "utf8").split("\n")) {
        if (line.startsWith("変化")) break;
        const w = /^\s*(\d+) (.+?)(?:\s+\(\s*\d.*)?$/.exec(line);
        if (w && Number(w[1]) === written.length + 1) written.push(w[2].trim());
      }
      const ours = kifMoves(start, played).map((k) => k.slice(1).replace("不成", ""));
      assert.deepEqual(ours, written.slice(0, ours.length), f);
      records += 1;
      moves += ours.length;
    }
    console.log(`KIF notation: ${records} records, ${moves} moves named as the arbiter's KIF writer names them`);
    assert.ok(records >= 100 && moves >= 5000, `only ${records} records, ${moves} moves compared`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
