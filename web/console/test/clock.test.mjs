// What the page's clocks show (src/clock.ts, bundled for Node by `npm test`): the running
// side's time split into main time and byoyomi periods from its deadline, the idle side's,
// the readings and the times typed into the form.

import { test } from "node:test";
import assert from "node:assert/strict";
import { allowanceText, clockText, exactText, idleFace, parseTime, runningFace, spanText } from "../.build/test/clock.mjs";

const byoyomi = { mainMs: 600_000, byoyomiMs: 30_000, periods: 3, incrementMs: 0 };
const suddenDeath = { mainMs: 180_000, byoyomiMs: 0, periods: 0, incrementMs: 0 };
const none = { mainMs: 0, byoyomiMs: 0, periods: 0, incrementMs: 0 };

test("the running side: main time first, then its periods, the last of them counting to the deadline", () => {
  // 3 periods of 30 s are the last 90 s before the deadline.
  assert.deepEqual(runningFace(90_001, byoyomi, 3), { phase: "main", ms: 1, periods: 3 });
  assert.deepEqual(runningFace(90_000, byoyomi, 3), { phase: "byoyomi", ms: 30_000, periods: 3 });
  assert.deepEqual(runningFace(60_000, byoyomi, 3), { phase: "byoyomi", ms: 30_000, periods: 2 });
  assert.deepEqual(runningFace(59_999, byoyomi, 3), { phase: "byoyomi", ms: 29_999, periods: 2 });
  assert.deepEqual(runningFace(1, byoyomi, 3), { phase: "byoyomi", ms: 1, periods: 1 });
  // At the deadline and after: nothing left, and the page waits for the arbiter's word.
  assert.deepEqual(runningFace(0, byoyomi, 3), { phase: "out", ms: 0, periods: 0 });
  assert.deepEqual(runningFace(-5, suddenDeath, 0), { phase: "out", ms: 0, periods: 0 });
  // A side with one period left has only the last 30 s as byoyomi.
  assert.deepEqual(runningFace(45_000, byoyomi, 1), { phase: "main", ms: 15_000, periods: 1 });
  assert.deepEqual(runningFace(12_345, suddenDeath, 0), { phase: "main", ms: 12_345, periods: 0 });
  assert.equal(runningFace(5_000, none, 0).phase, "none");
});

test("the idle side: what the arbiter left it; a whole period once its main time is gone", () => {
  assert.deepEqual(idleFace(123_456, 3, byoyomi), { phase: "main", ms: 123_456, periods: 3 });
  assert.deepEqual(idleFace(0, 2, byoyomi), { phase: "byoyomi", ms: 30_000, periods: 2 });
  // Periods mean nothing without a byoyomi.
  assert.deepEqual(idleFace(0, 1, suddenDeath), { phase: "main", ms: 0, periods: 0 });
  assert.equal(idleFace(0, 0, none).phase, "none");
});

test("readings: tenths in the last 10 seconds, truncated as a clock counts down", () => {
  assert.equal(clockText(9_999), "0:09.9");
  assert.equal(clockText(10_000), "0:10");
  assert.equal(clockText(599_999), "9:59");
  assert.equal(clockText(3_600_000), "1:00:00");
  assert.equal(clockText(0), "0:00.0");
  assert.equal(clockText(-1), "0:00.0");
  assert.equal(exactText(3_410), "3.410 s");
  assert.equal(exactText(62_345), "1:02.345");
  assert.equal(exactText(3_600_000), "1:00:00.000");
  assert.equal(exactText(-12), "−0.012 s");
  assert.equal(spanText(600_000), "10 min");
  assert.equal(spanText(5_400_000), "1 h 30 min");
  assert.equal(spanText(1_500), "1.5 s");
  assert.equal(allowanceText(byoyomi), "10 min, byoyomi 30 s × 3");
  assert.equal(allowanceText({ ...suddenDeath, incrementMs: 5_000 }), "3 min, +5 s a move");
  assert.equal(allowanceText(none), "no limit");
});

test("times typed into the form: seconds, m:ss, h:mm:ss, to the millisecond; anything else named", () => {
  assert.equal(parseTime("main time", ""), null);
  assert.equal(parseTime("main time", " 30 "), 30_000);
  assert.equal(parseTime("main time", "2.5"), 2_500);
  assert.equal(parseTime("main time", "10:00"), 600_000);
  assert.equal(parseTime("main time", "1:30:00"), 5_400_000);
  assert.equal(parseTime("main time", "0:01.25"), 1_250);
  for (const bad of ["abc", "1:60", "1:2:3:4", "1.2345", "-3", "1:", ":30"]) {
    assert.throws(() => parseTime("byoyomi", bad), new RegExp(`^Error: byoyomi: "${bad.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}" is not a time`), bad);
  }
});
