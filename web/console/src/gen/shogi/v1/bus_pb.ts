// The arbiter's bus contract: where it keeps games on NATS JetStream, what each subject carries,
// and the messages only its own services exchange there.
//
// The game messages themselves (GameCreated, MoveAccepted, Declaration, Warning, Verdict) are
// in `arbiter.proto`, because the gRPC service returns them too. This file says where they are
// published. A platform that listens to verdicts reads "Core NATS, not stored" below and
// `deploy/STREAMS.md` ("What a platform can rely on"); `examples/python/verdict_listener.py`
// is a listener that does it. Everything under "Internal coordination" is written and read
// only by the arbiter's workers: a platform never needs it.
//
// Bus subjects (stream `SHOGI_GAMES`, subjects `shogi.game.>`):
//   shogi.game.<game_id>.created  GameCreated
//   shogi.game.<game_id>.move.<p> the game's ordered log: MoveAccepted for each move, and, when
//                                 the game ends other than by a move (a platform report, a
//                                 declaration, a forfeited illegal move), the Verdict that ends
//                                 it, as the log's last entry. Written by the move validator
//                                 alone. (Logs written before issue 20 may also hold, right
//                                 after the deciding move, a worker's copy of the Verdict of an
//                                 ending that follows from a move; readers pass over it.)
//   shogi.game.<game_id>.declare  Declaration
//   shogi.game.<game_id>.warning  Warning
//   shogi.game.<game_id>.verdict  Verdict (every ending, including those that follow from a move):
//                                 the stream stores one message per game, because every
//                                 publisher expects the subject to be empty (an entry there
//                                 that is not the game's Verdict is set aside by the announcer,
//                                 which stores the Verdict after it). Publishes on it may
//                                 repeat (a retried publish, a second announcer of the same
//                                 ending): the stream refuses all but the first, so a core NATS
//                                 subscription on this subject can see a verdict more than once
//                                 and must not be used to learn verdicts. An announcement, not
//                                 yet checked: written by the repetition-watcher, the
//                                 impasse-judge or the validator, and possibly, with a stolen
//                                 worker credential, false. Platforms read the next subject.
//   shogi.game.<game_id>.result   Verdict: the game's verdict as the move validator checked it,
//                                 one message per game, written by the validator alone. Each
//                                 announcement on `.verdict` comes to the validator's durable
//                                 consumer `verdict-check`; the validator replays the game's log
//                                 and records here the verdict the log decides (never the
//                                 announcement's: one that differs is set aside; nothing
//                                 before the log decides an ending) (issue 20).
// Core NATS, not stored:
//   shogi.verdict.<game_id>       Verdict: what the stream stored on `shogi.game.<game_id>.result`,
//                                 republished by the stream itself (the stream's RePublish of
//                                 `shogi.game.*.result` to `shogi.verdict.{{wildcard(1)}}`) only
//                                 when it stores it. The stream stores one verdict per game and
//                                 republishes what it stores, so a core subscriber connected at
//                                 that moment receives each game's verdict once, whatever the
//                                 publishers repeated. On a NATS cluster the stream republishes
//                                 from its leader: a verdict stored while the leader dies may be
//                                 republished again by the new leader (the same stored message:
//                                 same `Nats-Sequence` header, same payload; drop a notice whose
//                                 game you have a verdict for) or not at all. A subscriber that
//                                 must not miss one consumes the stored subject with JetStream.
//                                 Core NATS does not redeliver: a
//                                 subscriber that was not connected reads the stored `.result`
//                                 (or calls GetGame). The republished message keeps the stored
//                                 one's headers (`Shogi-Message-Type`, the trace context) and adds
//                                 JetStream's `Nats-Stream`, `Nats-Subject` and `Nats-Sequence`.
// Every published message carries the header `Shogi-Message-Type` with its full type name
// (`shogi.v1.MoveAccepted`, `shogi.v1.Verdict`, ...) and a `Nats-Msg-Id` so that a retried
// publish is deduplicated by the stream: `<game_id>:created`, `<game_id>:<ply>:<usi>` (a move),
// `<game_id>:<ply>:end` (a Verdict on `.move`), `<game_id>:<ply>:declare:<declarer>:<has_time>`,
// `<game_id>:<ply>:warning:<index>`, `<game_id>:<ply>:verdict`, `<game_id>:<ply>:result`. When the gRPC call that caused
// a message carried a W3C trace context (`traceparent`, `tracestate` metadata), the message
// carries it too, in headers of the same names.
//
// `<p>` is the game's partition, 0 to 15: the FNV-1a 64 hash of the game id's bytes modulo 16
// (`shogi_proto::subject::partition`). It is part of the subject so that a consumer can read
// the logs of one partition (`shogi.game.*.move.<p>`) on servers without multi-filter consumers.
//
// Consumers (repetition-watcher, impasse-judge): one durable JetStream consumer per service and
// partition, named `<service>-p<p>`, filtered on `shogi.game.*.move.<p>`. An instance of a
// service consumes the partitions it holds: either fixed (instance i of n holds the partitions
// p with p mod n = i) or by lease (stream `SHOGI_LEASES`, subjects `shogi.lease.<service>.<p>`
// and `shogi.lease.<service>.member.<holder>`, one message kept per subject, each written with
// the subject's expected last sequence), so that the partitions of a dead instance are taken
// over by the live ones. Events set aside (for a game never created) are copied to
// `shogi.aside.<game_id>` in stream `SHOGI_ASIDE`.
//
// Writers append to `.move` only with the subject's expected last sequence, so two writers
// cannot both take a ply, and nothing is appended after a Verdict by a writer that has read the
// log. A game is rebuilt by reading `GameCreated` and then `.move` in order.

// @generated by protoc-gen-es v2.13.0 with parameter "target=ts"
// @generated from file shogi/v1/bus.proto (package shogi.v1, syntax proto3)
/* eslint-disable */

import type { GenFile, GenMessage } from "@bufbuild/protobuf/codegenv2";
import { fileDesc, messageDesc } from "@bufbuild/protobuf/codegenv2";
import type { Message } from "@bufbuild/protobuf";

/**
 * Describes the file shogi/v1/bus.proto.
 */
export const file_shogi_v1_bus: GenFile = /*@__PURE__*/
  fileDesc("ChJzaG9naS92MS9idXMucHJvdG8SCHNob2dpLnYxIjkKDlBhcnRpdGlvbkxlYXNlEg4KBmhvbGRlchgBIAEoCRIXCg9leHBpcmVzX3VuaXhfbXMYAiABKAMiMQoGTWVtYmVyEg4KBmhvbGRlchgBIAEoCRIXCg9leHBpcmVzX3VuaXhfbXMYAiABKANCPgoIc2hvZ2kudjFCCEJ1c1Byb3RvUAGiAgNTSEeqAghTaG9naS5WMcoCCFNob2dpXFYx6gIJU2hvZ2k6OlYxYgZwcm90bzM");

/**
 * Published on `shogi.lease.<service>.<p>` (stream `SHOGI_LEASES`): who consumes partition `p`
 * for a service, until when. Written with the subject's expected last sequence, so two
 * instances cannot both take a partition from the same state.
 *
 * @generated from message shogi.v1.PartitionLease
 */
export type PartitionLease = Message<"shogi.v1.PartitionLease"> & {
  /**
   * The instance holding the partition; empty when released.
   *
   * @generated from field: string holder = 1;
   */
  holder: string;

  /**
   * Until when, milliseconds since the Unix epoch; a lease past it is free to take.
   *
   * @generated from field: int64 expires_unix_ms = 2;
   */
  expiresUnixMs: bigint;
};

/**
 * Describes the message shogi.v1.PartitionLease.
 * Use `create(PartitionLeaseSchema)` to create a new message.
 */
export const PartitionLeaseSchema: GenMessage<PartitionLease> = /*@__PURE__*/
  messageDesc(file_shogi_v1_bus, 0);

/**
 * Published on `shogi.lease.<service>.member.<holder>` (stream `SHOGI_LEASES`): an instance of a
 * service that is alive. The partitions are shared among the live members.
 *
 * @generated from message shogi.v1.Member
 */
export type Member = Message<"shogi.v1.Member"> & {
  /**
   * The instance.
   *
   * @generated from field: string holder = 1;
   */
  holder: string;

  /**
   * Alive until then, milliseconds since the Unix epoch, unless renewed.
   *
   * @generated from field: int64 expires_unix_ms = 2;
   */
  expiresUnixMs: bigint;
};

/**
 * Describes the message shogi.v1.Member.
 * Use `create(MemberSchema)` to create a new message.
 */
export const MemberSchema: GenMessage<Member> = /*@__PURE__*/
  messageDesc(file_shogi_v1_bus, 1);

