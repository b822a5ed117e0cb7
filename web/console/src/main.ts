// The shogi-arbiter console: a page over the MoveValidator service (and, for operators, the
// Operator service), called through gRPC-Web with the clients generated from proto/ (src/gen).
// The arbiter is the authority: legal moves, counts, reports and verdicts all come from it; the
// page draws the positions of the moves it accepted, and names them as people write them.

import { createClient, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import {
  MoveValidator,
  ClockRounding,
  Color,
  MoveOutcome,
  type AnalyzeGameResponse,
  type DeclarationReport,
  type GameSummary,
  type RulesetOverridesSchema,
  type TimeUpEvidence,
  type Verdict,
  type Warning,
} from "./gen/shogi/v1/arbiter_pb";
import { Operator } from "./gen/shogi/v1/operator_pb";
import {
  FILES,
  RANKS,
  HAND_ORDER,
  NAMES,
  PROMOTED_NAMES,
  type Position,
  type Side,
  fileLabel,
  kifMove,
  moveSquares,
  parseSfen,
  pieceChar,
  pieceLabel,
  play,
  rankLabel,
  squareName,
} from "./notation";
import { drawOverview } from "./operator";
import {
  type Allowance,
  type Face,
  allowanceText,
  clockText,
  exactText,
  idleFace,
  parseTime,
  runningFace,
  spanText,
  wallText,
} from "./clock";
import { h } from "./dom";

const TOKEN_KEY = "shogi-arbiter-token";

type RulesetOverridesInit = MessageInitShape<typeof RulesetOverridesSchema>;

// The bearer token, when one is set, goes with every call, as any client's would.
const auth: Interceptor = (next) => (req) => {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) req.header.set("authorization", `Bearer ${token}`);
  return next(req);
};

const transport = createGrpcWebTransport({ baseUrl: location.origin, interceptors: [auth] });
const client = createClient(MoveValidator, transport);
const operator = createClient(Operator, transport);

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`no element #${id}`);
  return el as T;
};


// ---- state ----

interface Selection {
  from?: string; // a square, "7g"
  drop?: string; // a piece letter in hand, "P"
}

let gameId: string | null = null;
let analysis: AnalyzeGameResponse | null = null;
/** Every position of the open game, from its start: `line[ply]`. */
let line: Position[] = [];
let kif: string[] = []; // the moves in KIF, `kif[ply - 1]`
let legal: string[] = [];
let legalFor = ""; // the SFEN `legal` is for
let selection: Selection = {};
let pending: string[] = []; // promotion choices waiting for an answer
let viewPly: number | null = null; // the ply shown; null: the current one
let showCamp = false; // the declaration's pieces in camp highlighted
let focusSquare = "5e";
let refusedAt: { ply: number; text: string } | null = null;
let watch: AbortController | null = null;
const streamWarnings = new Map<string, Warning>();
// The comments the movers sent with their moves (an engine's evaluation and line), by ply, as
// WatchGame brings them: shown as text, never as markup.
const comments = new Map<number, string>();
/** When a move event arrived before the clock it started: the clocks show that instant. */
let clockAt: number | null = null;
/** The deadline the arbiter was last asked about when it passed (`game:deadline`). */
let askedAt = "";
let flipped = localStorage.getItem("shogi-arbiter-flip") === "1";
let usiNotation = localStorage.getItem("shogi-arbiter-usi") === "1";

// ---- errors and notices ----

function showError(e: unknown): void {
  const box = $("error");
  if (e === null) {
    box.hidden = true;
    box.textContent = "";
    return;
  }
  const text =
    e instanceof ConnectError ? `${codeName(e.code)}: ${e.rawMessage}` : e instanceof Error ? e.message : String(e);
  box.textContent = text;
  box.hidden = false;
}

function notice(text: string | null): void {
  const box = $("notice");
  box.textContent = text ?? "";
  box.hidden = !text;
}

function codeName(code: number): string {
  const names = [
    "ok", "canceled", "unknown", "invalid_argument", "deadline_exceeded", "not_found",
    "already_exists", "permission_denied", "resource_exhausted", "failed_precondition",
    "aborted", "out_of_range", "unimplemented", "internal", "unavailable", "data_loss",
    "unauthenticated",
  ];
  return names[code] ?? `code ${code}`;
}

async function guarded(work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (e) {
    if (e instanceof ConnectError && e.code === 1) return; // our own abort
    showError(e);
  }
}

// ---- words for the arbiter's values ----

const sideName = (c: Color): string => (c === Color.BLACK ? "Black" : c === Color.WHITE ? "White" : "none");
const sideMark = (c: Color): string => (c === Color.BLACK ? "☗" : "☖");

const VERDICT_NAMES: Record<string, string> = {
  checkmate: "Checkmate (詰み)",
  repetition: "Repetition (千日手)",
  perpetual_check: "Perpetual check (連続王手の千日手)",
  declaration: "Declaration (入玉宣言)",
  illegal_move: "Illegal move (反則)",
  try_rule: "Try rule",
  max_moves: "Move limit",
  resignation: "Resignation (投了)",
  timeout: "Time out (切れ負け)",
  abort: "Aborted",
  agreement: "Jishogi by agreement (持将棋)",
};

const CONDITIONS: Record<string, string> = {
  declarers_turn: "the declarer's turn",
  game_not_over: "the game is not over",
  king_in_camp: "king in the camp",
  pieces_in_camp: "10 pieces in the camp",
  not_in_check: "not in check",
  has_time: "time left on the clock",
  before_move_cap: "before the move limit",
  points: "enough points",
};

const RULES: Record<string, string> = { points27: "27-point rule", jsa24: "24-point rule (JSA)" };

/** A button that shows the position after `ply`. */
function plyLink(ply: number): HTMLElement {
  const b = h("button", { type: "button", class: "ply-link", "data-goto-ply": String(ply) }, String(ply));
  b.addEventListener("click", () => goTo(ply));
  return b;
}

// The plies as links, `end` (a full stop) kept on the line of the last one.
function plyLinks(plies: number[], end = ""): (Node | string)[] {
  const out: (Node | string)[] = [];
  plies.forEach((p, i) => {
    if (i) out.push(" ");
    out.push(i === plies.length - 1 && end ? h("span", { class: "nowrap" }, plyLink(p), end) : plyLink(p));
  });
  return out;
}

function moveText(ply: number): string {
  const usi = analysis?.game?.moves[ply - 1] ?? "";
  return usiNotation ? usi : kif[ply - 1] ?? usi;
}

function verdictView(v: Verdict): HTMLElement[] {
  const who = v.winner === Color.UNSPECIFIED ? "no winner" : `${sideMark(v.winner)} ${sideName(v.winner)} wins`;
  const ordinary = v.ordinaryResult === 1 ? " (draw)" : v.ordinaryResult === 2 ? " (replay)" : "";
  const out: HTMLElement[] = [
    h("h3", { id: "verdict-heading" }, "Game over"),
    h("p", { class: "headline", "data-code": v.codeName },
      h("span", { class: "result" }, `${who}${ordinary}`), " — ", VERDICT_NAMES[v.codeName] ?? v.codeName,
      ", at ply ", plyLink(v.ply)),
  ];
  const line = (attrs: Record<string, string>, ...children: (Node | string)[]) => out.push(h("p", attrs, ...children));
  const ev = v.evidence;
  switch (ev.case) {
    case "perpetualCheck":
      line({ "data-evidence": "plies" }, "The same position after plies ", ...plyLinks(ev.value.plies, "."));
      line({ "data-evidence": "check-plies" }, `${sideName(ev.value.checker)} checked on every move: plies `,
        ...plyLinks(ev.value.checkPlies, "."));
      line({ "data-evidence": "checker" }, `The checker, ${sideName(ev.value.checker)}, loses.`);
      break;
    case "repetition":
      line({ "data-evidence": "plies" }, "The same position after plies ", ...plyLinks(ev.value.plies, "."));
      if (ev.value.mutualCheck) line({}, "Both sides checked on every move (judged as an ordinary repetition).");
      break;
    case "declaration":
      line({ "data-evidence": "declaration" }, `${sideName(ev.value.declarer)} declared with ${ev.value.points} points ` +
        `(${ev.value.pointsToWin} needed) and ${ev.value.piecesInCamp} pieces in the camp: the report is below.`);
      break;
    case "checkmate":
      if (ev.value.matingPly > 0) {
        line({ "data-evidence": "mate" }, "Mated by ", h("span", { class: "move" }, moveText(ev.value.matingPly)),
          " at ply ", plyLink(ev.value.matingPly), ".");
      } else {
        line({ "data-evidence": "mate" }, "The game started in a mated position.");
      }
      break;
    case "illegalMove":
      line({ "data-evidence": "illegal" }, `Illegal move ${ev.value.usi}.`);
      break;
    case "tryRule":
      line({}, `Try: ${ev.value.usi}.`);
      break;
    case "maxMoves":
      line({}, `Limit: ${ev.value.cap} plies${ev.value.extendedByChecks ? ", extended by checks" : ""}.`);
      break;
    case "reported":
      if (ev.value.note) line({}, ev.value.note);
      break;
    case "timeUp":
      out.push(timeUpView(v, ev.value));
      break;
    case "abandoned":
      line({}, `Nobody played for ${Math.round(Number(ev.value.limitMs) / 1000)} s (the abandon limit).`);
      break;
  }
  return out;
}

/** An instant of the arbiter's time, as the time of day (the whole date on hover). */
function instant(unixMs: bigint | number): HTMLElement {
  const ms = Number(unixMs);
  const iso = new Date(ms).toISOString();
  return h("time", { datetime: iso, title: iso }, wallText(ms));
}

/**
 * A time-up's evidence as the arbiter judged it: the turn, its deadline, the call that came
 * late (or the flag of a silent side), what the side had and what the turn was charged.
 */
function timeUpView(v: Verdict, t: TimeUpEvidence): HTMLElement {
  const deadline = Number(t.deadlineUnixMs);
  const at = Number(t.atUnixMs);
  // A call that ended the game is recorded with its receipt time; a flag has none.
  const byCall = v.receivedUnixMs !== 0n && v.receivedUnixMs === t.atUnixMs;
  const late = at - deadline;
  const a = allowance(t.side);
  const before = t.before;
  const held = [`${exactText(Number(before?.remainingMs ?? 0n))} main time`];
  if (a.byoyomiMs) {
    const n = before?.periodsLeft ?? 0;
    held.push(`${n} byoyomi ${n === 1 ? "period" : "periods"} of ${spanText(a.byoyomiMs)}`);
  }
  if (a.incrementMs) held.push(`+${spanText(a.incrementMs)} increment`);
  const past = ` (${exactText(late)} past the deadline)`;
  const rows: [string, string, (Node | string)[]][] = [
    ["side", "Out of time", [`${sideMark(t.side)} ${sideName(t.side)}`]],
    ["turn-started", "Turn started", [instant(t.turnStartedUnixMs)]],
    ["deadline", "Deadline", [instant(deadline)]],
    byCall ? ["call", "Late call", [instant(at), past]] : ["flag", "Flag fell", [instant(at), past]],
    ["before", "Clock at start", [held.join(", ")]],
    ["available", "Available", [exactText(Number(t.availableMs))]],
    ["elapsed", "Used", [exactText(Number(t.elapsedMs))]],
    ["charged", "Charged", [exactText(Number(t.chargedMs))]],
  ];
  if (t.graceMs) rows.push(["grace", "Lag allowance", [exactText(Number(t.graceMs))]]);
  return h("dl", { class: "evidence-table", "data-evidence": "time-up" },
    ...rows.flatMap(([key, label, value]) => [h("dt", {}, label), h("dd", { "data-evidence": key }, ...value)]));
}

/** The calculator's report; `live`: what declaring now would give. */
function reportView(r: DeclarationReport, live: boolean): HTMLElement {
  const rule = RULES[r.rule] ?? r.rule;
  const who = `${sideMark(r.declarer)} ${sideName(r.declarer)}`;
  const outcome = h("strong", { "data-outcome": r.outcome }, r.outcome);
  const head = live
    ? h("p", { "data-field": "outcome" }, `If ${who} declared now (${rule}): `, outcome)
    : h("p", { "data-field": "outcome" }, `${who} declared (${rule}): `, outcome);
  const conditions = r.conditions.map((c) => {
    const label = c.name === "pieces_in_camp" ? `${CONDITIONS[c.name]} (${r.piecesInCamp})` : CONDITIONS[c.name] ?? c.name;
    return h("li", { "data-condition": c.name, "data-met": String(c.met), class: c.met ? "ok" : "no" },
      h("span", { "aria-hidden": "true" }, c.met ? "✓ " : "✗ "), h("span", { class: "sr-only" }, c.met ? "holds: " : "fails: "), label);
  });
  return h("div", { class: "report", "data-declarer": sideName(r.declarer).toLowerCase() },
    head,
    h("p", { "data-field": "points" },
      `Points: ${r.points} of ${r.pointsToWin} needed (in camp ${r.pointsInCamp}, in hand ${r.pointsInHand}` +
        `${r.credit ? `, credit ${r.credit}` : ""})${r.pointsMissing ? `; ${r.pointsMissing} short` : ""}.`),
    h("ul", { class: "conditions" }, ...conditions));
}

function warningView(w: Warning, current: boolean): HTMLElement {
  const li = h("li", { "data-warning": w.kind.case ?? "", class: current ? "current" : "earlier" });
  li.append("Ply ", plyLink(w.ply), ": ");
  switch (w.kind.case) {
    case "thirdOccurrence":
      li.append("this position stood before at plies ", ...plyLinks(w.kind.value.plies.filter((p) => p !== w.ply), ";"),
        " once more ends the game (third occurrence).");
      break;
    case "perpetualCheckRisk":
      li.append(`perpetual-check risk: ${sideName(w.kind.value.checker)} has checked on every move since ply `,
        plyLink(w.kind.value.sincePly), ` and loses if the position occurs again.`);
      break;
    default:
      li.append("warning");
  }
  return li;
}

// ---- the clocks ----

const durationMs = (d: Duration | undefined): number => (d ? Number(d.seconds) * 1000 + Math.round(d.nanos / 1e6) : 0);
const colorOf = (side: Side): Color => (side === "white" ? Color.WHITE : Color.BLACK);

/** A side's time control, from the game's effective ruleset (every field set). */
function allowance(color: Color): Allowance {
  const o = analysis?.game?.ruleset?.overrides;
  const white = color === Color.WHITE;
  return {
    mainMs: durationMs(white ? o?.timeMainWhite : o?.timeMain),
    byoyomiMs: durationMs(white ? o?.timeByoyomiWhite : o?.timeByoyomi),
    periods: (white ? o?.timePeriodsWhite : o?.timePeriods) ?? 0,
    incrementMs: durationMs(white ? o?.timeIncrementWhite : o?.timeIncrement),
  };
}

/** The time control in words, for the line under the game's title. */
function controlText(): string {
  const game = analysis?.game;
  if (!game?.clock) return "no clock";
  const black = allowanceText(allowance(Color.BLACK));
  const white = allowanceText(allowance(Color.WHITE));
  const rounding = game.ruleset?.overrides?.clockRounding;
  const unit = rounding === ClockRounding.SECONDS ? "; charged in whole seconds"
    : rounding === ClockRounding.MINUTES ? "; charged in whole minutes" : "";
  return `clock: ${black === white ? black : `☗ ${black}; ☖ ${white}`}${unit}`;
}

/** Whether `color`'s clock runs now: the arbiter says so, and no move has stopped it since. */
function clockRuns(color: Color): boolean {
  const game = analysis?.game;
  return !!game?.clock && !game.verdict && game.clock.running === color && clockAt === null;
}

/**
 * What `color`'s clock shows now. The running side's counts down from its deadline, less the
 * lag allowance (which is the arbiter's, not the player's); the other shows what the arbiter
 * left it; a side that lost on time shows nothing left.
 */
function faceOf(color: Color): Face {
  const game = analysis!.game!;
  const c = game.clock!;
  const a = allowance(color);
  const side = color === Color.WHITE ? c.white : c.black;
  const ev = game.verdict?.evidence;
  if (ev?.case === "timeUp" && ev.value.side === color) return { phase: "out", ms: 0, periods: 0 };
  if (!game.verdict && c.running === color) {
    if (c.deadlineUnixMs === 0n) return { phase: "none", ms: 0, periods: 0 };
    const now = clockAt ?? Date.now();
    const grace = durationMs(game.ruleset?.overrides?.clockGrace);
    return runningFace(Number(c.deadlineUnixMs) - grace - now, a, side?.periodsLeft ?? 0);
  }
  return idleFace(Number(side?.remainingMs ?? 0n), side?.periodsLeft ?? 0, a);
}

function clockView(color: Color): HTMLElement {
  const el = h("div", { class: "clock", role: "timer", "data-clock": color === Color.WHITE ? "white" : "black" });
  fillClock(el);
  return el;
}

/** Draws one clock anew, only when what it shows changed (the ticker calls it often). */
function fillClock(el: HTMLElement): void {
  const game = analysis?.game;
  if (!game?.clock) return;
  const color = el.dataset.clock === "white" ? Color.WHITE : Color.BLACK;
  const f = faceOf(color);
  const running = clockRuns(color);
  const byoyomi = spanText(allowance(color).byoyomiMs);
  const time = f.phase === "none" ? "no limit" : clockText(f.ms);
  // The note under the time, as seen and as read out.
  let note: [string, string] | null = null;
  if (f.phase === "main" && f.periods) {
    note = [`+${f.periods} × ${byoyomi}`, `, then ${f.periods} byoyomi ${f.periods === 1 ? "period" : "periods"} of ${byoyomi}`];
  } else if (f.phase === "byoyomi") {
    const periods = `${f.periods} ${f.periods === 1 ? "period" : "periods"}`;
    note = [`byoyomi, ${periods}`, ` in byoyomi (periods of ${byoyomi}), ${periods} left`];
  } else if (f.phase === "out") {
    // The page never decides a time-up: past the deadline it waits for the arbiter's word.
    note = game.verdict ? ["time up", ", time up"] : ["awaiting the arbiter", ", past the deadline: awaiting the arbiter"];
  }
  const key = [f.phase, time, note?.[0], running].join("|");
  if (el.dataset.key === key) return;
  el.dataset.key = key;
  el.dataset.phase = f.phase;
  el.dataset.ms = String(Math.floor(f.ms));
  el.dataset.periods = String(f.periods);
  el.dataset.running = String(running);
  el.className = `clock ${f.phase}${running ? " running" : ""}`;
  el.replaceChildren(
    h("span", { class: "sr-only" }, `${sideName(color)}'s clock${running ? ", running" : ""}: `),
    h("span", { class: "time" }, time),
    ...(note ? [h("span", { class: "note", "aria-hidden": "true" }, note[0]), h("span", { class: "sr-only" }, note[1])] : []));
}

/**
 * Ten times a second: the clocks count down, and when the running side's deadline passes the
 * page asks the arbiter again, once, for the verdict it may have come to (WatchGame brings a
 * later one).
 */
function tickClocks(): void {
  const game = analysis?.game;
  if (!game?.clock || !gameId) return;
  for (const el of document.querySelectorAll<HTMLElement>("#game .clock")) fillClock(el);
  const deadline = Number(game.clock.deadlineUnixMs);
  const key = `${gameId}:${deadline}`;
  if (!game.verdict && clockAt === null && deadline > 0 && Date.now() >= deadline && askedAt !== key) {
    askedAt = key;
    scheduleRefresh();
  }
}

// ---- the board ----

const squares = new Map<string, HTMLButtonElement>();

function buildBoard(): void {
  const board = $("board");
  for (const r of RANKS) {
    for (const f of FILES) {
      const sq = f + r;
      const b = h("button", { type: "button", class: "sq", "data-square": sq, tabindex: "-1" }) as HTMLButtonElement;
      b.addEventListener("click", () => void clickSquare(sq));
      b.addEventListener("focus", () => {
        focusSquare = sq;
        for (const other of squares.values()) other.tabIndex = other === b ? 0 : -1;
      });
      squares.set(sq, b);
      board.append(b);
    }
  }
  board.addEventListener("keydown", boardKeys);
}

/** Arrow keys move among the squares as the board is shown (flipped or not). */
function boardKeys(e: KeyboardEvent): void {
  const deltas: Record<string, [number, number]> = {
    ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0],
  };
  const d = deltas[e.key];
  if (!d) {
    if (e.key === "Escape") {
      selection = {};
      draw();
    }
    return;
  }
  e.preventDefault();
  const sign = flipped ? -1 : 1;
  const col = FILES.indexOf(focusSquare[0]) + d[0] * sign;
  const row = RANKS.indexOf(focusSquare[1]) + d[1] * sign;
  if (col < 0 || col > 8 || row < 0 || row > 8) return;
  squares.get(FILES[col] + RANKS[row])?.focus();
}

function shownPly(): number {
  const ply = analysis?.game?.ply ?? 0;
  return viewPly === null ? ply : Math.min(viewPly, ply);
}

function atCurrent(): boolean {
  return shownPly() === (analysis?.game?.ply ?? 0);
}

function destinations(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!atCurrent() || legalFor !== analysis?.game?.sfen) return out;
  for (const mv of legal) {
    const origin = mv[1] === "*" ? mv[0] + "*" : mv.slice(0, 2);
    const wanted = selection.drop ? selection.drop + "*" : selection.from;
    if (origin !== wanted) continue;
    const to = mv.slice(2, 4);
    out.set(to, [...(out.get(to) ?? []), mv]);
  }
  return out;
}

/** The declarer's camp and its pieces, when the declaration is to be shown on the board. */
function campSquares(): { zone: Set<string>; pieces: Set<string> } {
  const zone = new Set<string>();
  const pieces = new Set<string>();
  const game = analysis?.game;
  if (!showCamp || !game) return { zone, pieces };
  const ev = game.verdict?.evidence;
  const declarer: Side = ev?.case === "declaration"
    ? (ev.value.declarer === Color.WHITE ? "white" : "black")
    : (game.sideToMove === Color.WHITE ? "white" : "black");
  const ranks = declarer === "black" ? ["a", "b", "c"] : ["g", "h", "i"];
  const pos = line[shownPly()];
  for (const f of FILES) {
    for (const r of ranks) {
      zone.add(f + r);
      const p = pos?.board.get(f + r);
      if (p && p.white === (declarer === "white")) pieces.add(f + r);
    }
  }
  return { zone, pieces };
}

function drawBoard(): void {
  const game = analysis?.game;
  if (!game) return;
  const ply = shownPly();
  const pos = line[ply] ?? parseSfen(game.sfen);
  const targets = destinations();
  const last = ply > 0 ? moveSquares(game.moves[ply - 1]) : null;
  const camp = campSquares();
  const board = $("board");
  board.classList.toggle("flipped", flipped);
  board.classList.toggle("history", !atCurrent());
  const order = flipped ? [...squares.keys()].reverse() : [...squares.keys()];
  // The buttons are kept (focus stays where it is); only their look and labels change, and
  // their order when the board is flipped.
  if (board.firstElementChild !== squares.get(order[0])) {
    const focused = board.contains(document.activeElement);
    board.replaceChildren(...order.map((sq) => squares.get(sq)!));
    if (focused) squares.get(focusSquare)?.focus();
  }
  order.forEach((sq) => {
    const b = squares.get(sq)!;
    const p = pos.board.get(sq);
    const classes = ["sq"];
    if (p?.white) classes.push("white");
    if (selection.from === sq) classes.push("selected");
    if (targets.has(sq)) classes.push("target");
    if (last?.to === sq) classes.push("last");
    if (last?.from === sq) classes.push("last-from");
    if (camp.zone.has(sq)) classes.push("campzone");
    if (camp.pieces.has(sq)) classes.push("camp");
    b.className = classes.join(" ");
    b.replaceChildren(...(p ? [h("span", { class: p.promoted ? "pc promoted" : "pc" }, pieceChar(p))] : []));
    const notes = [
      p ? `${pieceLabel(p)} ${p.white ? "White" : "Black"} ${p.promoted ? PROMOTED_NAMES[p.letter] : NAMES[p.letter]}` : "empty",
    ];
    if (selection.from === sq) notes.push("selected");
    if (targets.has(sq)) notes.push("move here");
    if (last?.to === sq) notes.push("last move");
    if (camp.pieces.has(sq)) notes.push("in the camp");
    b.setAttribute("aria-label", `${squareName(sq)} ${notes.join(", ")}`);
    b.tabIndex = sq === focusSquare ? 0 : -1;
  });
  $("files").replaceChildren(...(flipped ? [...FILES].reverse() : FILES).map((f) => h("span", {}, fileLabel(f))));
  $("ranks").replaceChildren(...(flipped ? [...RANKS].reverse() : RANKS).map((r) => h("span", {}, rankLabel(r))));

  const toMove: Side = pos.sideToMove;
  const over = game.verdict !== undefined && atCurrent();
  // The hands are drawn anew: a piece in hand that had the focus keeps it (a keyboard player
  // picking a drop, or tabbing there while the position is redrawn, would lose it otherwise).
  const focusedHand = (document.activeElement as HTMLElement | null)?.dataset?.hand;
  for (const [slot, color] of [["hand-top", flipped ? "black" : "white"], ["hand-bottom", flipped ? "white" : "black"]] as const) {
    const el = $(slot);
    el.dataset.side = color;
    const moving = toMove === color && !over;
    el.classList.toggle("to-move", moving);
    const label = h("div", { class: "owner" },
      h("span", { class: "mark", "aria-hidden": "true" }, color === "black" ? "☗" : "☖"),
      color === "black" ? " Black 先手" : " White 後手",
      ...(moving ? [h("span", { class: "turn" }, "to move")] : []));
    const pieces = HAND_ORDER.filter((l) => pos.hands[color].get(l)).map((letter) => {
      const n = pos.hands[color].get(letter)!;
      const selected = selection.drop === letter && toMove === color && atCurrent();
      const b = h("button", {
        type: "button", "data-hand": `${color}:${letter}`, class: selected ? "selected" : "",
        "aria-label": `${color === "black" ? "Black" : "White"}'s ${NAMES[letter]} in hand, ${n}`,
        "aria-pressed": String(selected),
      }, h("span", { class: "pc" }, pieceChar({ letter, promoted: false })), ...(n > 1 ? [h("span", { class: "count" }, `×${n}`)] : []));
      b.addEventListener("click", () => void clickHand(color, letter));
      return b;
    });
    el.replaceChildren(label, h("div", { class: "pieces" }, ...(pieces.length ? pieces : [h("span", { class: "empty" }, "no pieces in hand")])),
      ...(game.clock ? [clockView(colorOf(color))] : []));
  }
  if (focusedHand) document.querySelector<HTMLElement>(`[data-hand="${focusedHand}"]`)?.focus();
}

// ---- the panels ----

function draw(): void {
  drawBoard();
  drawPanels();
}

/** The status line, the history banner and the stepper: what a new move changes at once. */
function drawStatus(): void {
  const game = analysis?.game;
  if (!game) return;
  $("game-id-text").textContent = game.gameId;
  $("ruleset").textContent = `rules: ${game.ruleset?.preset ?? "?"} · ${controlText()}`;
  const over = game.verdict !== undefined;
  const ply = shownPly();
  const pos = line[ply];
  const status = $("status");
  if (over) {
    status.textContent = `Game over after ${game.ply} ${game.ply === 1 ? "ply" : "plies"}.`;
  } else {
    const mover = pos?.sideToMove === "white" ? "☖ White" : "☗ Black";
    status.textContent = `${mover} to move, ply ${game.ply + 1}${game.inCheck ? " — in check" : ""}.`;
  }
  status.dataset.side = game.sideToMove === Color.WHITE ? "white" : "black";
  const viewing = $("viewing");
  viewing.hidden = atCurrent();
  if (!atCurrent()) {
    const back = h("button", { type: "button", id: "back-to-current" }, "Back to the current position");
    back.addEventListener("click", () => goTo(null));
    viewing.replaceChildren(`Showing the position after ply ${ply}${ply ? ` (${moveText(ply)})` : " (the start)"}. `, back);
  }
  const slider = $<HTMLInputElement>("step-slider");
  slider.max = String(game.ply);
  slider.value = String(ply);
  slider.setAttribute("aria-valuetext", `ply ${ply} of ${game.ply}`);
  $<HTMLButtonElement>("step-first").disabled = ply === 0;
  $<HTMLButtonElement>("step-back").disabled = ply === 0;
  $<HTMLButtonElement>("step-forward").disabled = ply === game.ply;
  $<HTMLButtonElement>("step-last").disabled = ply === game.ply;
  drawComment();
}

/** The shown ply's comment, under the stepper; hidden when its move came without one. */
function drawComment(): void {
  const ply = shownPly();
  const comment = ply > 0 ? comments.get(ply) : undefined;
  $("comment").hidden = comment === undefined;
  if (comment === undefined) return;
  $("comment-move").textContent = `With ply ${ply}, ${moveText(ply)}:`;
  $("comment-text").textContent = comment;
}

/** Marks ply `p`'s row of the moves table as having a comment (after its move), once. */
function markComment(p: number): void {
  const button = $("moves").querySelector(`tbody tr[data-ply='${p}'] button.move`);
  if (!button || button.parentElement!.querySelector(".has-comment")) return;
  button.after(h("span", { class: "has-comment", title: "this move has a comment" }, " ✎",
    h("span", { class: "sr-only" }, " (comment)")));
}

function drawPanels(): void {
  const a = analysis;
  const game = a?.game;
  if (!a || !game) return;
  drawStatus();
  const over = game.verdict !== undefined;

  const verdict = $("verdict");
  verdict.hidden = !game.verdict;
  verdict.replaceChildren(...(game.verdict ? verdictView(game.verdict) : []));

  // Warnings: the last ply's are current; earlier ones are kept, folded away.
  const all = new Map(streamWarnings);
  for (const w of a.warnings) all.set(warningKey(w), w);
  const list = [...all.values()].sort((x, y) => x.ply - y.ply);
  const current = over ? [] : list.filter((w) => w.ply === game.ply);
  const earlier = list.filter((w) => !current.includes(w)).reverse();
  const parts: HTMLElement[] = [];
  parts.push(current.length
    ? h("ul", { id: "current-warnings" }, ...current.map((w) => warningView(w, true)))
    : h("p", { class: "none" }, over ? "None: the game is over." : "None now."));
  if (earlier.length) {
    parts.push(h("details", { class: "earlier" }, h("summary", {}, `Earlier warnings (${earlier.length})`),
      h("ul", {}, ...earlier.map((w) => warningView(w, false)))));
  }
  $("warnings").replaceChildren(...parts);
  const now = a.positions[a.positions.length - 1];
  $("streaks").textContent = now && !over
    ? `Checks in a row: Black ${now.blackCheckStreak}, White ${now.whiteCheckStreak}.`
    : "";

  // One declaration panel: what declaring now would give while the game is live; the
  // verdict's own report once a declaration ended it.
  const declaration = $("declaration");
  const ev = game.verdict?.evidence;
  const live = !over;
  const mine = game.sideToMove === Color.WHITE ? a.whiteDeclaration : a.blackDeclaration;
  const report = ev?.case === "declaration" ? ev.value : live ? mine : undefined;
  declaration.hidden = !report;
  $("declare-controls").hidden = !live;
  // With the arbiter's clock, the declaration's time is the clock's, not the platform's word.
  $("has-time-label").hidden = !!game.clock;
  if (report) {
    const toggle = h("button", { type: "button", id: "show-camp", "aria-pressed": String(showCamp) },
      showCamp ? "Hide the camp on the board" : "Show the camp on the board");
    toggle.addEventListener("click", () => {
      showCamp = !showCamp;
      draw();
    });
    $("declaration-body").replaceChildren(reportView(report, live), toggle);
    $<HTMLButtonElement>("declare").textContent = `Declare for ${sideName(game.sideToMove)}`;
  }
  const result = $("declare-result");
  if (refusedAt && refusedAt.ply === game.ply && live) {
    result.replaceChildren(h("p", { "data-code": "refused", class: "refused" }, refusedAt.text));
  } else {
    result.replaceChildren();
  }

  drawMoves();
}

/**
 * The moves table, kept up to date in place: rows are added for new moves and filled in once
 * the analysis has their counts (a past ply's counts never change), so a long game's table is
 * not rebuilt on every move. It is rebuilt for another game or another notation.
 */
function drawMoves(): void {
  const game = analysis!.game!;
  const body = $("moves").querySelector("tbody")!;
  const key = `${game.gameId} ${usiNotation}`;
  if (body.dataset.key !== key || body.children.length > game.ply + 1) {
    body.dataset.key = key;
    body.replaceChildren();
  }
  while (body.children.length <= game.ply) {
    const p = body.children.length;
    body.append(moveRow(p));
    if (comments.has(p)) markComment(p);
  }
  for (const row of body.querySelectorAll<HTMLElement>("tr:not([data-filled])")) fillRow(row, Number(row.dataset.ply));
  const ply = shownPly();
  const old = body.querySelector("tr.shown");
  const now = body.children[ply];
  if (old !== now) {
    old?.classList.remove("shown");
    old?.removeAttribute("aria-current");
    now?.classList.add("shown");
    now?.setAttribute("aria-current", "true");
    scrollToShown();
  }
}

function scrollToShown(): void {
  const shown = $("moves").querySelector("tbody tr.shown");
  const scroll = $("moves-scroll");
  if (shown instanceof HTMLElement) {
    // The shown row in the middle, scrolled by whole rows: the row at the top stands whole
    // under the sticky header, not half hidden by it.
    const rows = shown.parentElement!.children;
    const first = (rows[0] as HTMLElement).offsetTop;
    const row = Math.max(1, shown.getBoundingClientRect().height);
    // Room after the last row, so that the list scrolled to its end shows whole rows too.
    const end = $("moves-end");
    end.style.height = "0";
    const over = scroll.scrollHeight - scroll.clientHeight;
    end.style.height = over > 0 ? `${(row - (over % row)) % row}px` : "0";
    const wanted = shown.offsetTop - first - scroll.clientHeight / 2;
    const k = Math.round(wanted / row);
    const at = rows[Math.min(Math.max(0, k), rows.length - 1)] as HTMLElement;
    scroll.scrollTop = at.offsetTop - first;
  }
}

function moveRow(p: number): HTMLElement {
  const game = analysis!.game!;
  const text = p === 0 ? "Start (開始局面)" : moveText(p);
  const title = p === 0 ? "the start position" : `USI ${game.moves[p - 1]}`;
  const button = h("button", { type: "button", class: "move", title, "data-goto-ply": String(p) }, text);
  button.addEventListener("click", () => goTo(p));
  const row = h("tr", { "data-ply": String(p) },
    h("td", {}, String(p)),
    h("td", { class: "move-cell" }, button),
    h("td", { "data-field": "occurrence" }));
  fillRow(row, p);
  return row;
}

/** A row's counts from the analysis, once it has them. */
function fillRow(row: HTMLElement, p: number): void {
  const info = analysis?.positions[p];
  if (!info) return;
  row.dataset.filled = "true";
  if (info.occurrence >= 4) row.classList.add("fourth");
  else if (info.occurrence === 3) row.classList.add("third");
  if (info.gaveCheck && p > 0) row.children[1].append(h("span", { class: "check", title: "check" }, " 王手"));
  const cell = row.children[2] as HTMLElement;
  cell.textContent = info.occurrence > 1 ? `×${info.occurrence}` : "";
  if (info.earlierPlies.length) cell.title = `also after plies ${info.earlierPlies.join(", ")}`;
}

const warningKey = (w: Warning): string => `${w.ply}:${w.kind.case}`;

// ---- stepping ----

function goTo(ply: number | null): void {
  const current = analysis?.game?.ply ?? 0;
  viewPly = ply === null || ply >= current ? null : Math.max(0, ply);
  selection = {};
  // The declaration's camp is shown on the position it was judged on.
  if (analysis?.game?.verdict?.evidence.case === "declaration") showCamp = viewPly === null;
  draw();
}

function step(delta: number): void {
  goTo(shownPly() + delta);
}

// ---- loading ----

/** Brings `line` and `kif` up to the game's moves, playing only the new ones. */
function extendLine(startSfen: string, moves: string[]): void {
  if (line.length === 0) line = [parseSfen(startSfen)];
  while (line.length <= moves.length) {
    const i = line.length - 1;
    const prev = line[i];
    kif[i] = kifMove(prev, moves[i], i > 0 ? moveSquares(moves[i - 1]).to : undefined);
    line.push(play(prev, moves[i]));
  }
}

/** The largest page AnalyzeGame gives (`max_plies`); the arbiter cuts a page where its answer
 * is full, and says where the next starts. */
const MAX_PAGE_PLIES = 10000;

/** The game's analysis a page at a time, as a long game's does not fit one answer: the last
 * page's state and reports (the freshest), with every page's positions and moves. */
async function analyzeAll(id: string): Promise<AnalyzeGameResponse> {
  let a = await client.analyzeGame({ gameId: id, fromPly: 0, maxPlies: MAX_PAGE_PLIES });
  const positions = [...a.positions];
  const moves = [...(a.game?.moves ?? [])];
  while (a.nextPly !== 0) {
    a = await client.analyzeGame({ gameId: id, fromPly: a.nextPly, maxPlies: MAX_PAGE_PLIES });
    positions.push(...a.positions);
    moves.push(...(a.game?.moves ?? []));
  }
  a.positions = positions;
  if (a.game) a.game.moves = moves;
  return a;
}

async function refresh(): Promise<void> {
  if (!gameId) return;
  const id = gameId;
  const a = await analyzeAll(id);
  if (gameId !== id || a.game?.gameId !== id) return; // another game was opened meanwhile
  // A move the stream brought in meanwhile is not taken back by an older answer.
  if (analysis?.game && analysis.game.ply > a.game.ply && !a.game.verdict) return;
  analysis = a;
  clockAt = null;
  extendLine(a.game.startSfen, a.game.moves);
  // The list shows the open game as ended at once.
  const listed = games.get(id);
  if (listed && a.game.verdict && !listed.verdict) {
    listed.verdict = a.game.verdict;
    drawGames();
  }
  if (a.game.verdict?.evidence.case === "declaration" && viewPly === null) showCamp = true;
  if (legalFor !== a.game.sfen) selection = {};
  draw();
}

/** The arbiter's legal moves of the current position, asked for when a piece is first picked
 * in it (a spectator's page asks nothing per move). */
async function loadLegal(): Promise<void> {
  const game = analysis?.game;
  if (!game || legalFor === game.sfen) return;
  const sfen = game.sfen;
  const moves = game.verdict ? [] : (await client.legalMoves({ sfen })).moves;
  if (analysis?.game?.sfen === sfen) {
    legal = moves;
    legalFor = sfen;
  }
}

let refreshing: Promise<void> | null = null;
let again = false;
// Refreshes once at a time; events that arrive meanwhile ask for one more.
function scheduleRefresh(): void {
  if (refreshing) {
    again = true;
    return;
  }
  refreshing = guarded(refresh).finally(() => {
    refreshing = null;
    if (again) {
      again = false;
      scheduleRefresh();
    }
  });
}

async function openGame(id: string): Promise<void> {
  watch?.abort();
  gameId = id;
  analysis = null;
  line = [];
  kif = [];
  legal = [];
  legalFor = "";
  selection = {};
  pending = [];
  viewPly = null;
  showCamp = false;
  refusedAt = null;
  clockAt = null;
  askedAt = "";
  $("promotion").hidden = true;
  streamWarnings.clear();
  comments.clear();
  $("game").hidden = false;
  $("analysis").hidden = false;
  document.title = `${id} — shogi-arbiter console`;
  drawGames();
  await refresh();
  const controller = new AbortController();
  watch = controller;
  void follow(id, controller.signal);
}

// The game's events, live. A move is drawn at once from the event; the counts, reports and
// legal moves follow from the arbiter's analysis.
async function follow(id: string, signal: AbortSignal): Promise<void> {
  try {
    for await (const ev of client.watchGame({ gameId: id, fromPly: 0 }, { signal })) {
      const game = analysis?.game;
      if (ev.event.case === "warning") streamWarnings.set(warningKey(ev.event.value), ev.event.value);
      if (ev.event.case === "move" && ev.event.value.comment && gameId === id) {
        comments.set(ev.event.value.ply, ev.event.value.comment);
        markComment(ev.event.value.ply);
        if (game && shownPly() === ev.event.value.ply) drawComment();
      }
      if (ev.event.case === "move" && game && gameId === id && ev.event.value.ply === game.ply + 1 && !game.verdict) {
        const mv = ev.event.value;
        game.moves.push(mv.usi);
        game.ply = mv.ply;
        game.sfen = mv.sfenAfter;
        game.sideToMove = game.sideToMove === Color.BLACK ? Color.WHITE : Color.BLACK;
        game.inCheck = mv.givesCheck;
        // The clock the move started comes with the refresh; until then the clocks stand at
        // the move's receipt.
        if (game.clock) clockAt = Number(mv.receivedUnixMs) || Date.now();
        selection = {};
        extendLine(game.startSfen, game.moves);
        drawBoard();
        drawStatus();
        drawMoves();
      }
      scheduleRefresh();
    }
  } catch (e) {
    if (!signal.aborted) showError(e);
  }
}

// The games read so far, by id, and where the next ListGames call reads on from. The bus is
// read forward from the oldest game, so each call asks only for the games created since the
// last one: a long-running arbiter's games are all listed after a few rounds, newest first.
const games = new Map<string, GameSummary>();
let listToken = "";

// One listing at a time, so that a poll and a refresh do not interleave on the token.
let listing: Promise<void> = Promise.resolve();
function loadGames(fromStart = false): Promise<void> {
  const next = listing.then(() => readGames(fromStart));
  listing = next.catch(() => {});
  return next;
}

async function readGames(fromStart: boolean): Promise<void> {
  if (fromStart) {
    games.clear();
    listToken = "";
  }
  // Up to 1000 games a round; a short page means the list has caught up with the bus.
  for (let i = 0; i < 10; i++) {
    const page = await client.listGames({ pageSize: 100, pageToken: listToken });
    for (const g of page.games) games.set(g.gameId, g);
    listToken = page.nextPageToken;
    if (page.games.length < 100) break;
  }
  drawGames();
}

function drawGames(): void {
  const liveOnly = $<HTMLInputElement>("live-only").checked;
  const shown = [...games.values()].filter((g) => !liveOnly || !g.verdict).reverse();
  const list = $("games");
  list.replaceChildren(
    ...shown.map((g) => {
      const open = g.gameId === gameId;
      const link = h("a", { href: `#/games/${encodeURIComponent(g.gameId)}`, class: "game-link" }, g.gameId);
      if (open) link.setAttribute("aria-current", "page");
      return h("li", { "data-game": g.gameId, class: open ? "open" : "" },
        link,
        h("span", { class: g.verdict ? "ended" : "live" }, g.verdict ? g.verdict.codeName.replace(/_/g, " ") : "live"),
        h("span", { class: "preset" }, g.preset));
    }),
  );
  if (shown.length === 0) list.append(h("li", { class: "none" }, liveOnly ? "no live games" : "no games yet"));
}

// ---- playing ----

async function clickSquare(sq: string): Promise<void> {
  if (!playable()) return;
  await guarded(loadLegal);
  const game = analysis?.game;
  if (!game || !playable()) return;
  const targets = destinations();
  const moves = targets.get(sq);
  if (moves) {
    if (moves.length === 1) {
      await guarded(() => submit(moves[0]));
    } else {
      pending = moves;
      $("promotion").hidden = false;
      $("promote-yes").focus();
    }
    return;
  }
  const pos = line[game.ply];
  const p = pos?.board.get(sq);
  const mine = p && p.white === (pos.sideToMove === "white");
  selection = mine && selection.from !== sq ? { from: sq } : {};
  drawBoard();
}

async function clickHand(color: Side, letter: string): Promise<void> {
  if (!playable()) return;
  await guarded(loadLegal);
  const game = analysis?.game;
  if (!game || !playable() || line[game.ply]?.sideToMove !== color) return;
  selection = selection.drop === letter ? {} : { drop: letter };
  drawBoard();
}

/** Whether a move can be made on the board now: a live game at its current position. */
function playable(): boolean {
  const game = analysis?.game;
  return !!game && !game.verdict && pending.length === 0 && atCurrent();
}

function choosePromotion(promote: boolean | null): void {
  const moves = pending;
  pending = [];
  $("promotion").hidden = true;
  squares.get(focusSquare)?.focus();
  if (promote === null) {
    selection = {};
    drawBoard();
    return;
  }
  const mv = moves.find((m) => m.endsWith("+") === promote);
  if (mv) void guarded(() => submit(mv));
}

async function submit(usi: string): Promise<void> {
  const game = analysis?.game;
  if (!game || !gameId) return;
  const id = gameId;
  selection = {};
  const answer = await client.submitMove({ gameId: id, ply: game.ply + 1, usi });
  if (answer.outcome === MoveOutcome.REJECTED) {
    showError(new Error(`move ${usi} rejected`));
  } else {
    showError(null);
  }
  for (const w of answer.warnings) streamWarnings.set(warningKey(w), w);
  // The answer's clock is the one the move started: shown until the refresh brings the rest.
  if (answer.clock && analysis?.game?.gameId === id) {
    analysis.game.clock = answer.clock;
    clockAt = null;
  }
  await refresh();
}

async function declare(): Promise<void> {
  const game = analysis?.game;
  if (!game || !gameId) return;
  const hasTime = $<HTMLInputElement>("has-time").checked;
  const declarer = game.sideToMove;
  const answer = await client.declare({ gameId, declarer, hasTime });
  showError(null);
  if (!answer.verdict) {
    refusedAt = {
      ply: game.ply,
      text: `Refused: ${sideName(declarer)}'s declaration at ply ${game.ply} does not qualify; play goes on.`,
    };
  }
  await refresh();
}

// ---- creating ----

async function create(): Promise<void> {
  const sfen = $<HTMLInputElement>("sfen").value.trim();
  const requested = $<HTMLInputElement>("game-id").value.trim();
  // A CreateGame with an id already taken by the same game answers with that game: say so.
  if (requested) await loadGames();
  const existed = requested !== "" && games.has(requested);
  const created = await client.createGame({
    ruleset: { preset: $<HTMLSelectElement>("preset").value, overrides: clockOverrides() },
    start: sfen ? { start: { case: "sfen", value: sfen } } : undefined,
    gameId: requested,
  });
  showError(null);
  const id = created.game!.gameId;
  $<HTMLInputElement>("game-id").value = "";
  for (const field of ["time-main", "time-byoyomi", "time-periods", "time-increment"]) $<HTMLInputElement>(field).value = "";
  notice(existed
    ? `A game with the id ${id} already existed with these rules: it was reopened (${created.game!.ply} plies played).`
    : null);
  await loadGames();
  route(`#/games/${encodeURIComponent(id)}`);
}

/**
 * The time control the form asks for, as ruleset overrides: only the fields filled in, so that
 * an empty form makes a game without a clock. The arbiter checks the values.
 */
function clockOverrides(): RulesetOverridesInit | undefined {
  const time = (id: string, name: string) => {
    const ms = parseTime(name, $<HTMLInputElement>(id).value);
    return ms === null ? undefined : { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 };
  };
  const periodsText = $<HTMLInputElement>("time-periods").value.trim();
  if (periodsText !== "" && !/^\d+$/.test(periodsText)) throw new Error(`periods: "${periodsText}" is not a whole number`);
  const overrides: RulesetOverridesInit = {
    timeMain: time("time-main", "main time"),
    timeByoyomi: time("time-byoyomi", "byoyomi"),
    timePeriods: periodsText === "" ? undefined : Number(periodsText),
    timeIncrement: time("time-increment", "increment"),
  };
  return Object.values(overrides).some((v) => v !== undefined) ? overrides : undefined;
}

// ---- views and routes ----

let overviewTimer: number | undefined;

function route(hash: string): void {
  if (location.hash !== hash) {
    location.hash = hash; // hashchange follows
  } else {
    void guarded(applyRoute);
  }
}

async function applyRoute(): Promise<void> {
  const hash = location.hash;
  const operatorView = hash === "#/operator";
  $("games-view").hidden = operatorView;
  $("operator-view").hidden = !operatorView;
  $("nav-games").toggleAttribute("aria-current", !operatorView);
  $("nav-operator").toggleAttribute("aria-current", operatorView);
  if (operatorView) {
    notice(null);
    showError(null);
    $("nav-operator").setAttribute("aria-current", "page");
    document.title = "Operator — shogi-arbiter console";
    watch?.abort();
    gameId = null;
    await refreshOverview();
    window.clearInterval(overviewTimer);
    overviewTimer = window.setInterval(() => void guarded(refreshOverview), 2000);
    return;
  }
  $("nav-games").setAttribute("aria-current", "page");
  window.clearInterval(overviewTimer);
  const m = /^#\/games\/(.+)$/.exec(hash);
  if (m) {
    const id = decodeURIComponent(m[1]);
    if (id !== gameId) await openGame(id);
  } else {
    watch?.abort();
    gameId = null;
    $("game").hidden = true;
    $("analysis").hidden = true;
    document.title = "shogi-arbiter console";
    drawGames();
  }
}

async function refreshOverview(): Promise<void> {
  const o = await operator.getOverview({ minutes: 10 });
  if (location.hash === "#/operator") drawOverview(o);
}

// ---- wiring ----

function globalKeys(e: KeyboardEvent): void {
  if (!analysis?.game || $("game").hidden || e.altKey || e.ctrlKey || e.metaKey) return;
  const t = e.target as HTMLElement | null;
  if (t && (t.closest("#board") || t.closest("input, select, textarea, #promotion"))) return;
  const keys: Record<string, () => void> = {
    ArrowLeft: () => step(-1),
    ArrowRight: () => step(1),
    Home: () => goTo(0),
    End: () => goTo(null),
  };
  const act = keys[e.key];
  if (act) {
    e.preventDefault();
    act();
  }
}

function start(): void {
  buildBoard();
  $("flip").setAttribute("aria-pressed", String(flipped));
  $<HTMLInputElement>("usi").checked = usiNotation;
  $<HTMLInputElement>("token").value = sessionStorage.getItem(TOKEN_KEY) ?? "";
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const token = $<HTMLInputElement>("token").value.trim();
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
    void guarded(async () => {
      showError(null);
      await loadGames(true);
      const id = gameId;
      gameId = null;
      await applyRoute();
      if (id && !gameId) await openGame(id);
    });
  });
  // The refresh button reads the list again from the start, for every game's current ending.
  $("games-refresh").addEventListener("click", () => void guarded(() => loadGames(true)));
  $("live-only").addEventListener("change", drawGames);
  $("create-form").addEventListener("submit", (e) => {
    e.preventDefault();
    void guarded(create);
  });
  $("copy-id").addEventListener("click", () => {
    const id = analysis?.game?.gameId;
    if (!id) return;
    navigator.clipboard?.writeText(id).then(
      () => notice(`Copied ${id}.`),
      () => notice(`Select the id to copy it: ${id}`),
    );
  });
  $("promote-yes").addEventListener("click", () => choosePromotion(true));
  $("promote-no").addEventListener("click", () => choosePromotion(false));
  $("promote-cancel").addEventListener("click", () => choosePromotion(null));
  $("declare").addEventListener("click", () => void guarded(declare));
  $("step-first").addEventListener("click", () => goTo(0));
  $("step-back").addEventListener("click", () => step(-1));
  $("step-forward").addEventListener("click", () => step(1));
  $("step-last").addEventListener("click", () => goTo(null));
  $("step-slider").addEventListener("input", () => goTo(Number($<HTMLInputElement>("step-slider").value)));
  $("flip").addEventListener("click", () => {
    flipped = !flipped;
    localStorage.setItem("shogi-arbiter-flip", flipped ? "1" : "0");
    $("flip").setAttribute("aria-pressed", String(flipped));
    draw();
  });
  $("usi").addEventListener("change", () => {
    usiNotation = $<HTMLInputElement>("usi").checked;
    localStorage.setItem("shogi-arbiter-usi", usiNotation ? "1" : "0");
    draw();
  });
  document.addEventListener("keydown", globalKeys);
  window.addEventListener("hashchange", () => void guarded(applyRoute));
  // On a phone the lobby folds away once a game is open.
  if (window.matchMedia("(max-width: 700px)").matches && location.hash.startsWith("#/games/")) {
    $("lobby-new").removeAttribute("open");
  }
  void guarded(async () => {
    try {
      await loadGames();
      await applyRoute();
    } finally {
      document.body.dataset.ready = "true";
    }
  });
  // New games appear without a click.
  setInterval(() => void guarded(() => loadGames()), 5000);
  setInterval(tickClocks, 100);
}

start();
