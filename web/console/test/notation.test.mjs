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
