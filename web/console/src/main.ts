// The shogi-arbiter console: a page over the MoveValidator service, called through gRPC-Web
// with the client generated from proto/ (src/gen). The arbiter is the authority: legal moves,
// counts, reports and verdicts all come from it; the page only draws the SFEN it is given.

import { createClient, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import {
  MoveValidator,
  Color,
  MoveOutcome,
  type AnalyzeGameResponse,
  type DeclarationReport,
  type GameState,
  type GameSummary,
  type Verdict,
  type Warning,
} from "./gen/shogi/v1/arbiter_pb";

const TOKEN_KEY = "shogi-arbiter-token";

// The bearer token, when one is set, goes with every call, as any client's would.
const auth: Interceptor = (next) => (req) => {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) req.header.set("authorization", `Bearer ${token}`);
  return next(req);
};

const client = createClient(
  MoveValidator,
  createGrpcWebTransport({ baseUrl: location.origin, interceptors: [auth] }),
);

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`no element #${id}`);
  return el as T;
};

function h(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

// ---- state ----

interface Selection {
  from?: string; // a square, "7g"
  drop?: string; // a piece letter in hand, "P"
}

let gameId: string | null = null;
let analysis: AnalyzeGameResponse | null = null;
let legal: string[] = [];
let selection: Selection = {};
let pending: string[] = []; // promotion choices waiting for an answer
let watch: AbortController | null = null;
const streamWarnings = new Map<string, Warning>();

// ---- errors ----

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

// ---- the SFEN, for drawing only ----

interface Piece {
  letter: string; // upper case: "P", "R" ...
  promoted: boolean;
  white: boolean;
}

interface Drawn {
  board: Map<string, Piece>;
  hands: { black: Map<string, number>; white: Map<string, number> };
  sideToMove: "black" | "white";
}

const FILES = ["9", "8", "7", "6", "5", "4", "3", "2", "1"];
const RANKS = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
const HAND_ORDER = ["R", "B", "G", "S", "N", "L", "P"];
const KANJI: Record<string, string> = { K: "玉", R: "飛", B: "角", G: "金", S: "銀", N: "桂", L: "香", P: "歩" };
const PROMOTED: Record<string, string> = { R: "龍", B: "馬", S: "全", N: "圭", L: "杏", P: "と" };

function parseSfen(sfen: string): Drawn {
  const [rows = "", side = "b", hand = "-"] = sfen.split(" ");
  const board = new Map<string, Piece>();
  rows.split("/").forEach((row, r) => {
    let f = 0;
    let promoted = false;
    for (const c of row) {
      if (c === "+") {
        promoted = true;
      } else if (c >= "1" && c <= "9") {
        f += Number(c);
      } else {
        board.set(FILES[f] + RANKS[r], { letter: c.toUpperCase(), promoted, white: c !== c.toUpperCase() });
        promoted = false;
        f += 1;
      }
    }
  });
  const hands = { black: new Map<string, number>(), white: new Map<string, number>() };
  if (hand !== "-") {
    let n = "";
    for (const c of hand) {
      if (c >= "0" && c <= "9") {
        n += c;
      } else {
        const side = c === c.toUpperCase() ? hands.black : hands.white;
        side.set(c.toUpperCase(), (side.get(c.toUpperCase()) ?? 0) + (n ? Number(n) : 1));
        n = "";
      }
    }
  }
  return { board, hands, sideToMove: side === "w" ? "white" : "black" };
}

function pieceText(p: { letter: string; promoted: boolean; white?: boolean }): HTMLElement {
  // The kings told apart as is customary: 玉 for Black, 王 for White.
  const king = p.letter === "K" && p.white ? "王" : null;
  const text = king ?? (p.promoted ? PROMOTED[p.letter] ?? p.letter : KANJI[p.letter] ?? p.letter);
  return h("span", { class: p.promoted ? "pc promoted" : "pc" }, text);
}

// ---- words for the arbiter's values ----

const side = (c: Color): string => (c === Color.BLACK ? "Black" : c === Color.WHITE ? "White" : "none");

function verdictHeadline(v: Verdict): string {
  const who = v.winner === Color.UNSPECIFIED ? "no winner" : `${side(v.winner)} wins`;
  const ordinary = v.ordinaryResult === 1 ? " (draw)" : v.ordinaryResult === 2 ? " (replay)" : "";
  return `${v.codeName}: ${who}${ordinary}, at ply ${v.ply}`;
}

function verdictView(v: Verdict): HTMLElement {
  const box = h("div", {}, h("div", { class: "headline", "data-code": v.codeName }, verdictHeadline(v)));
  const ev = v.evidence;
  const line = (text: string, attrs: Record<string, string> = {}) => box.append(h("div", attrs, text));
  switch (ev.case) {
    case "perpetualCheck":
      line(`Occurrence plies: ${ev.value.plies.join(", ")}`, { "data-evidence": "plies" });
      line(`Checker (loses): ${side(ev.value.checker)}`, { "data-evidence": "checker" });
      line(`Check plies: ${ev.value.checkPlies.join(", ")}`, { "data-evidence": "check-plies" });
      break;
    case "repetition":
      line(`Occurrence plies: ${ev.value.plies.join(", ")}`, { "data-evidence": "plies" });
      if (ev.value.mutualCheck) line("Both sides checked on every move (judged as ordinary)");
      break;
    case "declaration":
      box.append(reportView(ev.value));
      break;
    case "checkmate":
      line(`Mating move: ${ev.value.matingMove || "(the start position)"} at ply ${ev.value.matingPly}`);
      break;
    case "illegalMove":
      line(`Illegal move: ${ev.value.usi}`);
      break;
    case "tryRule":
      line(`Try: ${ev.value.usi}`);
      break;
    case "maxMoves":
      line(`Cap: ${ev.value.cap} plies${ev.value.extendedByChecks ? ", extended by checks" : ""}`);
      break;
    case "reported":
      if (ev.value.note) line(ev.value.note);
      break;
  }
  return box;
}

function reportView(r: DeclarationReport): HTMLElement {
  const rows = r.conditions.map((c) =>
    h("tr", { "data-condition": c.name },
      h("td", {}, c.name),
      h("td", { class: c.met ? "ok" : "no" }, c.met ? "holds" : "fails")),
  );
  return h("div", { class: "report", "data-declarer": side(r.declarer).toLowerCase() },
    h("div", { "data-field": "outcome" }, `${side(r.declarer)} declaring under ${r.rule}: ${r.outcome}`),
    h("div", { "data-field": "points" },
      `Points: ${r.points} (in camp ${r.pointsInCamp} + in hand ${r.pointsInHand} + credit ${r.credit}); ` +
        `${r.pointsToWin} to win, ${r.pointsMissing} short`),
    h("div", {}, `Pieces in camp: ${r.piecesInCamp}; king in camp: ${r.kingInCamp ? "yes" : "no"}; ` +
      `in check: ${r.inCheck ? "yes" : "no"}`),
    h("table", {}, h("tbody", {}, ...rows)),
  );
}

function warningText(w: Warning): string {
  switch (w.kind.case) {
    case "thirdOccurrence":
      return `ply ${w.ply}: third occurrence (plies ${w.kind.value.plies.join(", ")}); one more ends the game`;
    case "perpetualCheckRisk":
      return `ply ${w.ply}: perpetual-check risk: ${side(w.kind.value.checker)} has checked on every move since ply ${w.kind.value.sincePly} and loses if the position occurs again`;
    default:
      return `ply ${w.ply}: warning`;
  }
}

// ---- drawing ----

function lastMoveSquares(game: GameState): Set<string> {
  const last = game.moves[game.moves.length - 1];
  return new Set(last ? [last.slice(2, 4)] : []);
}

function destinations(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const mv of legal) {
    const origin = mv[1] === "*" ? mv[0] + "*" : mv.slice(0, 2);
    const wanted = selection.drop ? selection.drop + "*" : selection.from;
    if (origin !== wanted) continue;
    const to = mv.slice(2, 4);
    out.set(to, [...(out.get(to) ?? []), mv]);
  }
  return out;
}

function drawBoard(): void {
  const game = analysis?.game;
  if (!game) return;
  const drawn = parseSfen(game.sfen);
  const targets = destinations();
  const last = lastMoveSquares(game);
  const board = $("board");
  board.replaceChildren();
  for (const r of RANKS) {
    for (const f of FILES) {
      const sq = f + r;
      const p = drawn.board.get(sq);
      const classes = ["sq"];
      if (p?.white) classes.push("white");
      if (selection.from === sq) classes.push("selected");
      if (targets.has(sq)) classes.push("target");
      if (last.has(sq)) classes.push("last");
      const cell = h("div", { class: classes.join(" "), "data-square": sq, role: "gridcell" });
      if (p) cell.append(pieceText(p));
      cell.addEventListener("click", () => void clickSquare(sq));
      board.append(cell);
    }
  }
  for (const color of ["black", "white"] as const) {
    const el = $(`hand-${color}`);
    el.dataset.label = color === "black" ? "Black ☗" : "White ☖";
    el.replaceChildren();
    for (const letter of HAND_ORDER) {
      const n = drawn.hands[color].get(letter);
      if (!n) continue;
      const selected = selection.drop === letter && drawn.sideToMove === color;
      const b = h("button", { type: "button", "data-hand": `${color}:${letter}`, class: selected ? "selected" : "" },
        pieceText({ letter, promoted: false }), h("span", { class: "count" }, String(n)));
      b.addEventListener("click", () => clickHand(color, letter));
      el.append(b);
    }
  }
}

function drawAnalysis(): void {
  const a = analysis;
  const game = a?.game;
  if (!a || !game) return;
  $("game-title").textContent = `Game ${game.gameId} (${game.ruleset?.preset ?? "?"})`;
  const over = game.verdict !== undefined;
  $("status").textContent = over
    ? `Game over after ${game.ply} plies.`
    : `Ply ${game.ply}; ${side(game.sideToMove)} to move${game.inCheck ? ", in check" : ""}.`;
  $<HTMLButtonElement>("declare").disabled = over;
  $<HTMLButtonElement>("declare").textContent = over ? "Declare" : `Declare (${side(game.sideToMove)})`;

  const verdict = $("verdict");
  verdict.hidden = !game.verdict;
  verdict.replaceChildren(...(game.verdict ? [h("h3", {}, "Verdict"), verdictView(game.verdict)] : []));

  const body = $("moves").querySelector("tbody")!;
  body.replaceChildren(
    ...a.positions.map((p) =>
      h("tr", { "data-ply": String(p.ply), class: p.occurrence >= 4 ? "fourth" : p.occurrence === 3 ? "third" : "" },
        h("td", {}, String(p.ply)),
        h("td", {}, p.usi || "start"),
        h("td", {}, p.gaveCheck ? "check" : ""),
        h("td", { "data-field": "occurrence" }, p.occurrence ? `${p.occurrence}` : "not counted"),
        h("td", {}, p.earlierPlies.join(", "))),
    ),
  );
  const now = a.positions[a.positions.length - 1];
  $("streaks").textContent = now
    ? `Black: ${now.blackCheckStreak} check${now.blackCheckStreak === 1 ? "" : "s"} in a row; ` +
      `White: ${now.whiteCheckStreak} check${now.whiteCheckStreak === 1 ? "" : "s"} in a row.`
    : "";

  const impasse = $("impasse");
  const reports = [a.blackDeclaration, a.whiteDeclaration].filter((r): r is DeclarationReport => !!r);
  impasse.replaceChildren(...(reports.length ? reports.map(reportView) : [h("p", {}, "No declarations in this ruleset.")]));

  const warnings = new Map(streamWarnings);
  for (const w of a.warnings) warnings.set(warningKey(w), w);
  const list = [...warnings.values()].sort((x, y) => x.ply - y.ply);
  $("warnings").replaceChildren(
    ...(list.length ? list.map((w) => h("li", { "data-warning": w.kind.case ?? "" }, warningText(w))) : [h("li", {}, "none")]),
  );
}

const warningKey = (w: Warning): string => `${w.ply}:${w.kind.case}`;

// ---- loading ----

async function refresh(): Promise<void> {
  if (!gameId) return;
  const a = await client.analyzeGame({ gameId });
  if (a.game?.gameId !== gameId) return; // another game was opened meanwhile
  const sfenChanged = analysis?.game?.sfen !== a.game.sfen || analysis?.game?.verdict !== undefined;
  analysis = a;
  // The list shows the open game as ended at once.
  const listed = games.get(gameId);
  if (listed && a.game.verdict && !listed.verdict) {
    listed.verdict = a.game.verdict;
    drawGames();
  }
  if (sfenChanged || legal.length === 0) {
    legal = a.game.verdict ? [] : (await client.legalMoves({ sfen: a.game.sfen })).moves;
    selection = {};
  }
  drawAnalysis();
  drawBoard();
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
  legal = [];
  selection = {};
  streamWarnings.clear();
  $("declaration").hidden = true;
  $("game").hidden = false;
  $("analysis").hidden = false;
  document.querySelectorAll("#games li").forEach((li) => li.classList.toggle("open", li.getAttribute("data-game") === id));
  await refresh();
  const controller = new AbortController();
  watch = controller;
  void follow(id, controller.signal);
}

// The game's events, live: each one refreshes the analysis from the arbiter.
async function follow(id: string, signal: AbortSignal): Promise<void> {
  try {
    for await (const ev of client.watchGame({ gameId: id, fromPly: 0 }, { signal })) {
      if (ev.event.case === "warning") streamWarnings.set(warningKey(ev.event.value), ev.event.value);
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
      const li = h("li", { "data-game": g.gameId, class: g.gameId === gameId ? "open" : "" },
        g.gameId.length > 20 ? g.gameId.slice(0, 18) + "…" : g.gameId,
        " ",
        h("span", { class: g.verdict ? "ended" : "live" }, g.verdict ? `(${g.verdict.codeName})` : "(live)"));
      li.title = `${g.gameId}\n${g.preset}\n${g.startSfen}`;
      li.addEventListener("click", () => void guarded(() => openGame(g.gameId)));
      return li;
    }),
  );
  if (shown.length === 0) list.append(h("li", {}, liveOnly ? "no live games" : "no games yet"));
}

// ---- playing ----

async function clickSquare(sq: string): Promise<void> {
  const game = analysis?.game;
  if (!game || game.verdict || pending.length) return;
  const targets = destinations();
  const moves = targets.get(sq);
  if (moves) {
    if (moves.length === 1) {
      await guarded(() => submit(moves[0]));
    } else {
      pending = moves;
      $("promotion").hidden = false;
    }
    return;
  }
  const drawn = parseSfen(game.sfen);
  const p = drawn.board.get(sq);
  const mine = p && p.white === (drawn.sideToMove === "white");
  selection = mine && selection.from !== sq ? { from: sq } : {};
  drawBoard();
}

function clickHand(color: "black" | "white", letter: string): void {
  const game = analysis?.game;
  if (!game || game.verdict || pending.length) return;
  if (parseSfen(game.sfen).sideToMove !== color) return;
  selection = selection.drop === letter ? {} : { drop: letter };
  drawBoard();
}

function choosePromotion(promote: boolean | null): void {
  const moves = pending;
  pending = [];
  $("promotion").hidden = true;
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
  selection = {};
  const answer = await client.submitMove({ gameId, ply: game.ply + 1, usi });
  if (answer.outcome === MoveOutcome.REJECTED) {
    showError(new Error(`move ${usi} rejected`));
  } else {
    showError(null);
  }
  for (const w of answer.warnings) streamWarnings.set(warningKey(w), w);
  await refresh();
}

async function declare(): Promise<void> {
  const game = analysis?.game;
  if (!game || !gameId) return;
  const hasTime = $<HTMLInputElement>("has-time").checked;
  const declaration = $("declaration");
  const result = $("declare-result");
  result.replaceChildren(h("p", {}, "asking the arbiter…"));
  // The calculator first, so that the person sees what each condition says...
  const evaluated = await client.evaluateImpasse({ target: { case: "gameId", value: gameId }, hasTime });
  $("declare-report").replaceChildren(evaluated.report ? reportView(evaluated.report) : h("p", {}, "no report"));
  declaration.hidden = false;
  // ...then the declaration itself: a verdict, or a refusal and play goes on.
  const answer = await client.declare({ gameId, declarer: game.sideToMove, hasTime });
  result.replaceChildren(
    answer.verdict
      ? verdictView(answer.verdict)
      : h("div", { class: "headline", "data-code": "refused" },
        `Refused: ${side(game.sideToMove)}'s declaration does not qualify; play goes on.`),
  );
  showError(null);
  await refresh();
}

// ---- wiring ----

function start(): void {
  $<HTMLInputElement>("token").value = sessionStorage.getItem(TOKEN_KEY) ?? "";
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const token = $<HTMLInputElement>("token").value.trim();
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
    void guarded(async () => {
      showError(null);
      await loadGames(true);
      if (gameId) await openGame(gameId);
    });
  });
  // The refresh button reads the list again from the start, for every game's current ending.
  $("games-refresh").addEventListener("click", () => void guarded(() => loadGames(true)));
  $("live-only").addEventListener("change", drawGames);
  $("create-form").addEventListener("submit", (e) => {
    e.preventDefault();
    void guarded(async () => {
      const sfen = $<HTMLInputElement>("sfen").value.trim();
      const created = await client.createGame({
        ruleset: { preset: $<HTMLSelectElement>("preset").value },
        start: sfen ? { start: { case: "sfen", value: sfen } } : undefined,
        gameId: $<HTMLInputElement>("game-id").value.trim(),
      });
      showError(null);
      await openGame(created.game!.gameId);
      await loadGames();
    });
  });
  $("promote-yes").addEventListener("click", () => choosePromotion(true));
  $("promote-no").addEventListener("click", () => choosePromotion(false));
  $("promote-cancel").addEventListener("click", () => choosePromotion(null));
  $("declare").addEventListener("click", () => void guarded(declare));
  void guarded(() => loadGames());
  // New games appear without a click.
  setInterval(() => void guarded(() => loadGames()), 5000);
  document.body.dataset.ready = "true";
}

start();
