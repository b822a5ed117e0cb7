// A platform's first game against the arbiter, in TypeScript on Node 20 with Connect (gRPC).
//
// It creates a game, plays the README's perpetual-check game to its verdict and reads the
// evidence, meets the two errors every platform meets (ABORTED `PLY_TAKEN` for a ply another
// move holds, FAILED_PRECONDITION `GAME_OVER` after the verdict) by their ErrorInfo reasons, and
// declares in an impasse position; then plays two games on one SubmitMoves stream, each answer
// found by its tag, and reads a stream's error answer as a google.rpc.Status. It exits 1,
// naming what was wrong, on any answer other than the arbiter's rules give (docs/rules.md), so
// that CI can run it against a real server.
//
//   npm ci && npx buf generate && npx tsc -p . && node dist/main.js --addr 127.0.0.1:50051

import { randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { equals, type MessageInitShape } from "@bufbuild/protobuf";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import {
  Color,
  MoveOutcome,
  MoveValidator,
  ResultCode,
  VerdictSchema,
  type SubmitMovesRequestSchema,
  type SubmitMovesResponse,
  type Verdict,
} from "./gen/shogi/v1/arbiter_pb.js";

// The README's first game: Black's rook checks White's king back and forth; the position after
// ply 1 comes back at plies 5, 9 and 13, and every Black move since ply 1 gave check.
const PERPETUAL_SFEN = "6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1";
const PERPETUAL_MOVES =
  "5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h".split(" ");

// Black's king in camp with 12 pieces and 28 points: enough under the 27-point rule
// (shared fixture `lishogi-black-yes`, Lishogi ImpasseTest.scala).
const IMPASSE_SFEN = "2SGS4/+B+RGKGLLRB/3G5/9/7pp/8k/9/9/9 b - 1";

const ERROR_DOMAIN = "shogi-arbiter.move-validator";

class WrongAnswer extends Error {}

function expect<T>(what: string, got: T, want: T): void {
  if (!isDeepStrictEqual(got, want)) {
    throw new WrongAnswer(`${what}: got ${show(got)}, want ${show(want)}`);
  }
  console.log(`ok  ${what}: ${show(got)}`);
}

function show(value: unknown): string {
  return JSON.stringify(value, (_, v) => (typeof v === "bigint" ? v.toString() : v));
}

/** google.rpc.ErrorInfo: reason = 1, domain = 2, metadata = 3 (map<string, string>). */
interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

// The google.rpc types are not among protobuf-es's well-known types, and generating them would
// take the googleapis module from the Buf registry; ErrorInfo is three fields, read here.
function decodeErrorInfo(bytes: Uint8Array): ErrorInfo {
  const info: ErrorInfo = { reason: "", domain: "", metadata: {} };
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) {
      info.reason = reader.string();
    } else if (field === 2 && wireType === WireType.LengthDelimited) {
      info.domain = reader.string();
    } else if (field === 3 && wireType === WireType.LengthDelimited) {
      const entry = new BinaryReader(reader.bytes());
      let key = "";
      let value = "";
      while (entry.pos < entry.len) {
        const [f, t] = entry.tag();
        if (f === 1 && t === WireType.LengthDelimited) key = entry.string();
        else if (f === 2 && t === WireType.LengthDelimited) value = entry.string();
        else entry.skip(t, f);
      }
      info.metadata[key] = value;
    } else {
      reader.skip(wireType, field);
    }
  }
  return info;
}

/** The call's ErrorInfo, checked for the arbiter's domain, and the error itself. */
function errorInfo(err: unknown): [ErrorInfo, ConnectError] {
  const connectErr = ConnectError.from(err);
  for (const detail of connectErr.details) {
    if ("type" in detail && detail.type === "google.rpc.ErrorInfo") {
      const info = decodeErrorInfo(detail.value);
      expect("ErrorInfo domain", info.domain, ERROR_DOMAIN);
      return [info, connectErr];
    }
  }
  throw new WrongAnswer(`${Code[connectErr.code]} without an ErrorInfo: ${connectErr.message}`);
}

type Arbiter = Client<typeof MoveValidator>;

async function submit(client: Arbiter, gameId: string, ply: number, usi: string) {
  return client.submitMove({ gameId, ply, usi }, { timeoutMs: 10_000 });
}

async function perpetualCheckGame(client: Arbiter): Promise<void> {
  const gameId = `ts-perpetual-${randomUUID().slice(0, 12)}`;
  const { game } = await client.createGame(
    {
      gameId,
      ruleset: { preset: "online" },
      start: { start: { case: "sfen", value: PERPETUAL_SFEN } },
    },
    { timeoutMs: 10_000 },
  );
  expect("created game id", game?.gameId, gameId);
  expect("created at ply", game?.ply, 0);

  let verdict: Verdict | undefined;
  for (const [i, usi] of PERPETUAL_MOVES.entries()) {
    const ply = i + 1;
    const answer = await submit(client, gameId, ply, usi);
    expect(`ply ${ply} ${usi}`, MoveOutcome[answer.outcome], "ACCEPTED");
    if (ply < PERPETUAL_MOVES.length && answer.verdict !== undefined) {
      throw new WrongAnswer(`ply ${ply} ended the game early: ${answer.verdict.codeName}`);
    }
    if (ply === 1) {
      // Another move for a ply the game already has: the platform's view was stale.
      // ABORTED, reason PLY_TAKEN, and the game's ply in the metadata; nothing stored.
      let refused = false;
      try {
        await submit(client, gameId, 1, "5h4h");
      } catch (err) {
        if (err instanceof WrongAnswer) throw err;
        const [info, connectErr] = errorInfo(err);
        expect("second move for ply 1: status", Code[connectErr.code], "Aborted");
        expect("second move for ply 1: reason", info.reason, "PLY_TAKEN");
        expect("second move for ply 1: current_ply", info.metadata["current_ply"], "1");
        refused = true;
      }
      if (!refused) throw new WrongAnswer("a second move for ply 1 was accepted");
    }
    verdict = answer.verdict;
  }
  if (verdict === undefined) throw new WrongAnswer("the 13th move did not end the game");

  expect("verdict code", ResultCode[verdict.code], "PERPETUAL_CHECK");
  expect("verdict code name", verdict.codeName, "perpetual_check");
  expect("winner (the checked side)", Color[verdict.winner], "WHITE");
  expect("verdict ply", verdict.ply, 13);
  expect("evidence kind", verdict.evidence.case, "perpetualCheck");
  if (verdict.evidence.case !== "perpetualCheck") return;
  const evidence = verdict.evidence.value;
  expect("occurrence plies", evidence.plies, [1, 5, 9, 13]);
  expect("checker", Color[evidence.checker], "BLACK");
  expect("checker's plies, each a check", evidence.checkPlies, [3, 5, 7, 9, 11, 13]);

  // The game's state says the same.
  const { game: state } = await client.getGame({ gameId }, { timeoutMs: 10_000 });
  expect("GetGame ply", state?.ply, 13);
  expect("GetGame moves", state?.moves, PERPETUAL_MOVES);
  expect(
    "GetGame verdict",
    state?.verdict !== undefined && equals(VerdictSchema, state.verdict, verdict),
    true,
  );

  // A move after the verdict is not judged: FAILED_PRECONDITION, reason GAME_OVER, with the
  // verdict that ended the game in the details.
  let over = false;
  try {
    await submit(client, gameId, 14, "2a3a");
  } catch (err) {
    if (err instanceof WrongAnswer) throw err;
    const [info, connectErr] = errorInfo(err);
    expect("move after the end: status", Code[connectErr.code], "FailedPrecondition");
    expect("move after the end: reason", info.reason, "GAME_OVER");
    expect("move after the end: verdict_code", info.metadata["verdict_code"], "perpetual_check");
    expect("move after the end: verdict_ply", info.metadata["verdict_ply"], "13");
    const verdicts = connectErr.findDetails(VerdictSchema);
    expect("move after the end: verdicts in the details", verdicts.length, 1);
    expect(
      "move after the end: the game's verdict",
      equals(VerdictSchema, verdicts[0], verdict),
      true,
    );
    over = true;
  }
  if (!over) throw new WrongAnswer("a move after the verdict was answered OK");
}

async function impasseDeclaration(client: Arbiter): Promise<void> {
  const gameId = `ts-impasse-${randomUUID().slice(0, 12)}`;
  // The `csa` preset: the 27-point rule, declared on request (CSA `%KACHI`).
  await client.createGame(
    {
      gameId,
      ruleset: { preset: "csa" },
      start: { start: { case: "sfen", value: IMPASSE_SFEN } },
    },
    { timeoutMs: 10_000 },
  );
  const answer = await client.declare(
    { gameId, declarer: Color.BLACK, hasTime: true },
    { timeoutMs: 10_000 },
  );
  const report = answer.report;
  if (report === undefined) throw new WrongAnswer("a declaration without a report");
  expect("declaration rule", report.rule, "points27");
  expect("declaration outcome", report.outcome, "win");
  expect("points", report.points, 28);
  expect("points to win (Black)", report.pointsToWin, 28);
  expect("pieces in camp", report.piecesInCamp, 12);
  expect(
    "conditions not met",
    report.conditions.filter((c) => !c.met).map((c) => c.name),
    [],
  );
  expect("declaration verdict", answer.verdict?.codeName, "declaration");
  expect("declaration winner", Color[answer.verdict?.winner ?? Color.UNSPECIFIED], "BLACK");
  expect("declaration evidence kind", answer.verdict?.evidence.case, "declaration");
}

/**
 * Two games on one SubmitMoves stream: each move answered with its tag as SubmitMove answers
 * it, as soon as it is settled (not in the order sent); a move for a ply another holds answered
 * with its error, whose fields are google.rpc.Status's.
 */
async function onAStream(client: Arbiter): Promise<void> {
  const games = [0, 1].map((i) => `ts-stream-${i}-${randomUUID().slice(0, 8)}`);
  for (const gameId of games) {
    await client.createGame({ gameId, ruleset: { preset: "online" } }, { timeoutMs: 10_000 });
  }
  const line = "7g7f 3c3d 2g2f 8c8d".split(" ");
  const requests: MessageInitShape<typeof SubmitMovesRequestSchema>[] = [];
  const expected = new Map<bigint, [string, number]>();
  for (const [i, usi] of line.entries()) {
    for (const gameId of games) {
      const tag = BigInt(requests.length + 1);
      expected.set(tag, [gameId, i + 1]);
      requests.push({ tag, move: { gameId, ply: i + 1, usi } });
    }
  }
  // A second move for ply 1 of the first game, sent after its moves: PLY_TAKEN.
  const taken = BigInt(requests.length + 1);
  requests.push({ tag: taken, move: { gameId: games[0], ply: 1, usi: "5g5f" } });

  async function* sent(): AsyncGenerator<MessageInitShape<typeof SubmitMovesRequestSchema>> {
    yield* requests;
  }
  const got = new Map<bigint, SubmitMovesResponse>();
  for await (const answer of client.submitMoves(sent(), { timeoutMs: 30_000 })) {
    if (got.has(answer.tag)) throw new WrongAnswer(`tag ${answer.tag} answered twice`);
    got.set(answer.tag, answer);
  }
  expect("stream: answers, one a move", got.size, requests.length);
  for (const [tag, [gameId, ply]] of expected) {
    const answer = got.get(tag)?.answer;
    expect(`stream: tag ${tag} (${gameId} ply ${ply})`, answer?.case, "submitted");
    if (answer?.case !== "submitted") return;
    expect(`stream: tag ${tag} outcome`, MoveOutcome[answer.value.outcome], "ACCEPTED");
    expect(`stream: tag ${tag} ply`, answer.value.ply, ply);
  }
  const error = got.get(taken)?.answer;
  expect("stream: the taken ply's answer", error?.case, "error");
  if (error?.case !== "error") return;
  expect("stream: the taken ply's code", Code[error.value.code], "Aborted");
  const infos = error.value.details
    .filter((d) => d.typeUrl.endsWith("/google.rpc.ErrorInfo"))
    .map((d) => decodeErrorInfo(d.value));
  expect("stream: the taken ply's ErrorInfo", infos.length, 1);
  expect("stream: the taken ply's domain", infos[0].domain, ERROR_DOMAIN);
  expect("stream: the taken ply's reason", infos[0].reason, "PLY_TAKEN");
  expect("stream: the taken ply's current_ply", infos[0].metadata["current_ply"], `${line.length}`);
  for (const gameId of games) {
    const { game } = await client.getGame({ gameId }, { timeoutMs: 10_000 });
    expect(`stream: ${gameId}'s moves`, game?.moves, line);
  }
}

async function main(): Promise<number> {
  const i = process.argv.indexOf("--addr");
  const addr = i > 0 ? process.argv[i + 1] : "127.0.0.1:50051";
  const transport = createGrpcTransport({ baseUrl: `http://${addr}` });
  const client = createClient(MoveValidator, transport);
  try {
    await perpetualCheckGame(client);
    await impasseDeclaration(client);
    await onAStream(client);
  } catch (err) {
    if (err instanceof WrongAnswer) {
      console.error(`WRONG ANSWER: ${err.message}`);
      return 1;
    }
    throw err;
  }
  console.log("typescript client: every answer as the rules give it");
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
