// The JavaScript side of the interoperability test (tools/interop/interop.py): reads records with
// tsshogi (ShogiHome's record library) and json-kifu-format (Kifu for JS), and writes
// tsshogi's and json-kifu-format's own exports of a record.
//
// Usage: node libs.mjs JOBS.json  (an array of jobs; prints one JSON array of results)
//   {lib: "tsshogi"|"jkf", op: "read", format, path}
//   {lib: "tsshogi"|"jkf", op: "export", format, path, out: {FORMAT: PATH, ...}}
// A result is the record's view, {sfen, moves: [usi...], ending: CSA name or "OTHER:word" or
// null}, or {error}; an export also writes each format of `out` and gives its view of the source.

import { readFileSync, writeFileSync } from "node:fs";
import * as ts from "tsshogi";
import jkfPkg from "json-kifu-format";
import Ajv2020 from "ajv/dist/2020.js";
import { createRequire } from "node:module";

const { JKFPlayer } = jkfPkg;

// json-kifu-format's own JSON schema, compiled as its `schema:validate` script does
// (draft 2020-12, tuples not strict): a JKF it rejects is a disagreement like any other.
const schema = JSON.parse(
  readFileSync(
    createRequire(import.meta.url).resolve("json-kifu-format/specification/json-kifu-format.schema.json"),
    "utf8",
  ),
);
const validate = new Ajv2020({ strictTuples: false }).compile(schema);

// tsshogi: the main line of a record.
function tsshogiView(record) {
  const moves = [];
  let ending = null;
  for (let node = record.first.next; node; node = node.next) {
    const mv = node.move;
    if (mv instanceof ts.Move) {
      moves.push(mv.usi);
      continue;
    }
    // A special move ends the line. The side that fouls in 反則勝ち is the side not to move.
    if (ts.isKnownSpecialMove(mv)) {
      if (mv.type === ts.SpecialMoveType.FOUL_WIN) {
        ending = node.nextColor === ts.Color.BLACK ? "-ILLEGAL_ACTION" : "+ILLEGAL_ACTION";
      } else {
        ending = ts.getCSASpecialMoveName(mv, node.nextColor) ?? `OTHER:${mv.type}`;
      }
    } else {
      ending = `OTHER:${mv.name}`;
    }
    break;
  }
  return { sfen: record.initialPosition.sfen, moves, ending };
}

function tsshogiRead(format, text) {
  switch (format) {
    case "kif":
      return ts.importKIF(text);
    case "ki2":
      return ts.importKI2(text);
    case "csa":
      return ts.importCSA(text);
    case "jkf":
      return ts.importJKFString(text);
    case "usi":
      return ts.Record.newByUSI(text.trim());
  }
  throw new Error(`tsshogi cannot read ${format}`);
}

function tsshogiWrite(format, record) {
  switch (format) {
    case "kif":
      return ts.exportKIF(record);
    case "ki2":
      return ts.exportKI2(record);
    case "csa":
      return ts.exportCSA(record);
    case "jkf":
      return ts.exportJKFString(record);
    case "usi":
      return record.getUSI({ allMoves: true }) + "\n";
  }
  throw new Error(`tsshogi cannot write ${format}`);
}

// json-kifu-format: the main line of its JKF, played on shogi.js for the moves' origins.
function jkfView(player) {
  const sfen = player.shogi.toSFENString(1);
  const moves = [];
  let ending = null;
  const list = player.kifu.moves;
  for (let i = 1; i < list.length; i++) {
    const item = list[i];
    if (item.special) {
      ending = item.special;
      break;
    }
    const m = item.move;
    if (!m) break;
    const sq = (p) => `${p.x}${String.fromCharCode(96 + p.y)}`;
    if (m.from) {
      moves.push(`${sq(m.from)}${sq(m.to)}${m.promote ? "+" : ""}`);
    } else {
      const letter = { FU: "P", KY: "L", KE: "N", GI: "S", KI: "G", KA: "B", HI: "R" }[m.piece];
      moves.push(`${letter}*${sq(m.to)}`);
    }
  }
  return { sfen, moves, ending };
}

function jkfRead(format, text) {
  switch (format) {
    case "kif":
      return JKFPlayer.parseKIF(text);
    case "ki2":
      return JKFPlayer.parseKI2(text);
    case "csa":
      return JKFPlayer.parseCSA(text);
    case "jkf":
      return JKFPlayer.parseJKF(text);
  }
  throw new Error(`json-kifu-format cannot read ${format}`);
}

// UTF-8 where the bytes are UTF-8, else Shift_JIS (the corpus's .kif files), as a platform
// decodes a record before it gives the text to these libraries.
function decode(bytes) {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes).replace(/^\uFEFF/, "");
  } catch {
    return new TextDecoder("shift_jis").decode(bytes);
  }
}

function run(job) {
  const text = decode(readFileSync(job.path));
  if (job.lib === "tsshogi") {
    const record = tsshogiRead(job.format, text);
    if (record instanceof Error) return { error: record.message || String(record) };
    if (job.op === "export") {
      for (const [format, path] of Object.entries(job.out)) {
        writeFileSync(path, tsshogiWrite(format, record));
      }
    }
    return tsshogiView(record);
  }
  if (job.format === "jkf" && !validate(JSON.parse(text))) {
    const e = validate.errors[0];
    return { error: `json schema: ${e.instancePath} ${e.message}` };
  }
  const player = jkfRead(job.format, text);
  if (job.op === "export") {
    for (const [format, path] of Object.entries(job.out)) {
      if (format !== "jkf") throw new Error(`json-kifu-format cannot write ${format}`);
      writeFileSync(path, JSON.stringify(player.kifu, null, 1));
    }
  }
  return jkfView(player);
}

const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const results = jobs.map((job) => {
  try {
    return run(job);
  } catch (e) {
    return { error: String(e && e.message ? e.message : e).split("\n")[0] };
  }
});
process.stdout.write(JSON.stringify(results));
