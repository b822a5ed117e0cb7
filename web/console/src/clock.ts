// The arbiter's clock as a player reads it (docs/rules.md section 9): what each side's clock
// shows at an instant, the time control in words, and the times the page takes and prints.
// The page only displays: the arbiter sends each side's time, the running side and its
// deadline, and it alone decides a time-up. No DOM: the npm test runs it in Node.

/** One side's time control, in milliseconds, as the game's effective ruleset gives it. */
export interface Allowance {
  mainMs: number;
  byoyomiMs: number;
  periods: number;
  incrementMs: number;
}

/** A side whose main time, byoyomi and increment are all 0 has no limit (section 9). */
export const unlimited = (a: Allowance): boolean => a.mainMs === 0 && a.byoyomiMs === 0 && a.incrementMs === 0;

/**
 * What one clock shows: `main` time left (`ms`) with `periods` byoyomi periods behind it,
 * `byoyomi` with `ms` left in the current period and `periods` counting it, `out` at or past
 * the deadline, `none` for a side without a limit.
 */
export interface Face {
  phase: "main" | "byoyomi" | "out" | "none";
  ms: number;
  periods: number;
}

/**
 * The running side's clock: `leftMs` until its deadline, which is its turn's main time (with
 * the increment) and then its `periodsAtStart` byoyomi periods, so the periods are the last
 * `byoyomiMs × periods` before the deadline.
 */
export function runningFace(leftMs: number, a: Allowance, periodsAtStart: number): Face {
  if (unlimited(a)) return { phase: "none", ms: 0, periods: 0 };
  if (leftMs <= 0) return { phase: "out", ms: 0, periods: 0 };
  const periods = a.byoyomiMs > 0 ? periodsAtStart : 0;
  const byoyomi = a.byoyomiMs * periods;
  if (leftMs > byoyomi) return { phase: "main", ms: leftMs - byoyomi, periods };
  const now = Math.ceil(leftMs / a.byoyomiMs);
  return { phase: "byoyomi", ms: leftMs - (now - 1) * a.byoyomiMs, periods: now };
}

/** A clock that does not run: its main time left, or a whole period once that is gone. */
export function idleFace(remainingMs: number, periodsLeft: number, a: Allowance): Face {
  if (unlimited(a)) return { phase: "none", ms: 0, periods: 0 };
  const periods = a.byoyomiMs > 0 ? periodsLeft : 0;
  if (remainingMs > 0 || periods === 0) return { phase: "main", ms: remainingMs, periods };
  return { phase: "byoyomi", ms: a.byoyomiMs, periods };
}

const pad = (n: number, width = 2): string => String(n).padStart(width, "0");

/**
 * A clock's reading: `h:mm:ss` from an hour, `m:ss` from 10 seconds, `0:0s.t` below (tenths,
 * as clocks show the last seconds). Truncated, as a clock counts down.
 */
export function clockText(ms: number): string {
  const t = Math.max(0, Math.floor(ms));
  const s = Math.floor(t / 1000);
  if (s >= 3600) return `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
  if (s >= 10) return `${Math.floor(s / 60)}:${pad(s % 60)}`;
  return `0:0${s}.${Math.floor((t % 1000) / 100)}`;
}

/** A span of a time control in words: `10 min`, `1 h 30 min`, `30 s`, `1.5 s`. */
export function spanText(ms: number): string {
  if (ms === 0) return "0 s";
  const h = Math.floor(ms / 3_600_000);
  const min = Math.floor(ms / 60_000) % 60;
  const s = (ms % 60_000) / 1000;
  const parts: string[] = [];
  if (h) parts.push(`${h} h`);
  if (min) parts.push(`${min} min`);
  if (s) parts.push(`${Number.isInteger(s) ? s : s.toFixed(3).replace(/0+$/, "")} s`);
  return parts.join(" ");
}

/** An amount of the evidence, to the millisecond: `3.410 s`, `1:02.345`, `1:00:00.000`. */
export function exactText(ms: number): string {
  const sign = ms < 0 ? "−" : "";
  const t = Math.abs(Math.round(ms));
  const s = Math.floor(t / 1000);
  const frac = pad(t % 1000, 3);
  if (s < 60) return `${sign}${s}.${frac} s`;
  const head = s >= 3600 ? `${Math.floor(s / 3600)}:${pad(Math.floor(s / 60) % 60)}` : `${Math.floor(s / 60)}`;
  return `${sign}${head}:${pad(s % 60)}.${frac}`;
}

/** A side's time control in words: `3 s, byoyomi 1 s × 2, +5 s a move`, or `no limit`. */
export function allowanceText(a: Allowance): string {
  if (unlimited(a)) return "no limit";
  const parts: string[] = [];
  if (a.mainMs) parts.push(spanText(a.mainMs));
  if (a.byoyomiMs) parts.push(`byoyomi ${spanText(a.byoyomiMs)}${a.periods > 1 ? ` × ${a.periods}` : ""}`);
  if (a.incrementMs) parts.push(`+${spanText(a.incrementMs)} a move`);
  return parts.join(", ");
}

/** An instant of the arbiter's time (Unix ms) as the local time of day, to the millisecond. */
export function wallText(unixMs: number): string {
  const d = new Date(unixMs);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/**
 * A time typed into the form: seconds (`30`, `2.5`), `m:ss` or `h:mm:ss`, to the millisecond;
 * `null` for an empty field. Anything else is an error that names the field.
 */
export function parseTime(field: string, text: string): number | null {
  const t = text.trim();
  if (t === "") return null;
  const parts = t.split(":");
  const bad = new Error(`${field}: "${t}" is not a time (seconds, m:ss or h:mm:ss)`);
  if (parts.length > 3) throw bad;
  const last = parts[parts.length - 1];
  if (!/^\d+(\.\d{1,3})?$/.test(last) || parts.slice(0, -1).some((p) => !/^\d+$/.test(p))) throw bad;
  // After the first part, minutes and seconds stay under 60.
  if (parts.length > 1 && parts.slice(1).some((p) => Number(p) >= 60)) throw bad;
  const [wholeSeconds, fraction = ""] = last.split(".");
  let ms = Number(wholeSeconds) * 1000 + Number(fraction.padEnd(3, "0"));
  for (const [i, p] of parts.slice(0, -1).reverse().entries()) ms += Number(p) * (i === 0 ? 60_000 : 3_600_000);
  return ms;
}
