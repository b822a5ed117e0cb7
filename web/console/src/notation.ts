// Positions and moves as people read them: an SFEN drawn into squares, a USI move played on it
// (only to follow a game the arbiter has judged: nothing here checks legality), and each move in
// KIF notation (`▲７六歩(77)`, `△同　歩(23)`, `▲２二角成(88)`, `▲５五角打`, `▲２三銀不成(34)`).
// No DOM: the npm test runs it in Node.

export type Side = "black" | "white";

export interface Piece {
  letter: string; // upper case: "P", "R" ...
  promoted: boolean;
  white: boolean;
}

export interface Position {
  board: Map<string, Piece>; // by USI square, "7g"
  hands: { black: Map<string, number>; white: Map<string, number> };
  sideToMove: Side;
  moveNumber: number;
}

/** Files left to right as Black sees the board, ranks top to bottom, in USI. */
export const FILES = ["9", "8", "7", "6", "5", "4", "3", "2", "1"];
export const RANKS = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
/** The order pieces in hand are listed in (SFEN's, and the customary one). */
export const HAND_ORDER = ["R", "B", "G", "S", "N", "L", "P"];

const FILE_WIDE = ["", "１", "２", "３", "４", "５", "６", "７", "８", "９"];
const RANK_KANJI = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九"];

/** One character per piece, as on a board. */
export const KANJI: Record<string, string> = { K: "玉", R: "飛", B: "角", G: "金", S: "銀", N: "桂", L: "香", P: "歩" };
export const PROMOTED_KANJI: Record<string, string> = { R: "龍", B: "馬", S: "全", N: "圭", L: "杏", P: "と" };
/** A promoted piece as a KIF move names it. */
const PROMOTED_KIF: Record<string, string> = { R: "龍", B: "馬", S: "成銀", N: "成桂", L: "成香", P: "と" };
/** English names, for labels. */
export const NAMES: Record<string, string> = {
  K: "king", R: "rook", B: "bishop", G: "gold", S: "silver", N: "knight", L: "lance", P: "pawn",
};
export const PROMOTED_NAMES: Record<string, string> = {
  R: "dragon", B: "horse", S: "promoted silver", N: "promoted knight", L: "promoted lance", P: "tokin",
};

/** `7g` as a person writes it: `７七`. */
export function squareName(sq: string): string {
  return FILE_WIDE[Number(sq[0])] + RANK_KANJI[sq.charCodeAt(1) - 96];
}

/** `7g` as a KIF origin: `77`. */
function squareDigits(sq: string): string {
  return `${sq[0]}${sq.charCodeAt(1) - 96}`;
}

export function fileLabel(file: string): string {
  return FILE_WIDE[Number(file)];
}

export function rankLabel(rank: string): string {
  return RANK_KANJI[rank.charCodeAt(0) - 96];
}

export function parseSfen(sfen: string): Position {
  const [rows = "", side = "b", hand = "-", number = "1"] = sfen.trim().split(/\s+/);
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
        const owner = c === c.toUpperCase() ? hands.black : hands.white;
        const letter = c.toUpperCase();
        owner.set(letter, (owner.get(letter) ?? 0) + (n ? Number(n) : 1));
        n = "";
      }
    }
  }
  return { board, hands, sideToMove: side === "w" ? "white" : "black", moveNumber: Number(number) || 1 };
}

export function toSfen(pos: Position): string {
  const rows = RANKS.map((r) => {
    let row = "";
    let empty = 0;
    for (const f of FILES) {
      const p = pos.board.get(f + r);
      if (!p) {
        empty += 1;
        continue;
      }
      if (empty) row += String(empty);
      empty = 0;
      row += (p.promoted ? "+" : "") + (p.white ? p.letter.toLowerCase() : p.letter);
    }
    return empty ? row + String(empty) : row;
  });
  let hand = "";
  for (const [owner, lower] of [[pos.hands.black, false], [pos.hands.white, true]] as const) {
    for (const letter of HAND_ORDER) {
      const n = owner.get(letter) ?? 0;
      if (n) hand += (n > 1 ? String(n) : "") + (lower ? letter.toLowerCase() : letter);
    }
  }
  return `${rows.join("/")} ${pos.sideToMove === "black" ? "b" : "w"} ${hand || "-"} ${pos.moveNumber}`;
}

function copy(pos: Position): Position {
  return {
    board: new Map(pos.board),
    hands: { black: new Map(pos.hands.black), white: new Map(pos.hands.white) },
    sideToMove: pos.sideToMove,
    moveNumber: pos.moveNumber,
  };
}

/** The squares a USI move names: its origin (none for a drop) and its destination. */
export function moveSquares(usi: string): { from?: string; to: string; drop?: string; promote: boolean } {
  if (usi[1] === "*") return { drop: usi[0].toUpperCase(), to: usi.slice(2, 4), promote: false };
  return { from: usi.slice(0, 2), to: usi.slice(2, 4), promote: usi.endsWith("+") };
}

/** The position after `usi`, a move the arbiter accepted. */
export function play(pos: Position, usi: string): Position {
  const next = copy(pos);
  const white = pos.sideToMove === "white";
  const hand = white ? next.hands.white : next.hands.black;
  const m = moveSquares(usi);
  if (m.drop) {
    hand.set(m.drop, (hand.get(m.drop) ?? 0) - 1);
    if (!hand.get(m.drop)) hand.delete(m.drop);
    next.board.set(m.to, { letter: m.drop, promoted: false, white });
  } else {
    const piece = next.board.get(m.from!);
    if (!piece) throw new Error(`no piece on ${m.from} for ${usi}`);
    const captured = next.board.get(m.to);
    if (captured) hand.set(captured.letter, (hand.get(captured.letter) ?? 0) + 1);
    next.board.delete(m.from!);
    next.board.set(m.to, { ...piece, promoted: piece.promoted || m.promote });
  }
  next.sideToMove = white ? "black" : "white";
  next.moveNumber += 1;
  return next;
}

/** Every position of a game: `[start, after ply 1, ...]`. */
export function positions(startSfen: string, moves: string[]): Position[] {
  const out = [parseSfen(startSfen)];
  for (const mv of moves) out.push(play(out[out.length - 1], mv));
  return out;
}

const inZone = (sq: string, white: boolean): boolean => {
  const rank = sq.charCodeAt(1) - 96;
  return white ? rank >= 7 : rank <= 3;
};

/**
 * `usi` played from `pos` in KIF notation: ▲ or △, the destination (`同　` when it is the
 * previous move's, `previousTo`), the piece as it stood, then 成, 不成 (a promotion that was
 * open and declined) or 打, and the origin in digits.
 */
export function kifMove(pos: Position, usi: string, previousTo?: string): string {
  const mark = pos.sideToMove === "white" ? "△" : "▲";
  const m = moveSquares(usi);
  if (m.drop) return `${mark}${squareName(m.to)}${KANJI[m.drop]}打`;
  const piece = pos.board.get(m.from!);
  if (!piece) return `${mark}${usi}`;
  const where = previousTo === m.to ? "同　" : squareName(m.to);
  const name = piece.promoted ? PROMOTED_KIF[piece.letter] ?? piece.letter : KANJI[piece.letter];
  const promotable = !piece.promoted && piece.letter in PROMOTED_KIF;
  const mayPromote = promotable && (inZone(m.from!, piece.white) || inZone(m.to, piece.white));
  const suffix = m.promote ? "成" : mayPromote ? "不成" : "";
  return `${mark}${where}${name}${suffix}(${squareDigits(m.from!)})`;
}

/** Every move of a game in KIF notation. */
export function kifMoves(startSfen: string, moves: string[]): string[] {
  const all = positions(startSfen, moves);
  return moves.map((mv, i) => kifMove(all[i], mv, i > 0 ? moveSquares(moves[i - 1]).to : undefined));
}

/** A piece for a label: `▲歩`, `△龍`. */
export function pieceLabel(p: Piece): string {
  return (p.white ? "△" : "▲") + pieceChar(p);
}

/** A piece's one character: 王 for White's king, 玉 for Black's, as is customary. */
export function pieceChar(p: { letter: string; promoted: boolean; white?: boolean }): string {
  if (p.letter === "K") return p.white ? "王" : "玉";
  return p.promoted ? PROMOTED_KANJI[p.letter] ?? p.letter : KANJI[p.letter] ?? p.letter;
}
