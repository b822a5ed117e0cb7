// The arbiter's public contract: the MoveValidator gRPC service that platforms call, and the
// messages it puts on the bus (NATS JetStream) for the watcher and the judge.
//
// Conventions, binding for every message here:
// - A position is an SFEN string with its four fields ("board side hand movenumber"), as the
//   USI protocol writes it (`lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1`).
// - A move is a USI move string: `7g7f`, `8h2b+`, `P*5e`.
// - A ply is one move by one player; ply 1 is the first move of the game, ply 0 the start
//   position. A game "at ply N" has had N moves played.
// - Result codes, illegal kinds and evidence are those of RULES.md sections 1 and 7.
// - A game id is one NATS subject token: ASCII letters, digits, `-` and `_`, 1 to 64 characters.
//
// Bus subjects (stream `SHOGI_GAMES`, subjects `shogi.game.>`):
//   shogi.game.<game_id>.created  GameCreated
//   shogi.game.<game_id>.move.<p> the game's ordered log: MoveAccepted for each move, and, when
//                                 the game ends other than by a move (a platform report, a
//                                 declaration, a forfeited illegal move), the Verdict that ends
//                                 it, as the log's last entry; when the repetition-watcher or
//                                 the impasse-judge runs, it also writes there a copy of the
//                                 Verdict of an ending that follows from a move, right after
//                                 that move (a reader that judged the moves already knows it)
//   shogi.game.<game_id>.declare  Declaration
//   shogi.game.<game_id>.warning  Warning
//   shogi.game.<game_id>.verdict  Verdict (every ending, including those that follow from a move):
//                                 the stream stores exactly one message per game, because every
//                                 publisher expects the subject to be empty. Publishes on it may
//                                 repeat (a retried publish, a second announcer of the same
//                                 ending): the stream refuses all but the first, so a core NATS
//                                 subscription on this subject can see a verdict more than once
//                                 and must not be used to learn verdicts; use the next subject
// Core NATS, not stored:
//   shogi.verdict.<game_id>       Verdict: what the stream stored on `shogi.game.<game_id>.verdict`,
//                                 republished by the stream itself (the stream's RePublish of
//                                 `shogi.game.*.verdict` to `shogi.verdict.{{wildcard(1)}}`) only
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
//                                 subscriber that was not connected reads the stored `.verdict`
//                                 (or calls GetGame). The republished message keeps the stored
//                                 one's headers (`Shogi-Message-Type`, the trace context) and adds
//                                 JetStream's `Nats-Stream`, `Nats-Subject` and `Nats-Sequence`.
// Every published message carries the header `Shogi-Message-Type` with its full type name
// (`shogi.v1.MoveAccepted`, `shogi.v1.Verdict`, ...) and a `Nats-Msg-Id` so that a retried
// publish is deduplicated by the stream: `<game_id>:created`, `<game_id>:<ply>:<usi>` (a move),
// `<game_id>:<ply>:end` (a Verdict on `.move`), `<game_id>:<ply>:declare:<declarer>:<has_time>`,
// `<game_id>:<ply>:warning:<index>`, `<game_id>:<ply>:verdict`. When the gRPC call that caused
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
// @generated from file shogi/v1/arbiter.proto (package shogi.v1, syntax proto3)
/* eslint-disable */

import type { GenEnum, GenFile, GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import { enumDesc, fileDesc, messageDesc, serviceDesc } from "@bufbuild/protobuf/codegenv2";
import type { Message } from "@bufbuild/protobuf";

/**
 * Describes the file shogi/v1/arbiter.proto.
 */
export const file_shogi_v1_arbiter: GenFile = /*@__PURE__*/
  fileDesc("ChZzaG9naS92MS9hcmJpdGVyLnByb3RvEghzaG9naS52MSJICgdSdWxlc2V0Eg4KBnByZXNldBgBIAEoCRItCglvdmVycmlkZXMYAiABKAsyGi5zaG9naS52MS5SdWxlc2V0T3ZlcnJpZGVzIroFChBSdWxlc2V0T3ZlcnJpZGVzEjEKDGlsbGVnYWxfbW92ZRgBIAEoDjIbLnNob2dpLnYxLklsbGVnYWxNb3ZlUG9saWN5EiwKCnJlcGV0aXRpb24YAiABKA4yGC5zaG9naS52MS5PcmRpbmFyeVJlc3VsdBIjChZzdGFydF9wb3NpdGlvbl9jb3VudGVkGAMgASgISACIAQESLgoLZGVjbGFyYXRpb24YBCABKA4yGS5zaG9naS52MS5EZWNsYXJhdGlvblJ1bGUSOQoTZGVjbGFyYXRpb25fdHJpZ2dlchgFIAEoDjIcLnNob2dpLnYxLkRlY2xhcmF0aW9uVHJpZ2dlchI3ChJmYWlsZWRfZGVjbGFyYXRpb24YBiABKA4yGy5zaG9naS52MS5GYWlsZWREZWNsYXJhdGlvbhIpCgdqaXNob2dpGAcgASgOMhguc2hvZ2kudjEuT3JkaW5hcnlSZXN1bHQSHAoPaGFuZGljYXBfY3JlZGl0GAggASgISAGIAQESFQoIdHJ5X3J1bGUYCSABKAhIAogBARIVCghtb3ZlX2NhcBgKIAEoDUgDiAEBEiMKCGNhcF9tb2RlGAsgASgOMhEuc2hvZ2kudjEuQ2FwTW9kZRIbCg5jc2Ffc2VydmVyX2NhcBgMIAEoCEgEiAEBEiAKE2FncmVlbWVudF90aHJlc2hvbGQYDSABKA1IBYgBARItCg1hZ3JlZW1lbnRfdGllGA4gASgOMhYuc2hvZ2kudjEuQWdyZWVtZW50VGllQhkKF19zdGFydF9wb3NpdGlvbl9jb3VudGVkQhIKEF9oYW5kaWNhcF9jcmVkaXRCCwoJX3RyeV9ydWxlQgsKCV9tb3ZlX2NhcEIRCg9fY3NhX3NlcnZlcl9jYXBCFgoUX2FncmVlbWVudF90aHJlc2hvbGQiPAoRQ2hlY2ttYXRlRXZpZGVuY2USEgoKbWF0aW5nX3BseRgBIAEoDRITCgttYXRpbmdfbW92ZRgCIAEoCSJHChNJbGxlZ2FsTW92ZUV2aWRlbmNlEiMKBGtpbmQYASABKA4yFS5zaG9naS52MS5JbGxlZ2FsS2luZBILCgN1c2kYAiABKAkiOQoSUmVwZXRpdGlvbkV2aWRlbmNlEg0KBXBsaWVzGAEgAygNEhQKDG11dHVhbF9jaGVjaxgCIAEoCCJeChZQZXJwZXR1YWxDaGVja0V2aWRlbmNlEg0KBXBsaWVzGAEgAygNEiAKB2NoZWNrZXIYAiABKA4yDy5zaG9naS52MS5Db2xvchITCgtjaGVja19wbGllcxgDIAMoDSI3ChpEZWNsYXJhdGlvbkNvbmRpdGlvblJlc3VsdBIMCgRuYW1lGAEgASgJEgsKA21ldBgCIAEoCCLgAgoRRGVjbGFyYXRpb25SZXBvcnQSDAoEcnVsZRgBIAEoCRIhCghkZWNsYXJlchgCIAEoDjIPLnNob2dpLnYxLkNvbG9yEg8KB291dGNvbWUYAyABKAkSOAoKY29uZGl0aW9ucxgEIAMoCzIkLnNob2dpLnYxLkRlY2xhcmF0aW9uQ29uZGl0aW9uUmVzdWx0EhYKDnBpZWNlc19pbl9jYW1wGAUgASgNEhQKDGtpbmdfaW5fY2FtcBgGIAEoCBIQCghpbl9jaGVjaxgHIAEoCBIQCghoYXNfdGltZRgIIAEoCBIWCg5wb2ludHNfaW5fY2FtcBgJIAEoDRIWCg5wb2ludHNfaW5faGFuZBgKIAEoDRIOCgZjcmVkaXQYCyABKA0SDgoGcG9pbnRzGAwgASgNEhUKDXBvaW50c190b193aW4YDSABKA0SFgoOcG9pbnRzX21pc3NpbmcYDiABKA0iHgoPVHJ5UnVsZUV2aWRlbmNlEgsKA3VzaRgBIAEoCSI7ChBNYXhNb3Zlc0V2aWRlbmNlEgsKA2NhcBgBIAEoDRIaChJleHRlbmRlZF9ieV9jaGVja3MYAiABKAgiIAoQUmVwb3J0ZWRFdmlkZW5jZRIMCgRub3RlGAEgASgJItwECgdWZXJkaWN0Eg8KB2dhbWVfaWQYASABKAkSIgoEY29kZRgCIAEoDjIULnNob2dpLnYxLlJlc3VsdENvZGUSHwoGd2lubmVyGAMgASgOMg8uc2hvZ2kudjEuQ29sb3ISCwoDcGx5GAQgASgNEjEKD29yZGluYXJ5X3Jlc3VsdBgFIAEoDjIYLnNob2dpLnYxLk9yZGluYXJ5UmVzdWx0EjAKCWNoZWNrbWF0ZRgKIAEoCzIbLnNob2dpLnYxLkNoZWNrbWF0ZUV2aWRlbmNlSAASNQoMaWxsZWdhbF9tb3ZlGAsgASgLMh0uc2hvZ2kudjEuSWxsZWdhbE1vdmVFdmlkZW5jZUgAEjIKCnJlcGV0aXRpb24YDCABKAsyHC5zaG9naS52MS5SZXBldGl0aW9uRXZpZGVuY2VIABI7Cg9wZXJwZXR1YWxfY2hlY2sYDSABKAsyIC5zaG9naS52MS5QZXJwZXR1YWxDaGVja0V2aWRlbmNlSAASMgoLZGVjbGFyYXRpb24YDiABKAsyGy5zaG9naS52MS5EZWNsYXJhdGlvblJlcG9ydEgAEi0KCHRyeV9ydWxlGA8gASgLMhkuc2hvZ2kudjEuVHJ5UnVsZUV2aWRlbmNlSAASLwoJbWF4X21vdmVzGBAgASgLMhouc2hvZ2kudjEuTWF4TW92ZXNFdmlkZW5jZUgAEi4KCHJlcG9ydGVkGBEgASgLMhouc2hvZ2kudjEuUmVwb3J0ZWRFdmlkZW5jZUgAEhEKCWNvZGVfbmFtZRgUIAEoCUIKCghldmlkZW5jZSKkAQoHV2FybmluZxIPCgdnYW1lX2lkGAEgASgJEgsKA3BseRgCIAEoDRI1ChB0aGlyZF9vY2N1cnJlbmNlGAogASgLMhkuc2hvZ2kudjEuVGhpcmRPY2N1cnJlbmNlSAASPAoUcGVycGV0dWFsX2NoZWNrX3Jpc2sYCyABKAsyHC5zaG9naS52MS5QZXJwZXR1YWxDaGVja1Jpc2tIAEIGCgRraW5kIiAKD1RoaXJkT2NjdXJyZW5jZRINCgVwbGllcxgBIAMoDSJJChJQZXJwZXR1YWxDaGVja1Jpc2sSIAoHY2hlY2tlchgBIAEoDjIPLnNob2dpLnYxLkNvbG9yEhEKCXNpbmNlX3BseRgCIAEoDSLyAQoJR2FtZVN0YXRlEg8KB2dhbWVfaWQYASABKAkSIgoHcnVsZXNldBgCIAEoCzIRLnNob2dpLnYxLlJ1bGVzZXQSEgoKc3RhcnRfc2ZlbhgDIAEoCRIMCgRzZmVuGAQgASgJEgsKA3BseRgFIAEoDRIlCgxzaWRlX3RvX21vdmUYBiABKA4yDy5zaG9naS52MS5Db2xvchIQCghpbl9jaGVjaxgHIAEoCBINCgVtb3ZlcxgIIAMoCRIiCgd2ZXJkaWN0GAkgASgLMhEuc2hvZ2kudjEuVmVyZGljdBIVCg1wb3NpdGlvbl9oYXNoGAogASgGIngKC0dhbWVDcmVhdGVkEg8KB2dhbWVfaWQYASABKAkSIgoHcnVsZXNldBgCIAEoCzIRLnNob2dpLnYxLlJ1bGVzZXQSEgoKc3RhcnRfc2ZlbhgDIAEoCRIQCghoYW5kaWNhcBgEIAEoCRIOCgZzdHJpY3QYBSABKAgieQoMTW92ZUFjY2VwdGVkEg8KB2dhbWVfaWQYASABKAkSCwoDcGx5GAIgASgNEgsKA3VzaRgDIAEoCRISCgpzZmVuX2FmdGVyGAQgASgJEhMKC2dpdmVzX2NoZWNrGAUgASgIEhUKDXBvc2l0aW9uX2hhc2gYBiABKAYijQEKC0RlY2xhcmF0aW9uEg8KB2dhbWVfaWQYASABKAkSCwoDcGx5GAIgASgNEiEKCGRlY2xhcmVyGAMgASgOMg8uc2hvZ2kudjEuQ29sb3ISEAoIaGFzX3RpbWUYBCABKAgSKwoGcmVwb3J0GAUgASgLMhsuc2hvZ2kudjEuRGVjbGFyYXRpb25SZXBvcnQiUAoNU3RhcnRQb3NpdGlvbhISCghzdGFydHBvcxgBIAEoCEgAEg4KBHNmZW4YAiABKAlIABISCghoYW5kaWNhcBgDIAEoCUgAQgcKBXN0YXJ0IoABChFDcmVhdGVHYW1lUmVxdWVzdBIiCgdydWxlc2V0GAEgASgLMhEuc2hvZ2kudjEuUnVsZXNldBImCgVzdGFydBgCIAEoCzIXLnNob2dpLnYxLlN0YXJ0UG9zaXRpb24SDwoHZ2FtZV9pZBgDIAEoCRIOCgZzdHJpY3QYBCABKAgiNwoSQ3JlYXRlR2FtZVJlc3BvbnNlEiEKBGdhbWUYASABKAsyEy5zaG9naS52MS5HYW1lU3RhdGUiTgoRU3VibWl0TW92ZVJlcXVlc3QSDwoHZ2FtZV9pZBgBIAEoCRILCgNwbHkYAiABKA0SCwoDdXNpGAMgASgJEg4KBnN0cmljdBgEIAEoCCL/AQoSU3VibWl0TW92ZVJlc3BvbnNlEiYKB291dGNvbWUYASABKA4yFS5zaG9naS52MS5Nb3ZlT3V0Y29tZRIrCgxpbGxlZ2FsX2tpbmQYAiABKA4yFS5zaG9naS52MS5JbGxlZ2FsS2luZBILCgNwbHkYAyABKA0SEgoKc2Zlbl9hZnRlchgEIAEoCRITCgtnaXZlc19jaGVjaxgFIAEoCBIiCgd2ZXJkaWN0GAYgASgLMhEuc2hvZ2kudjEuVmVyZGljdBIjCgh3YXJuaW5ncxgHIAMoCzIRLnNob2dpLnYxLldhcm5pbmcSFQoNcG9zaXRpb25faGFzaBgIIAEoBiIwChNWYWxpZGF0ZU1vdmVSZXF1ZXN0EgwKBHNmZW4YASABKAkSCwoDdXNpGAIgASgJItsBChRWYWxpZGF0ZU1vdmVSZXNwb25zZRINCgVsZWdhbBgBIAEoCBIrCgxpbGxlZ2FsX2tpbmQYAiABKA4yFS5zaG9naS52MS5JbGxlZ2FsS2luZBISCgpzZmVuX2FmdGVyGAMgASgJEhMKC2dpdmVzX2NoZWNrGAQgASgIEhQKDGlzX2NoZWNrbWF0ZRgFIAEoCBIWCg5ub19sZWdhbF9yZXBseRgGIAEoCBIVCg1wb3NpdGlvbl9oYXNoGAcgASgGEhkKEWlsbGVnYWxfa2luZF9uYW1lGAggASgJIlYKDkRlY2xhcmVSZXF1ZXN0Eg8KB2dhbWVfaWQYASABKAkSIQoIZGVjbGFyZXIYAiABKA4yDy5zaG9naS52MS5Db2xvchIQCghoYXNfdGltZRgDIAEoCCJiCg9EZWNsYXJlUmVzcG9uc2USKwoGcmVwb3J0GAEgASgLMhsuc2hvZ2kudjEuRGVjbGFyYXRpb25SZXBvcnQSIgoHdmVyZGljdBgCIAEoCzIRLnNob2dpLnYxLlZlcmRpY3QiewoWRXZhbHVhdGVJbXBhc3NlUmVxdWVzdBIRCgdnYW1lX2lkGAEgASgJSAASDgoEc2ZlbhgCIAEoCUgAEgwKBHJ1bGUYAyABKAkSFAoMaW5pdGlhbF9zZmVuGAQgASgJEhAKCGhhc190aW1lGAUgASgIQggKBnRhcmdldCJGChdFdmFsdWF0ZUltcGFzc2VSZXNwb25zZRIrCgZyZXBvcnQYASABKAsyGy5zaG9naS52MS5EZWNsYXJhdGlvblJlcG9ydCIhCg5HZXRHYW1lUmVxdWVzdBIPCgdnYW1lX2lkGAEgASgJIjQKD0dldEdhbWVSZXNwb25zZRIhCgRnYW1lGAEgASgLMhMuc2hvZ2kudjEuR2FtZVN0YXRlIjUKEFdhdGNoR2FtZVJlcXVlc3QSDwoHZ2FtZV9pZBgBIAEoCRIQCghmcm9tX3BseRgCIAEoDSL6AQoRV2F0Y2hHYW1lUmVzcG9uc2USEAoIc2VxdWVuY2UYASABKAQSKAoHY3JlYXRlZBgKIAEoCzIVLnNob2dpLnYxLkdhbWVDcmVhdGVkSAASJgoEbW92ZRgLIAEoCzIWLnNob2dpLnYxLk1vdmVBY2NlcHRlZEgAEiwKC2RlY2xhcmF0aW9uGAwgASgLMhUuc2hvZ2kudjEuRGVjbGFyYXRpb25IABIkCgd3YXJuaW5nGA0gASgLMhEuc2hvZ2kudjEuV2FybmluZ0gAEiQKB3ZlcmRpY3QYDiABKAsyES5zaG9naS52MS5WZXJkaWN0SABCBwoFZXZlbnQiZgoORW5kR2FtZVJlcXVlc3QSDwoHZ2FtZV9pZBgBIAEoCRIjCgZyZWFzb24YAiABKA4yEy5zaG9naS52MS5FbmRSZWFzb24SHgoFbG9zZXIYAyABKA4yDy5zaG9naS52MS5Db2xvciI1Cg9FbmRHYW1lUmVzcG9uc2USIgoHdmVyZGljdBgBIAEoCzIRLnNob2dpLnYxLlZlcmRpY3QiIQoRTGVnYWxNb3Zlc1JlcXVlc3QSDAoEc2ZlbhgBIAEoCSI1ChJMZWdhbE1vdmVzUmVzcG9uc2USDQoFbW92ZXMYASADKAkSEAoIaW5fY2hlY2sYAiABKAgiTAoQTGlzdEdhbWVzUmVxdWVzdBIRCglwYWdlX3NpemUYASABKA0SEgoKcGFnZV90b2tlbhgCIAEoCRIRCglsaXZlX29ubHkYAyABKAgigAEKC0dhbWVTdW1tYXJ5Eg8KB2dhbWVfaWQYASABKAkSGAoQY3JlYXRlZF9zZXF1ZW5jZRgCIAEoBBIOCgZwcmVzZXQYAyABKAkSEgoKc3RhcnRfc2ZlbhgEIAEoCRIiCgd2ZXJkaWN0GAUgASgLMhEuc2hvZ2kudjEuVmVyZGljdCJSChFMaXN0R2FtZXNSZXNwb25zZRIkCgVnYW1lcxgBIAMoCzIVLnNob2dpLnYxLkdhbWVTdW1tYXJ5EhcKD25leHRfcGFnZV90b2tlbhgCIAEoCSKjAQoQUG9zaXRpb25BbmFseXNpcxILCgNwbHkYASABKA0SCwoDdXNpGAIgASgJEhIKCmdhdmVfY2hlY2sYAyABKAgSEgoKb2NjdXJyZW5jZRgEIAEoDRIVCg1lYXJsaWVyX3BsaWVzGAUgAygNEhoKEmJsYWNrX2NoZWNrX3N0cmVhaxgGIAEoDRIaChJ3aGl0ZV9jaGVja19zdHJlYWsYByABKA0iJQoSQW5hbHl6ZUdhbWVSZXF1ZXN0Eg8KB2dhbWVfaWQYASABKAki/AEKE0FuYWx5emVHYW1lUmVzcG9uc2USIQoEZ2FtZRgBIAEoCzITLnNob2dpLnYxLkdhbWVTdGF0ZRItCglwb3NpdGlvbnMYAiADKAsyGi5zaG9naS52MS5Qb3NpdGlvbkFuYWx5c2lzEjYKEWJsYWNrX2RlY2xhcmF0aW9uGAMgASgLMhsuc2hvZ2kudjEuRGVjbGFyYXRpb25SZXBvcnQSNgoRd2hpdGVfZGVjbGFyYXRpb24YBCABKAsyGy5zaG9naS52MS5EZWNsYXJhdGlvblJlcG9ydBIjCgh3YXJuaW5ncxgFIAMoCzIRLnNob2dpLnYxLldhcm5pbmciOQoOUGFydGl0aW9uTGVhc2USDgoGaG9sZGVyGAEgASgJEhcKD2V4cGlyZXNfdW5peF9tcxgCIAEoAyIxCgZNZW1iZXISDgoGaG9sZGVyGAEgASgJEhcKD2V4cGlyZXNfdW5peF9tcxgCIAEoAypACgVDb2xvchIVChFDT0xPUl9VTlNQRUNJRklFRBAAEg8KC0NPTE9SX0JMQUNLEAESDwoLQ09MT1JfV0hJVEUQAiqGAgoLSWxsZWdhbEtpbmQSHAoYSUxMRUdBTF9LSU5EX1VOU1BFQ0lGSUVEEAASGgoWSUxMRUdBTF9LSU5EX1RXT19QQVdOUxABEh8KG0lMTEVHQUxfS0lORF9QQVdOX0RST1BfTUFURRACEhsKF0lMTEVHQUxfS0lORF9ERUFEX1BJRUNFEAMSJQohSUxMRUdBTF9LSU5EX0xFQVZFU19LSU5HX0lOX0NIRUNLEAQSGwoXSUxMRUdBTF9LSU5EX0lNUE9TU0lCTEUQBRIbChdJTExFR0FMX0tJTkRfV1JPTkdfVFVSThAGEh4KFklMTEVHQUxfS0lORF9HQU1FX09WRVIQBxoCCAEq+QIKClJlc3VsdENvZGUSGwoXUkVTVUxUX0NPREVfVU5TUEVDSUZJRUQQABIZChVSRVNVTFRfQ09ERV9DSEVDS01BVEUQARIeChpSRVNVTFRfQ09ERV9OT19MRUdBTF9NT1ZFUxACEhwKGFJFU1VMVF9DT0RFX0lMTEVHQUxfTU9WRRADEhoKFlJFU1VMVF9DT0RFX1JFUEVUSVRJT04QBBIfChtSRVNVTFRfQ09ERV9QRVJQRVRVQUxfQ0hFQ0sQBRIbChdSRVNVTFRfQ09ERV9ERUNMQVJBVElPThAGEhgKFFJFU1VMVF9DT0RFX1RSWV9SVUxFEAcSGQoVUkVTVUxUX0NPREVfTUFYX01PVkVTEAgSGwoXUkVTVUxUX0NPREVfUkVTSUdOQVRJT04QCRIXChNSRVNVTFRfQ09ERV9USU1FT1VUEAoSFQoRUkVTVUxUX0NPREVfQUJPUlQQCxIZChVSRVNVTFRfQ09ERV9BR1JFRU1FTlQQDCpnCg5PcmRpbmFyeVJlc3VsdBIfChtPUkRJTkFSWV9SRVNVTFRfVU5TUEVDSUZJRUQQABIYChRPUkRJTkFSWV9SRVNVTFRfRFJBVxABEhoKFk9SRElOQVJZX1JFU1VMVF9SRVBMQVkQAip5ChFJbGxlZ2FsTW92ZVBvbGljeRIjCh9JTExFR0FMX01PVkVfUE9MSUNZX1VOU1BFQ0lGSUVEEAASHgoaSUxMRUdBTF9NT1ZFX1BPTElDWV9SRUpFQ1QQARIfChtJTExFR0FMX01PVkVfUE9MSUNZX0ZPUkZFSVQQAiqJAQoPRGVjbGFyYXRpb25SdWxlEiAKHERFQ0xBUkFUSU9OX1JVTEVfVU5TUEVDSUZJRUQQABIZChVERUNMQVJBVElPTl9SVUxFX05PTkUQARIdChlERUNMQVJBVElPTl9SVUxFX1BPSU5UUzI3EAISGgoWREVDTEFSQVRJT05fUlVMRV9KU0EyNBADKn4KEkRlY2xhcmF0aW9uVHJpZ2dlchIjCh9ERUNMQVJBVElPTl9UUklHR0VSX1VOU1BFQ0lGSUVEEAASIAocREVDTEFSQVRJT05fVFJJR0dFUl9FWFBMSUNJVBABEiEKHURFQ0xBUkFUSU9OX1RSSUdHRVJfQVVUT01BVElDEAIqcwoRRmFpbGVkRGVjbGFyYXRpb24SIgoeRkFJTEVEX0RFQ0xBUkFUSU9OX1VOU1BFQ0lGSUVEEAASGwoXRkFJTEVEX0RFQ0xBUkFUSU9OX0xPU1MQARIdChlGQUlMRURfREVDTEFSQVRJT05fUkVGVVNFEAIqTAoHQ2FwTW9kZRIYChRDQVBfTU9ERV9VTlNQRUNJRklFRBAAEhIKDkNBUF9NT0RFX1BMQUlOEAESEwoPQ0FQX01PREVfSlNBNTAwEAIqhAEKDEFncmVlbWVudFRpZRIdChlBR1JFRU1FTlRfVElFX1VOU1BFQ0lGSUVEEAASGQoVQUdSRUVNRU5UX1RJRV9KSVNIT0dJEAESHAoYQUdSRUVNRU5UX1RJRV9XSElURV9XSU5TEAISHAoYQUdSRUVNRU5UX1RJRV9CTEFDS19XSU5TEAMqfQoLTW92ZU91dGNvbWUSHAoYTU9WRV9PVVRDT01FX1VOU1BFQ0lGSUVEEAASGQoVTU9WRV9PVVRDT01FX0FDQ0VQVEVEEAESGQoVTU9WRV9PVVRDT01FX1JFSkVDVEVEEAISGgoWTU9WRV9PVVRDT01FX0ZPUkZFSVRFRBADKpMBCglFbmRSZWFzb24SGgoWRU5EX1JFQVNPTl9VTlNQRUNJRklFRBAAEhoKFkVORF9SRUFTT05fUkVTSUdOQVRJT04QARIWChJFTkRfUkVBU09OX1RJTUVPVVQQAhIUChBFTkRfUkVBU09OX0FCT1JUEAMSIAocRU5EX1JFQVNPTl9KSVNIT0dJX0FHUkVFTUVOVBAEKpIECgtFcnJvclJlYXNvbhIcChhFUlJPUl9SRUFTT05fVU5TUEVDSUZJRUQQABIgChxFUlJPUl9SRUFTT05fSU5WQUxJRF9SRVFVRVNUEAESIAocRVJST1JfUkVBU09OX0lOVkFMSURfUlVMRVNFVBACEh8KG0VSUk9SX1JFQVNPTl9HQU1FX05PVF9GT1VORBADEhwKGEVSUk9SX1JFQVNPTl9HQU1FX0VYSVNUUxAEEhoKFkVSUk9SX1JFQVNPTl9HQU1FX09WRVIQBRIoCiRFUlJPUl9SRUFTT05fREVDTEFSQVRJT05fTk9UX0FMTE9XRUQQBhIaChZFUlJPUl9SRUFTT05fUExZX1RBS0VOEAcSGgoWRVJST1JfUkVBU09OX1BMWV9BSEVBRBAIEhoKFkVSUk9SX1JFQVNPTl9DT05URU5ERUQQCRIgChxFUlJPUl9SRUFTT05fT1VUQ09NRV9VTktOT1dOEAoSIAocRVJST1JfUkVBU09OX0JVU19VTkFWQUlMQUJMRRALEiAKHEVSUk9SX1JFQVNPTl9WRVJESUNUX1BFTkRJTkcQDBIeChpFUlJPUl9SRUFTT05fU0hVVFRJTkdfRE9XThANEiAKHEVSUk9SX1JFQVNPTl9VTlJFQURBQkxFX0dBTUUQDhIgChxFUlJPUl9SRUFTT05fVU5BVVRIRU5USUNBVEVEEA8yqwYKDU1vdmVWYWxpZGF0b3ISRwoKQ3JlYXRlR2FtZRIbLnNob2dpLnYxLkNyZWF0ZUdhbWVSZXF1ZXN0Ghwuc2hvZ2kudjEuQ3JlYXRlR2FtZVJlc3BvbnNlEkcKClN1Ym1pdE1vdmUSGy5zaG9naS52MS5TdWJtaXRNb3ZlUmVxdWVzdBocLnNob2dpLnYxLlN1Ym1pdE1vdmVSZXNwb25zZRJNCgxWYWxpZGF0ZU1vdmUSHS5zaG9naS52MS5WYWxpZGF0ZU1vdmVSZXF1ZXN0Gh4uc2hvZ2kudjEuVmFsaWRhdGVNb3ZlUmVzcG9uc2USPgoHRGVjbGFyZRIYLnNob2dpLnYxLkRlY2xhcmVSZXF1ZXN0Ghkuc2hvZ2kudjEuRGVjbGFyZVJlc3BvbnNlElYKD0V2YWx1YXRlSW1wYXNzZRIgLnNob2dpLnYxLkV2YWx1YXRlSW1wYXNzZVJlcXVlc3QaIS5zaG9naS52MS5FdmFsdWF0ZUltcGFzc2VSZXNwb25zZRI+CgdHZXRHYW1lEhguc2hvZ2kudjEuR2V0R2FtZVJlcXVlc3QaGS5zaG9naS52MS5HZXRHYW1lUmVzcG9uc2USRgoJV2F0Y2hHYW1lEhouc2hvZ2kudjEuV2F0Y2hHYW1lUmVxdWVzdBobLnNob2dpLnYxLldhdGNoR2FtZVJlc3BvbnNlMAESPgoHRW5kR2FtZRIYLnNob2dpLnYxLkVuZEdhbWVSZXF1ZXN0Ghkuc2hvZ2kudjEuRW5kR2FtZVJlc3BvbnNlEkcKCkxlZ2FsTW92ZXMSGy5zaG9naS52MS5MZWdhbE1vdmVzUmVxdWVzdBocLnNob2dpLnYxLkxlZ2FsTW92ZXNSZXNwb25zZRJECglMaXN0R2FtZXMSGi5zaG9naS52MS5MaXN0R2FtZXNSZXF1ZXN0Ghsuc2hvZ2kudjEuTGlzdEdhbWVzUmVzcG9uc2USSgoLQW5hbHl6ZUdhbWUSHC5zaG9naS52MS5BbmFseXplR2FtZVJlcXVlc3QaHS5zaG9naS52MS5BbmFseXplR2FtZVJlc3BvbnNlYgZwcm90bzM");

/**
 * A ruleset: a named preset and any overrides of its options.
 *
 * CreateGame checks the resulting options (shogi_adjudication::Ruleset::validate) and refuses a
 * ruleset with a value out of range or with options that contradict each other: INVALID_ARGUMENT,
 * ErrorInfo reason `INVALID_RULESET`, and a google.rpc.BadRequest with one field violation per
 * option at fault, named `ruleset.overrides.<field>` (`ruleset.preset` for an unknown preset),
 * even when the value at fault came from the preset. The contradictions:
 * DECLARATION_TRIGGER_AUTOMATIC with DECLARATION_RULE_NONE (field `declaration_trigger`), and
 * `csa_server_cap` with CAP_MODE_JSA500 (field `csa_server_cap`). Options that merely have no
 * effect are allowed, so that one override never forces another: a cap mode or the CSA server's
 * cap without a cap, an explicit trigger or a failed-declaration choice without a declaration
 * rule.
 *
 * @generated from message shogi.v1.Ruleset
 */
export type Ruleset = Message<"shogi.v1.Ruleset"> & {
  /**
   * One of `jsa`, `amateur`, `csa`, `online`, `floodgate`. Empty means `jsa`.
   *
   * @generated from field: string preset = 1;
   */
  preset: string;

  /**
   * Options that replace the preset's; unset fields keep the preset's value.
   *
   * @generated from field: shogi.v1.RulesetOverrides overrides = 2;
   */
  overrides?: RulesetOverrides | undefined;
};

/**
 * Describes the message shogi.v1.Ruleset.
 * Use `create(RulesetSchema)` to create a new message.
 */
export const RulesetSchema: GenMessage<Ruleset> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 0);

/**
 * Overrides of a preset, one optional field per ruleset option of RULES.md. An unset field (or an
 * UNSPECIFIED enum value) keeps the preset's value.
 *
 * @generated from message shogi.v1.RulesetOverrides
 */
export type RulesetOverrides = Message<"shogi.v1.RulesetOverrides"> & {
  /**
   * Reject or forfeit an illegal move (section 1).
   *
   * @generated from field: shogi.v1.IllegalMovePolicy illegal_move = 1;
   */
  illegalMove: IllegalMovePolicy;

  /**
   * The result of an ordinary repetition (section 3).
   *
   * @generated from field: shogi.v1.OrdinaryResult repetition = 2;
   */
  repetition: OrdinaryResult;

  /**
   * Whether the start position counts as occurrence 1 (section 2; false reproduces the CSA
   * server).
   *
   * @generated from field: optional bool start_position_counted = 3;
   */
  startPositionCounted?: boolean | undefined;

  /**
   * The declaration rule, or DECLARATION_RULE_NONE for no declarations (section 4).
   *
   * @generated from field: shogi.v1.DeclarationRule declaration = 4;
   */
  declaration: DeclarationRule;

  /**
   * Explicit or automatic declarations (section 4).
   *
   * @generated from field: shogi.v1.DeclarationTrigger declaration_trigger = 5;
   */
  declarationTrigger: DeclarationTrigger;

  /**
   * Whether a failed declaration loses or is refused (section 4).
   *
   * @generated from field: shogi.v1.FailedDeclaration failed_declaration = 6;
   */
  failedDeclaration: FailedDeclaration;

  /**
   * The result of a jishogi (sections 4 and 5).
   *
   * @generated from field: shogi.v1.OrdinaryResult jishogi = 7;
   */
  jishogi: OrdinaryResult;

  /**
   * Whether White (the handicap giver) is credited with the missing pieces (section 4).
   *
   * @generated from field: optional bool handicap_credit = 8;
   */
  handicapCredit?: boolean | undefined;

  /**
   * Whether the try rule is in force (section 4).
   *
   * @generated from field: optional bool try_rule = 9;
   */
  tryRule?: boolean | undefined;

  /**
   * The move cap in plies, 1 to 10000; 0 means no cap (section 5). Above 10000 is refused: the
   * longest cap an authority uses is 700 plies (Lishogi).
   *
   * @generated from field: optional uint32 move_cap = 10;
   */
  moveCap?: number | undefined;

  /**
   * How the cap ends the game (section 5).
   *
   * @generated from field: shogi.v1.CapMode cap_mode = 11;
   */
  capMode: CapMode;

  /**
   * Reproduce the CSA server's early cap (section 5).
   *
   * @generated from field: optional bool csa_server_cap = 12;
   */
  csaServerCap?: boolean | undefined;

  /**
   * The agreement-counting threshold in points, 24 to 27 (section 4: the JSA counts at 24,
   * amateur events at 27). Other values are refused: above 27 both sides can be under it (the
   * pieces total 54 points), so the count decides nothing; below 24 no authority counts.
   *
   * @generated from field: optional uint32 agreement_threshold = 13;
   */
  agreementThreshold?: number | undefined;

  /**
   * The agreement-count result at a tie (section 4).
   *
   * @generated from field: shogi.v1.AgreementTie agreement_tie = 14;
   */
  agreementTie: AgreementTie;
};

/**
 * Describes the message shogi.v1.RulesetOverrides.
 * Use `create(RulesetOverridesSchema)` to create a new message.
 */
export const RulesetOverridesSchema: GenMessage<RulesetOverrides> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 1);

/**
 * Evidence of a checkmate: the mating ply and move.
 *
 * @generated from message shogi.v1.CheckmateEvidence
 */
export type CheckmateEvidence = Message<"shogi.v1.CheckmateEvidence"> & {
  /**
   * The ply that mated (0 for a game that starts mated).
   *
   * @generated from field: uint32 mating_ply = 1;
   */
  matingPly: number;

  /**
   * The mating move in USI; empty for a game that starts mated.
   *
   * @generated from field: string mating_move = 2;
   */
  matingMove: string;
};

/**
 * Describes the message shogi.v1.CheckmateEvidence.
 * Use `create(CheckmateEvidenceSchema)` to create a new message.
 */
export const CheckmateEvidenceSchema: GenMessage<CheckmateEvidence> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 2);

/**
 * Evidence of a forfeited illegal move.
 *
 * @generated from message shogi.v1.IllegalMoveEvidence
 */
export type IllegalMoveEvidence = Message<"shogi.v1.IllegalMoveEvidence"> & {
  /**
   * Why the move is illegal.
   *
   * @generated from field: shogi.v1.IllegalKind kind = 1;
   */
  kind: IllegalKind;

  /**
   * The move as played, USI.
   *
   * @generated from field: string usi = 2;
   */
  usi: string;
};

/**
 * Describes the message shogi.v1.IllegalMoveEvidence.
 * Use `create(IllegalMoveEvidenceSchema)` to create a new message.
 */
export const IllegalMoveEvidenceSchema: GenMessage<IllegalMoveEvidence> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 3);

/**
 * Evidence of an ordinary fourfold repetition.
 *
 * @generated from message shogi.v1.RepetitionEvidence
 */
export type RepetitionEvidence = Message<"shogi.v1.RepetitionEvidence"> & {
  /**
   * The plies of the four occurrences, F first and N last.
   *
   * @generated from field: repeated uint32 plies = 1;
   */
  plies: number[];

  /**
   * Whether both sides checked on every move in F+1..N (judged as ordinary, flagged).
   *
   * @generated from field: bool mutual_check = 2;
   */
  mutualCheck: boolean;
};

/**
 * Describes the message shogi.v1.RepetitionEvidence.
 * Use `create(RepetitionEvidenceSchema)` to create a new message.
 */
export const RepetitionEvidenceSchema: GenMessage<RepetitionEvidence> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 4);

/**
 * Evidence of a perpetual check.
 *
 * @generated from message shogi.v1.PerpetualCheckEvidence
 */
export type PerpetualCheckEvidence = Message<"shogi.v1.PerpetualCheckEvidence"> & {
  /**
   * The plies of the four occurrences, F first and N last.
   *
   * @generated from field: repeated uint32 plies = 1;
   */
  plies: number[];

  /**
   * The side that checked on every move, and so loses.
   *
   * @generated from field: shogi.v1.Color checker = 2;
   */
  checker: Color;

  /**
   * Every ply of the checker in F+1..N (each gave check).
   *
   * @generated from field: repeated uint32 check_plies = 3;
   */
  checkPlies: number[];
};

/**
 * Describes the message shogi.v1.PerpetualCheckEvidence.
 * Use `create(PerpetualCheckEvidenceSchema)` to create a new message.
 */
export const PerpetualCheckEvidenceSchema: GenMessage<PerpetualCheckEvidence> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 5);

/**
 * One condition of a declaration and whether it holds.
 *
 * @generated from message shogi.v1.DeclarationConditionResult
 */
export type DeclarationConditionResult = Message<"shogi.v1.DeclarationConditionResult"> & {
  /**
   * `declarers_turn`, `game_not_over`, `king_in_camp`, `pieces_in_camp`, `not_in_check`,
   * `has_time`, `before_move_cap` or `points`.
   *
   * @generated from field: string name = 1;
   */
  name: string;

  /**
   * Whether the condition holds.
   *
   * @generated from field: bool met = 2;
   */
  met: boolean;
};

/**
 * Describes the message shogi.v1.DeclarationConditionResult.
 * Use `create(DeclarationConditionResultSchema)` to create a new message.
 */
export const DeclarationConditionResultSchema: GenMessage<DeclarationConditionResult> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 6);

/**
 * The declaration calculator's report (RULES.md section 4).
 *
 * @generated from message shogi.v1.DeclarationReport
 */
export type DeclarationReport = Message<"shogi.v1.DeclarationReport"> & {
  /**
   * `points27` or `jsa24`.
   *
   * @generated from field: string rule = 1;
   */
  rule: string;

  /**
   * The declaring side.
   *
   * @generated from field: shogi.v1.Color declarer = 2;
   */
  declarer: Color;

  /**
   * `win`, `jishogi`, `loss` or `refused`.
   *
   * @generated from field: string outcome = 3;
   */
  outcome: string;

  /**
   * Each condition with whether it holds, in the order of RULES.md.
   *
   * @generated from field: repeated shogi.v1.DeclarationConditionResult conditions = 4;
   */
  conditions: DeclarationConditionResult[];

  /**
   * The declarer's pieces other than the king in the target camp.
   *
   * @generated from field: uint32 pieces_in_camp = 5;
   */
  piecesInCamp: number;

  /**
   * Whether the declarer's king is in the target camp.
   *
   * @generated from field: bool king_in_camp = 6;
   */
  kingInCamp: boolean;

  /**
   * Whether the declarer's king is in check.
   *
   * @generated from field: bool in_check = 7;
   */
  inCheck: boolean;

  /**
   * Whether the declarer's clock had time left.
   *
   * @generated from field: bool has_time = 8;
   */
  hasTime: boolean;

  /**
   * Points of the declarer's pieces in the target camp.
   *
   * @generated from field: uint32 points_in_camp = 9;
   */
  pointsInCamp: number;

  /**
   * Points of the declarer's pieces in hand.
   *
   * @generated from field: uint32 points_in_hand = 10;
   */
  pointsInHand: number;

  /**
   * The handicap credit counted for White.
   *
   * @generated from field: uint32 credit = 11;
   */
  credit: number;

  /**
   * Total points counted.
   *
   * @generated from field: uint32 points = 12;
   */
  points: number;

  /**
   * Points needed to win.
   *
   * @generated from field: uint32 points_to_win = 13;
   */
  pointsToWin: number;

  /**
   * Points short of a win (0 when enough).
   *
   * @generated from field: uint32 points_missing = 14;
   */
  pointsMissing: number;
};

/**
 * Describes the message shogi.v1.DeclarationReport.
 * Use `create(DeclarationReportSchema)` to create a new message.
 */
export const DeclarationReportSchema: GenMessage<DeclarationReport> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 7);

/**
 * Evidence of a try-rule win.
 *
 * @generated from message shogi.v1.TryRuleEvidence
 */
export type TryRuleEvidence = Message<"shogi.v1.TryRuleEvidence"> & {
  /**
   * The king move that reached the square, USI.
   *
   * @generated from field: string usi = 1;
   */
  usi: string;
};

/**
 * Describes the message shogi.v1.TryRuleEvidence.
 * Use `create(TryRuleEvidenceSchema)` to create a new message.
 */
export const TryRuleEvidenceSchema: GenMessage<TryRuleEvidence> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 8);

/**
 * Evidence of a move-cap ending.
 *
 * @generated from message shogi.v1.MaxMovesEvidence
 */
export type MaxMovesEvidence = Message<"shogi.v1.MaxMovesEvidence"> & {
  /**
   * The cap N in plies.
   *
   * @generated from field: uint32 cap = 1;
   */
  cap: number;

  /**
   * Whether play went past ply N because the checks went on (JSA 500-move rule).
   *
   * @generated from field: bool extended_by_checks = 2;
   */
  extendedByChecks: boolean;
};

/**
 * Describes the message shogi.v1.MaxMovesEvidence.
 * Use `create(MaxMovesEvidenceSchema)` to create a new message.
 */
export const MaxMovesEvidenceSchema: GenMessage<MaxMovesEvidence> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 9);

/**
 * Evidence of an ending the platform reported (resignation, timeout, abort, agreement).
 *
 * @generated from message shogi.v1.ReportedEvidence
 */
export type ReportedEvidence = Message<"shogi.v1.ReportedEvidence"> & {
  /**
   * Free text from the platform, if any.
   *
   * @generated from field: string note = 1;
   */
  note: string;
};

/**
 * Describes the message shogi.v1.ReportedEvidence.
 * Use `create(ReportedEvidenceSchema)` to create a new message.
 */
export const ReportedEvidenceSchema: GenMessage<ReportedEvidence> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 10);

/**
 * How a game ended: a value, never an error (RULES.md section 7). Stored once per game on
 * `shogi.game.<game_id>.verdict` and republished by the stream on core NATS as
 * `shogi.verdict.<game_id>` (see the top of this file). A move or declaration after the end gets
 * it in the details of a FAILED_PRECONDITION status (ErrorReason GAME_OVER).
 *
 * @generated from message shogi.v1.Verdict
 */
export type Verdict = Message<"shogi.v1.Verdict"> & {
  /**
   * The game this verdict ends (set on the bus; also set in RPC answers).
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The result code.
   *
   * @generated from field: shogi.v1.ResultCode code = 2;
   */
  code: ResultCode;

  /**
   * The winner, or COLOR_UNSPECIFIED when there is none.
   *
   * @generated from field: shogi.v1.Color winner = 3;
   */
  winner: Color;

  /**
   * The ply of the move that ended the game; for a declaration, the plies played before it.
   *
   * @generated from field: uint32 ply = 4;
   */
  ply: number;

  /**
   * For a result without a winner: draw or replay.
   *
   * @generated from field: shogi.v1.OrdinaryResult ordinary_result = 5;
   */
  ordinaryResult: OrdinaryResult;

  /**
   * What the verdict rests on, one shape per result code.
   *
   * @generated from oneof shogi.v1.Verdict.evidence
   */
  evidence: {
    /**
     * RESULT_CODE_CHECKMATE.
     *
     * @generated from field: shogi.v1.CheckmateEvidence checkmate = 10;
     */
    value: CheckmateEvidence;
    case: "checkmate";
  } | {
    /**
     * RESULT_CODE_ILLEGAL_MOVE.
     *
     * @generated from field: shogi.v1.IllegalMoveEvidence illegal_move = 11;
     */
    value: IllegalMoveEvidence;
    case: "illegalMove";
  } | {
    /**
     * RESULT_CODE_REPETITION.
     *
     * @generated from field: shogi.v1.RepetitionEvidence repetition = 12;
     */
    value: RepetitionEvidence;
    case: "repetition";
  } | {
    /**
     * RESULT_CODE_PERPETUAL_CHECK.
     *
     * @generated from field: shogi.v1.PerpetualCheckEvidence perpetual_check = 13;
     */
    value: PerpetualCheckEvidence;
    case: "perpetualCheck";
  } | {
    /**
     * RESULT_CODE_DECLARATION.
     *
     * @generated from field: shogi.v1.DeclarationReport declaration = 14;
     */
    value: DeclarationReport;
    case: "declaration";
  } | {
    /**
     * RESULT_CODE_TRY_RULE.
     *
     * @generated from field: shogi.v1.TryRuleEvidence try_rule = 15;
     */
    value: TryRuleEvidence;
    case: "tryRule";
  } | {
    /**
     * RESULT_CODE_MAX_MOVES.
     *
     * @generated from field: shogi.v1.MaxMovesEvidence max_moves = 16;
     */
    value: MaxMovesEvidence;
    case: "maxMoves";
  } | {
    /**
     * RESULT_CODE_RESIGNATION, TIMEOUT, ABORT, AGREEMENT.
     *
     * @generated from field: shogi.v1.ReportedEvidence reported = 17;
     */
    value: ReportedEvidence;
    case: "reported";
  } | { case: undefined; value?: undefined };

  /**
   * The result code as RULES.md writes it (`checkmate`, `perpetual_check`, ...), for readers
   * that log it.
   *
   * @generated from field: string code_name = 20;
   */
  codeName: string;
};

/**
 * Describes the message shogi.v1.Verdict.
 * Use `create(VerdictSchema)` to create a new message.
 */
export const VerdictSchema: GenMessage<Verdict> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 11);

/**
 * An early warning, issued after a ply that did not end the game. Published on
 * `shogi.game.<game_id>.warning`.
 *
 * @generated from message shogi.v1.Warning
 */
export type Warning = Message<"shogi.v1.Warning"> & {
  /**
   * The game.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The ply just played.
   *
   * @generated from field: uint32 ply = 2;
   */
  ply: number;

  /**
   * What the warning is about.
   *
   * @generated from oneof shogi.v1.Warning.kind
   */
  kind: {
    /**
     * The position occurred for the 3rd time: one more ends the game.
     *
     * @generated from field: shogi.v1.ThirdOccurrence third_occurrence = 10;
     */
    value: ThirdOccurrence;
    case: "thirdOccurrence";
  } | {
    /**
     * One side would lose by perpetual check if the position occurs once more.
     *
     * @generated from field: shogi.v1.PerpetualCheckRisk perpetual_check_risk = 11;
     */
    value: PerpetualCheckRisk;
    case: "perpetualCheckRisk";
  } | { case: undefined; value?: undefined };
};

/**
 * Describes the message shogi.v1.Warning.
 * Use `create(WarningSchema)` to create a new message.
 */
export const WarningSchema: GenMessage<Warning> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 12);

/**
 * The position after a ply occurred for the 3rd time (RULES.md section 3).
 *
 * @generated from message shogi.v1.ThirdOccurrence
 */
export type ThirdOccurrence = Message<"shogi.v1.ThirdOccurrence"> & {
  /**
   * The plies of the three occurrences, ascending.
   *
   * @generated from field: repeated uint32 plies = 1;
   */
  plies: number[];
};

/**
 * Describes the message shogi.v1.ThirdOccurrence.
 * Use `create(ThirdOccurrenceSchema)` to create a new message.
 */
export const ThirdOccurrenceSchema: GenMessage<ThirdOccurrence> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 13);

/**
 * A side has checked on every move since the first of three occurrences (RULES.md section 3).
 *
 * @generated from message shogi.v1.PerpetualCheckRisk
 */
export type PerpetualCheckRisk = Message<"shogi.v1.PerpetualCheckRisk"> & {
  /**
   * The side that would lose.
   *
   * @generated from field: shogi.v1.Color checker = 1;
   */
  checker: Color;

  /**
   * The ply of the first occurrence (F).
   *
   * @generated from field: uint32 since_ply = 2;
   */
  sincePly: number;
};

/**
 * Describes the message shogi.v1.PerpetualCheckRisk.
 * Use `create(PerpetualCheckRiskSchema)` to create a new message.
 */
export const PerpetualCheckRiskSchema: GenMessage<PerpetualCheckRisk> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 14);

/**
 * A game's state as the validator knows it.
 *
 * @generated from message shogi.v1.GameState
 */
export type GameState = Message<"shogi.v1.GameState"> & {
  /**
   * The game id.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The EFFECTIVE ruleset, the rules the game is judged by: `preset` is the preset the game was
   * created from (`jsa` when none was given), and `overrides` has every field set to the game's
   * value, the preset's expanded: no enum is UNSPECIFIED, every optional field is present,
   * `declaration` is DECLARATION_RULE_NONE when there are no declarations and `move_cap` is 0
   * when there is no cap. A client reads the rules without knowing the presets, and a CreateGame
   * with this ruleset makes a game with the same rules whatever the presets become.
   *
   * @generated from field: shogi.v1.Ruleset ruleset = 2;
   */
  ruleset?: Ruleset | undefined;

  /**
   * The start position, SFEN.
   *
   * @generated from field: string start_sfen = 3;
   */
  startSfen: string;

  /**
   * The current position, SFEN.
   *
   * @generated from field: string sfen = 4;
   */
  sfen: string;

  /**
   * Plies played; the next move is ply `ply + 1`.
   *
   * @generated from field: uint32 ply = 5;
   */
  ply: number;

  /**
   * The side to move.
   *
   * @generated from field: shogi.v1.Color side_to_move = 6;
   */
  sideToMove: Color;

  /**
   * Whether the side to move is in check.
   *
   * @generated from field: bool in_check = 7;
   */
  inCheck: boolean;

  /**
   * The moves played, USI, in order (`moves[0]` is ply 1).
   *
   * @generated from field: repeated string moves = 8;
   */
  moves: string[];

  /**
   * The verdict once the game has ended.
   *
   * @generated from field: shogi.v1.Verdict verdict = 9;
   */
  verdict?: Verdict | undefined;

  /**
   * The 64-bit Zobrist hash of the current position (board, hands, side to move).
   *
   * @generated from field: fixed64 position_hash = 10;
   */
  positionHash: bigint;
};

/**
 * Describes the message shogi.v1.GameState.
 * Use `create(GameStateSchema)` to create a new message.
 */
export const GameStateSchema: GenMessage<GameState> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 15);

/**
 * Published on `shogi.game.<game_id>.created` when a game is created.
 *
 * @generated from message shogi.v1.GameCreated
 */
export type GameCreated = Message<"shogi.v1.GameCreated"> & {
  /**
   * The game id.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The ruleset as given.
   *
   * @generated from field: shogi.v1.Ruleset ruleset = 2;
   */
  ruleset?: Ruleset | undefined;

  /**
   * The start position, SFEN (a named handicap is resolved to its SFEN).
   *
   * @generated from field: string start_sfen = 3;
   */
  startSfen: string;

  /**
   * The named handicap the game started from, if any (`lance`, `two_piece`, ...).
   *
   * @generated from field: string handicap = 4;
   */
  handicap: string;

  /**
   * Strict mode for every move of this game (CreateGame called with the metadata
   * `shogi-strict: true`): SubmitMove answers a move that ends the game only once the verdict
   * is announced on `.verdict` by the service that owns it (the repetition-watcher or the
   * impasse-judge when they run). A single SubmitMove call asks for it with the same metadata.
   * Without it the answer is immediate and the announcement follows on the bus.
   *
   * @generated from field: bool strict = 5;
   */
  strict: boolean;
};

/**
 * Describes the message shogi.v1.GameCreated.
 * Use `create(GameCreatedSchema)` to create a new message.
 */
export const GameCreatedSchema: GenMessage<GameCreated> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 16);

/**
 * Published on `shogi.game.<game_id>.move.<p>` for each accepted move: the game's ordered log.
 *
 * @generated from message shogi.v1.MoveAccepted
 */
export type MoveAccepted = Message<"shogi.v1.MoveAccepted"> & {
  /**
   * The game id.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The ply this move is (1 for the first move).
   *
   * @generated from field: uint32 ply = 2;
   */
  ply: number;

  /**
   * The move, USI.
   *
   * @generated from field: string usi = 3;
   */
  usi: string;

  /**
   * The position after the move, SFEN.
   *
   * @generated from field: string sfen_after = 4;
   */
  sfenAfter: string;

  /**
   * Whether the move gives check.
   *
   * @generated from field: bool gives_check = 5;
   */
  givesCheck: boolean;

  /**
   * The 64-bit Zobrist hash of the position after the move.
   *
   * @generated from field: fixed64 position_hash = 6;
   */
  positionHash: bigint;
};

/**
 * Describes the message shogi.v1.MoveAccepted.
 * Use `create(MoveAcceptedSchema)` to create a new message.
 */
export const MoveAcceptedSchema: GenMessage<MoveAccepted> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 17);

/**
 * Published on `shogi.game.<game_id>.declare` for each impasse declaration.
 *
 * @generated from message shogi.v1.Declaration
 */
export type Declaration = Message<"shogi.v1.Declaration"> & {
  /**
   * The game id.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * Plies played when the declaration was made.
   *
   * @generated from field: uint32 ply = 2;
   */
  ply: number;

  /**
   * The declaring side.
   *
   * @generated from field: shogi.v1.Color declarer = 3;
   */
  declarer: Color;

  /**
   * Whether the declarer's clock had time left.
   *
   * @generated from field: bool has_time = 4;
   */
  hasTime: boolean;

  /**
   * The calculator's report.
   *
   * @generated from field: shogi.v1.DeclarationReport report = 5;
   */
  report?: DeclarationReport | undefined;
};

/**
 * Describes the message shogi.v1.Declaration.
 * Use `create(DeclarationSchema)` to create a new message.
 */
export const DeclarationSchema: GenMessage<Declaration> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 18);

/**
 * Where a new game starts.
 *
 * @generated from message shogi.v1.StartPosition
 */
export type StartPosition = Message<"shogi.v1.StartPosition"> & {
  /**
   * One of the three; none set means the even-game start position.
   *
   * @generated from oneof shogi.v1.StartPosition.start
   */
  start: {
    /**
     * The even-game start position (the value is ignored).
     *
     * @generated from field: bool startpos = 1;
     */
    value: boolean;
    case: "startpos";
  } | {
    /**
     * A position as SFEN.
     *
     * @generated from field: string sfen = 2;
     */
    value: string;
    case: "sfen";
  } | {
    /**
     * A named handicap: `lance`, `right_lance`, `bishop`, `rook`, `rook_lance`, `two_piece`,
     * `four_piece`, `six_piece`, `eight_piece`, `ten_piece`.
     *
     * @generated from field: string handicap = 3;
     */
    value: string;
    case: "handicap";
  } | { case: undefined; value?: undefined };
};

/**
 * Describes the message shogi.v1.StartPosition.
 * Use `create(StartPositionSchema)` to create a new message.
 */
export const StartPositionSchema: GenMessage<StartPosition> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 19);

/**
 * CreateGame request.
 *
 * @generated from message shogi.v1.CreateGameRequest
 */
export type CreateGameRequest = Message<"shogi.v1.CreateGameRequest"> & {
  /**
   * The ruleset; unset means the `jsa` preset.
   *
   * @generated from field: shogi.v1.Ruleset ruleset = 1;
   */
  ruleset?: Ruleset | undefined;

  /**
   * The start position; unset means the even-game start.
   *
   * @generated from field: shogi.v1.StartPosition start = 2;
   */
  start?: StartPosition | undefined;

  /**
   * A client-chosen game id (one subject token, see the top of this file); empty lets the
   * server choose one.
   *
   * @generated from field: string game_id = 3;
   */
  gameId: string;

  /**
   * Strict mode for every move of this game (as the metadata `shogi-strict: true` does): a
   * move that ends the game is answered only once its verdict is announced on `.verdict`.
   *
   * @generated from field: bool strict = 4;
   */
  strict: boolean;
};

/**
 * Describes the message shogi.v1.CreateGameRequest.
 * Use `create(CreateGameRequestSchema)` to create a new message.
 */
export const CreateGameRequestSchema: GenMessage<CreateGameRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 20);

/**
 * CreateGame answer.
 *
 * @generated from message shogi.v1.CreateGameResponse
 */
export type CreateGameResponse = Message<"shogi.v1.CreateGameResponse"> & {
  /**
   * The new game.
   *
   * @generated from field: shogi.v1.GameState game = 1;
   */
  game?: GameState | undefined;
};

/**
 * Describes the message shogi.v1.CreateGameResponse.
 * Use `create(CreateGameResponseSchema)` to create a new message.
 */
export const CreateGameResponseSchema: GenMessage<CreateGameResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 21);

/**
 * SubmitMove request.
 *
 * @generated from message shogi.v1.SubmitMoveRequest
 */
export type SubmitMoveRequest = Message<"shogi.v1.SubmitMoveRequest"> & {
  /**
   * The game.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The ply this move is meant to be (the game's ply + 1). A different move for a ply already
   * taken is refused with ABORTED, naming the game's current ply.
   *
   * @generated from field: uint32 ply = 2;
   */
  ply: number;

  /**
   * The move, USI.
   *
   * @generated from field: string usi = 3;
   */
  usi: string;

  /**
   * Strict mode for this call (as the metadata `shogi-strict: true` does), whatever the game's.
   *
   * @generated from field: bool strict = 4;
   */
  strict: boolean;
};

/**
 * Describes the message shogi.v1.SubmitMoveRequest.
 * Use `create(SubmitMoveRequestSchema)` to create a new message.
 */
export const SubmitMoveRequestSchema: GenMessage<SubmitMoveRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 22);

/**
 * SubmitMove answer. Submitting the same move for the same ply again returns the same answer.
 *
 * @generated from message shogi.v1.SubmitMoveResponse
 */
export type SubmitMoveResponse = Message<"shogi.v1.SubmitMoveResponse"> & {
  /**
   * Accepted, rejected or forfeited.
   *
   * @generated from field: shogi.v1.MoveOutcome outcome = 1;
   */
  outcome: MoveOutcome;

  /**
   * Why the move is illegal, when it is.
   *
   * @generated from field: shogi.v1.IllegalKind illegal_kind = 2;
   */
  illegalKind: IllegalKind;

  /**
   * The ply of the move.
   *
   * @generated from field: uint32 ply = 3;
   */
  ply: number;

  /**
   * The position after the move (accepted), or the unchanged position.
   *
   * @generated from field: string sfen_after = 4;
   */
  sfenAfter: string;

  /**
   * Whether the move gives check (accepted moves only).
   *
   * @generated from field: bool gives_check = 5;
   */
  givesCheck: boolean;

  /**
   * The ending the move decided, if any (checkmate, try rule, forfeit, repetition, cap).
   *
   * @generated from field: shogi.v1.Verdict verdict = 6;
   */
  verdict?: Verdict | undefined;

  /**
   * Warnings the move raised (a third occurrence, a perpetual-check risk).
   *
   * @generated from field: repeated shogi.v1.Warning warnings = 7;
   */
  warnings: Warning[];

  /**
   * The 64-bit Zobrist hash of the position after the move.
   *
   * @generated from field: fixed64 position_hash = 8;
   */
  positionHash: bigint;
};

/**
 * Describes the message shogi.v1.SubmitMoveResponse.
 * Use `create(SubmitMoveResponseSchema)` to create a new message.
 */
export const SubmitMoveResponseSchema: GenMessage<SubmitMoveResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 23);

/**
 * ValidateMove request: stateless, for platforms that keep their own state.
 *
 * @generated from message shogi.v1.ValidateMoveRequest
 */
export type ValidateMoveRequest = Message<"shogi.v1.ValidateMoveRequest"> & {
  /**
   * The position, SFEN.
   *
   * @generated from field: string sfen = 1;
   */
  sfen: string;

  /**
   * The move, USI.
   *
   * @generated from field: string usi = 2;
   */
  usi: string;
};

/**
 * Describes the message shogi.v1.ValidateMoveRequest.
 * Use `create(ValidateMoveRequestSchema)` to create a new message.
 */
export const ValidateMoveRequestSchema: GenMessage<ValidateMoveRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 24);

/**
 * ValidateMove answer.
 *
 * @generated from message shogi.v1.ValidateMoveResponse
 */
export type ValidateMoveResponse = Message<"shogi.v1.ValidateMoveResponse"> & {
  /**
   * Whether the move is legal for the side to move.
   *
   * @generated from field: bool legal = 1;
   */
  legal: boolean;

  /**
   * Why not, when it is not.
   *
   * @generated from field: shogi.v1.IllegalKind illegal_kind = 2;
   */
  illegalKind: IllegalKind;

  /**
   * The position after the move (legal moves only).
   *
   * @generated from field: string sfen_after = 3;
   */
  sfenAfter: string;

  /**
   * Whether the move gives check.
   *
   * @generated from field: bool gives_check = 4;
   */
  givesCheck: boolean;

  /**
   * Whether the move checkmates (the opponent is in check with no legal move).
   *
   * @generated from field: bool is_checkmate = 5;
   */
  isCheckmate: boolean;

  /**
   * Whether the opponent has no legal move at all (checkmate or not: either way it loses).
   *
   * @generated from field: bool no_legal_reply = 6;
   */
  noLegalReply: boolean;

  /**
   * The 64-bit Zobrist hash of the position after the move.
   *
   * @generated from field: fixed64 position_hash = 7;
   */
  positionHash: bigint;

  /**
   * The illegal kind as RULES.md writes it (`two_pawns`, ...); empty when legal.
   *
   * @generated from field: string illegal_kind_name = 8;
   */
  illegalKindName: string;
};

/**
 * Describes the message shogi.v1.ValidateMoveResponse.
 * Use `create(ValidateMoveResponseSchema)` to create a new message.
 */
export const ValidateMoveResponseSchema: GenMessage<ValidateMoveResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 25);

/**
 * Declare request: an impasse declaration (入玉宣言) by the side to move.
 *
 * @generated from message shogi.v1.DeclareRequest
 */
export type DeclareRequest = Message<"shogi.v1.DeclareRequest"> & {
  /**
   * The game.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The declaring side; it must be the side to move (a declaration on the opponent's turn fails
   * the first condition).
   *
   * @generated from field: shogi.v1.Color declarer = 2;
   */
  declarer: Color;

  /**
   * Whether the declarer's clock has time left (the platform keeps the clock).
   *
   * @generated from field: bool has_time = 3;
   */
  hasTime: boolean;
};

/**
 * Describes the message shogi.v1.DeclareRequest.
 * Use `create(DeclareRequestSchema)` to create a new message.
 */
export const DeclareRequestSchema: GenMessage<DeclareRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 26);

/**
 * Declare answer.
 *
 * @generated from message shogi.v1.DeclareResponse
 */
export type DeclareResponse = Message<"shogi.v1.DeclareResponse"> & {
  /**
   * The calculator's report with every condition and the point breakdown.
   *
   * @generated from field: shogi.v1.DeclarationReport report = 1;
   */
  report?: DeclarationReport | undefined;

  /**
   * The verdict, or unset when the declaration was refused and play goes on.
   *
   * @generated from field: shogi.v1.Verdict verdict = 2;
   */
  verdict?: Verdict | undefined;
};

/**
 * Describes the message shogi.v1.DeclareResponse.
 * Use `create(DeclareResponseSchema)` to create a new message.
 */
export const DeclareResponseSchema: GenMessage<DeclareResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 27);

/**
 * EvaluateImpasse request: the declaration calculator, with no effect on any game.
 *
 * @generated from message shogi.v1.EvaluateImpasseRequest
 */
export type EvaluateImpasseRequest = Message<"shogi.v1.EvaluateImpasseRequest"> & {
  /**
   * Either a game (its current position, ruleset and handicap credit) or an SFEN.
   *
   * @generated from oneof shogi.v1.EvaluateImpasseRequest.target
   */
  target: {
    /**
     * A game id.
     *
     * @generated from field: string game_id = 1;
     */
    value: string;
    case: "gameId";
  } | {
    /**
     * A position, SFEN; judged for its side to move.
     *
     * @generated from field: string sfen = 2;
     */
    value: string;
    case: "sfen";
  } | { case: undefined; value?: undefined };

  /**
   * For an SFEN: the rule, `points27` or `jsa24`; empty means `points27`.
   *
   * @generated from field: string rule = 3;
   */
  rule: string;

  /**
   * For an SFEN: the start position to credit the handicap giver from, if any.
   *
   * @generated from field: string initial_sfen = 4;
   */
  initialSfen: string;

  /**
   * For a game: the declarer's clock has time left.
   *
   * @generated from field: bool has_time = 5;
   */
  hasTime: boolean;
};

/**
 * Describes the message shogi.v1.EvaluateImpasseRequest.
 * Use `create(EvaluateImpasseRequestSchema)` to create a new message.
 */
export const EvaluateImpasseRequestSchema: GenMessage<EvaluateImpasseRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 28);

/**
 * EvaluateImpasse answer.
 *
 * @generated from message shogi.v1.EvaluateImpasseResponse
 */
export type EvaluateImpasseResponse = Message<"shogi.v1.EvaluateImpasseResponse"> & {
  /**
   * The calculator's report.
   *
   * @generated from field: shogi.v1.DeclarationReport report = 1;
   */
  report?: DeclarationReport | undefined;
};

/**
 * Describes the message shogi.v1.EvaluateImpasseResponse.
 * Use `create(EvaluateImpasseResponseSchema)` to create a new message.
 */
export const EvaluateImpasseResponseSchema: GenMessage<EvaluateImpasseResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 29);

/**
 * GetGame request.
 *
 * @generated from message shogi.v1.GetGameRequest
 */
export type GetGameRequest = Message<"shogi.v1.GetGameRequest"> & {
  /**
   * The game.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;
};

/**
 * Describes the message shogi.v1.GetGameRequest.
 * Use `create(GetGameRequestSchema)` to create a new message.
 */
export const GetGameRequestSchema: GenMessage<GetGameRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 30);

/**
 * GetGame answer.
 *
 * @generated from message shogi.v1.GetGameResponse
 */
export type GetGameResponse = Message<"shogi.v1.GetGameResponse"> & {
  /**
   * The game's state.
   *
   * @generated from field: shogi.v1.GameState game = 1;
   */
  game?: GameState | undefined;
};

/**
 * Describes the message shogi.v1.GetGameResponse.
 * Use `create(GetGameResponseSchema)` to create a new message.
 */
export const GetGameResponseSchema: GenMessage<GetGameResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 31);

/**
 * WatchGame request.
 *
 * @generated from message shogi.v1.WatchGameRequest
 */
export type WatchGameRequest = Message<"shogi.v1.WatchGameRequest"> & {
  /**
   * The game.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The first ply to send moves for; 0 sends everything from the creation on.
   *
   * @generated from field: uint32 from_ply = 2;
   */
  fromPly: number;
};

/**
 * Describes the message shogi.v1.WatchGameRequest.
 * Use `create(WatchGameRequestSchema)` to create a new message.
 */
export const WatchGameRequestSchema: GenMessage<WatchGameRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 32);

/**
 * WatchGame answer: one event of a game, as stored on the bus, in stream order.
 *
 * @generated from message shogi.v1.WatchGameResponse
 */
export type WatchGameResponse = Message<"shogi.v1.WatchGameResponse"> & {
  /**
   * The stream sequence of the event.
   *
   * @generated from field: uint64 sequence = 1;
   */
  sequence: bigint;

  /**
   * The event.
   *
   * @generated from oneof shogi.v1.WatchGameResponse.event
   */
  event: {
    /**
     * The game was created.
     *
     * @generated from field: shogi.v1.GameCreated created = 10;
     */
    value: GameCreated;
    case: "created";
  } | {
    /**
     * A move was accepted.
     *
     * @generated from field: shogi.v1.MoveAccepted move = 11;
     */
    value: MoveAccepted;
    case: "move";
  } | {
    /**
     * A declaration was made.
     *
     * @generated from field: shogi.v1.Declaration declaration = 12;
     */
    value: Declaration;
    case: "declaration";
  } | {
    /**
     * A warning was raised.
     *
     * @generated from field: shogi.v1.Warning warning = 13;
     */
    value: Warning;
    case: "warning";
  } | {
    /**
     * The game ended.
     *
     * @generated from field: shogi.v1.Verdict verdict = 14;
     */
    value: Verdict;
    case: "verdict";
  } | { case: undefined; value?: undefined };
};

/**
 * Describes the message shogi.v1.WatchGameResponse.
 * Use `create(WatchGameResponseSchema)` to create a new message.
 */
export const WatchGameResponseSchema: GenMessage<WatchGameResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 33);

/**
 * EndGame request: an ending the platform reports.
 *
 * @generated from message shogi.v1.EndGameRequest
 */
export type EndGameRequest = Message<"shogi.v1.EndGameRequest"> & {
  /**
   * The game.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * Why the game ends.
   *
   * @generated from field: shogi.v1.EndReason reason = 2;
   */
  reason: EndReason;

  /**
   * The losing side for a resignation or a timeout.
   *
   * @generated from field: shogi.v1.Color loser = 3;
   */
  loser: Color;
};

/**
 * Describes the message shogi.v1.EndGameRequest.
 * Use `create(EndGameRequestSchema)` to create a new message.
 */
export const EndGameRequestSchema: GenMessage<EndGameRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 34);

/**
 * EndGame answer.
 *
 * @generated from message shogi.v1.EndGameResponse
 */
export type EndGameResponse = Message<"shogi.v1.EndGameResponse"> & {
  /**
   * The verdict recorded.
   *
   * @generated from field: shogi.v1.Verdict verdict = 1;
   */
  verdict?: Verdict | undefined;
};

/**
 * Describes the message shogi.v1.EndGameResponse.
 * Use `create(EndGameResponseSchema)` to create a new message.
 */
export const EndGameResponseSchema: GenMessage<EndGameResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 35);

/**
 * LegalMoves request: stateless, the rules core's legal moves of a position.
 *
 * @generated from message shogi.v1.LegalMovesRequest
 */
export type LegalMovesRequest = Message<"shogi.v1.LegalMovesRequest"> & {
  /**
   * The position, SFEN.
   *
   * @generated from field: string sfen = 1;
   */
  sfen: string;
};

/**
 * Describes the message shogi.v1.LegalMovesRequest.
 * Use `create(LegalMovesRequestSchema)` to create a new message.
 */
export const LegalMovesRequestSchema: GenMessage<LegalMovesRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 36);

/**
 * LegalMoves answer.
 *
 * @generated from message shogi.v1.LegalMovesResponse
 */
export type LegalMovesResponse = Message<"shogi.v1.LegalMovesResponse"> & {
  /**
   * Every legal move of the side to move, USI, in the rules core's order. A move that may
   * promote or not is listed twice (`7c7b`, `7c7b+`); a move that must promote only promoted.
   *
   * @generated from field: repeated string moves = 1;
   */
  moves: string[];

  /**
   * Whether the side to move is in check.
   *
   * @generated from field: bool in_check = 2;
   */
  inCheck: boolean;
};

/**
 * Describes the message shogi.v1.LegalMovesResponse.
 * Use `create(LegalMovesResponseSchema)` to create a new message.
 */
export const LegalMovesResponseSchema: GenMessage<LegalMovesResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 37);

/**
 * ListGames request: the games on the bus, in creation order (stream order).
 *
 * @generated from message shogi.v1.ListGamesRequest
 */
export type ListGamesRequest = Message<"shogi.v1.ListGamesRequest"> & {
  /**
   * At most this many games, 1 to 100; 0 means 50.
   *
   * @generated from field: uint32 page_size = 1;
   */
  pageSize: number;

  /**
   * Empty for the first page, or `next_page_token` of the previous answer.
   *
   * @generated from field: string page_token = 2;
   */
  pageToken: string;

  /**
   * Only the games without a verdict.
   *
   * @generated from field: bool live_only = 3;
   */
  liveOnly: boolean;
};

/**
 * Describes the message shogi.v1.ListGamesRequest.
 * Use `create(ListGamesRequestSchema)` to create a new message.
 */
export const ListGamesRequestSchema: GenMessage<ListGamesRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 38);

/**
 * One game in a ListGames answer.
 *
 * @generated from message shogi.v1.GameSummary
 */
export type GameSummary = Message<"shogi.v1.GameSummary"> & {
  /**
   * The game id.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;

  /**
   * The stream sequence of its creation.
   *
   * @generated from field: uint64 created_sequence = 2;
   */
  createdSequence: bigint;

  /**
   * The preset the game was created from (`jsa` when none was given).
   *
   * @generated from field: string preset = 3;
   */
  preset: string;

  /**
   * The start position, SFEN.
   *
   * @generated from field: string start_sfen = 4;
   */
  startSfen: string;

  /**
   * The game's verdict, once announced on `.verdict`.
   *
   * @generated from field: shogi.v1.Verdict verdict = 5;
   */
  verdict?: Verdict | undefined;
};

/**
 * Describes the message shogi.v1.GameSummary.
 * Use `create(GameSummarySchema)` to create a new message.
 */
export const GameSummarySchema: GenMessage<GameSummary> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 39);

/**
 * ListGames answer.
 *
 * @generated from message shogi.v1.ListGamesResponse
 */
export type ListGamesResponse = Message<"shogi.v1.ListGamesResponse"> & {
  /**
   * The games, in creation order.
   *
   * @generated from field: repeated shogi.v1.GameSummary games = 1;
   */
  games: GameSummary[];

  /**
   * The token to read on from: a call with it lists the games created after these (none yet,
   * when the stream holds no later game; call again later).
   *
   * @generated from field: string next_page_token = 2;
   */
  nextPageToken: string;
};

/**
 * Describes the message shogi.v1.ListGamesResponse.
 * Use `create(ListGamesResponseSchema)` to create a new message.
 */
export const ListGamesResponseSchema: GenMessage<ListGamesResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 40);

/**
 * One position of a game as the arbiter counts it (RULES.md sections 2 and 3). Like the
 * warnings, the counts are judged on the position hashes; a verdict compares full positions.
 *
 * @generated from message shogi.v1.PositionAnalysis
 */
export type PositionAnalysis = Message<"shogi.v1.PositionAnalysis"> & {
  /**
   * The ply after which the position stood; 0 is the start position.
   *
   * @generated from field: uint32 ply = 1;
   */
  ply: number;

  /**
   * The move of that ply, USI; empty for ply 0.
   *
   * @generated from field: string usi = 2;
   */
  usi: string;

  /**
   * Whether that move gave check (for ply 0: whether the game started in check).
   *
   * @generated from field: bool gave_check = 3;
   */
  gaveCheck: boolean;

  /**
   * Occurrences of this position in the counted part of the game up to this ply, this one
   * included; 0 for the start position when the ruleset does not count it
   * (`start_position_counted`). The fourth ends the game.
   *
   * @generated from field: uint32 occurrence = 4;
   */
  occurrence: number;

  /**
   * The plies of the earlier occurrences, ascending.
   *
   * @generated from field: repeated uint32 earlier_plies = 5;
   */
  earlierPlies: number[];

  /**
   * Black's moves up to this ply that gave check without a break: its current check streak.
   *
   * @generated from field: uint32 black_check_streak = 6;
   */
  blackCheckStreak: number;

  /**
   * White's current check streak, counted the same way.
   *
   * @generated from field: uint32 white_check_streak = 7;
   */
  whiteCheckStreak: number;
};

/**
 * Describes the message shogi.v1.PositionAnalysis.
 * Use `create(PositionAnalysisSchema)` to create a new message.
 */
export const PositionAnalysisSchema: GenMessage<PositionAnalysis> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 41);

/**
 * AnalyzeGame request.
 *
 * @generated from message shogi.v1.AnalyzeGameRequest
 */
export type AnalyzeGameRequest = Message<"shogi.v1.AnalyzeGameRequest"> & {
  /**
   * The game.
   *
   * @generated from field: string game_id = 1;
   */
  gameId: string;
};

/**
 * Describes the message shogi.v1.AnalyzeGameRequest.
 * Use `create(AnalyzeGameRequestSchema)` to create a new message.
 */
export const AnalyzeGameRequestSchema: GenMessage<AnalyzeGameRequest> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 42);

/**
 * AnalyzeGame answer: what the console shows beside the board.
 *
 * @generated from message shogi.v1.AnalyzeGameResponse
 */
export type AnalyzeGameResponse = Message<"shogi.v1.AnalyzeGameResponse"> & {
  /**
   * The game's state, as GetGame answers it.
   *
   * @generated from field: shogi.v1.GameState game = 1;
   */
  game?: GameState | undefined;

  /**
   * Every position from the start (ply 0) to the current one (ply `game.ply`).
   *
   * @generated from field: repeated shogi.v1.PositionAnalysis positions = 2;
   */
  positions: PositionAnalysis[];

  /**
   * The declaration calculator for Black at the current position, with time left on its
   * clock; unset when the ruleset has no declaration rule. On White's turn its first
   * condition (`declarers_turn`) fails.
   *
   * @generated from field: shogi.v1.DeclarationReport black_declaration = 3;
   */
  blackDeclaration?: DeclarationReport | undefined;

  /**
   * The same for White.
   *
   * @generated from field: shogi.v1.DeclarationReport white_declaration = 4;
   */
  whiteDeclaration?: DeclarationReport | undefined;

  /**
   * The warnings the last ply raised (a third occurrence, a perpetual-check risk).
   *
   * @generated from field: repeated shogi.v1.Warning warnings = 5;
   */
  warnings: Warning[];
};

/**
 * Describes the message shogi.v1.AnalyzeGameResponse.
 * Use `create(AnalyzeGameResponseSchema)` to create a new message.
 */
export const AnalyzeGameResponseSchema: GenMessage<AnalyzeGameResponse> = /*@__PURE__*/
  messageDesc(file_shogi_v1_arbiter, 43);

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
  messageDesc(file_shogi_v1_arbiter, 44);

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
  messageDesc(file_shogi_v1_arbiter, 45);

/**
 * A side. Black (sente, 先手) moves first in an even game; in a handicap game the handicap
 * giver (上手, uwate) is White and moves first.
 *
 * @generated from enum shogi.v1.Color
 */
export enum Color {
  /**
   * Not set: no side (for instance, no winner).
   *
   * @generated from enum value: COLOR_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * Black, sente (先手).
   *
   * @generated from enum value: COLOR_BLACK = 1;
   */
  BLACK = 1,

  /**
   * White, gote (後手).
   *
   * @generated from enum value: COLOR_WHITE = 2;
   */
  WHITE = 2,
}

/**
 * Describes the enum shogi.v1.Color.
 */
export const ColorSchema: GenEnum<Color> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 0);

/**
 * Why a move is illegal (反則), one kind per rule of RULES.md section 1.
 *
 * @generated from enum shogi.v1.IllegalKind
 */
export enum IllegalKind {
  /**
   * Not set: the move is legal.
   *
   * @generated from enum value: ILLEGAL_KIND_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * 二歩 (nifu): an unpromoted pawn dropped on a file that already holds one of the same side.
   *
   * @generated from enum value: ILLEGAL_KIND_TWO_PAWNS = 1;
   */
  TWO_PAWNS = 1,

  /**
   * 打ち歩詰め (uchifuzume): a pawn drop that gives checkmate.
   *
   * @generated from enum value: ILLEGAL_KIND_PAWN_DROP_MATE = 2;
   */
  PAWN_DROP_MATE = 2,

  /**
   * 行き所のない駒: a pawn or lance on the last rank, a knight on the last two ranks.
   *
   * @generated from enum value: ILLEGAL_KIND_DEAD_PIECE = 3;
   */
  DEAD_PIECE = 3,

  /**
   * 王手放置 / 自殺手: the mover's king is attacked after the move.
   *
   * @generated from enum value: ILLEGAL_KIND_LEAVES_KING_IN_CHECK = 4;
   */
  LEAVES_KING_IN_CHECK = 4,

  /**
   * No such piece, a move the piece cannot make, a blocked path, a capture of an own piece, a
   * drop of a piece not in hand or onto an occupied square.
   *
   * @generated from enum value: ILLEGAL_KIND_IMPOSSIBLE = 5;
   */
  IMPOSSIBLE = 5,

  /**
   * A move or declaration by the side not to move.
   *
   * @generated from enum value: ILLEGAL_KIND_WRONG_TURN = 6;
   */
  WRONG_TURN = 6,

  /**
   * Never produced; kept so that the number is not reused. A move or declaration after the game
   * has ended (RULES.md section 1, `game_over`) is not judged at all, so it is not an illegal
   * move of the game: the call fails with FAILED_PRECONDITION and ErrorInfo reason `GAME_OVER`
   * (ErrorReason), with the verdict that ended the game in the details. An answer would have to
   * say REJECTED or FORFEITED, and neither is true: nothing is stored and no one forfeits a
   * game that is already over.
   *
   * @generated from enum value: ILLEGAL_KIND_GAME_OVER = 7 [deprecated = true];
   * @deprecated
   */
  GAME_OVER = 7,
}

/**
 * Describes the enum shogi.v1.IllegalKind.
 */
export const IllegalKindSchema: GenEnum<IllegalKind> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 1);

/**
 * How a game ended (RULES.md section 7), plus the endings a platform reports.
 *
 * @generated from enum shogi.v1.ResultCode
 */
export enum ResultCode {
  /**
   * Not set.
   *
   * @generated from enum value: RESULT_CODE_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * 詰み: the side to move is in check with no legal move; the mover wins. CSA `%TSUMI`.
   *
   * @generated from enum value: RESULT_CODE_CHECKMATE = 1;
   */
  CHECKMATE = 1,

  /**
   * The side to move has no legal move and is not in check; it loses.
   *
   * @generated from enum value: RESULT_CODE_NO_LEGAL_MOVES = 2;
   */
  NO_LEGAL_MOVES = 2,

  /**
   * An illegal move under the `forfeit` policy: the mover loses. CSA `#ILLEGAL_MOVE`.
   *
   * @generated from enum value: RESULT_CODE_ILLEGAL_MOVE = 3;
   */
  ILLEGAL_MOVE = 3,

  /**
   * Ordinary fourfold repetition (千日手): draw or replay per the ruleset.
   *
   * @generated from enum value: RESULT_CODE_REPETITION = 4;
   */
  REPETITION = 4,

  /**
   * Perpetual check (連続王手の千日手): the checker loses. CSA `#OUTE_SENNICHITE`.
   *
   * @generated from enum value: RESULT_CODE_PERPETUAL_CHECK = 5;
   */
  PERPETUAL_CHECK = 5,

  /**
   * An impasse declaration (入玉宣言) judged: win, jishogi or loss. CSA `%KACHI` / `#JISHOGI`.
   *
   * @generated from enum value: RESULT_CODE_DECLARATION = 6;
   */
  DECLARATION = 6,

  /**
   * The try rule (トライルール): a king reached the opponent king's start square.
   *
   * @generated from enum value: RESULT_CODE_TRY_RULE = 7;
   */
  TRY_RULE = 7,

  /**
   * The move cap ended the game. CSA `#MAX_MOVES`.
   *
   * @generated from enum value: RESULT_CODE_MAX_MOVES = 8;
   */
  MAX_MOVES = 8,

  /**
   * Reported by the platform: a side resigned (投了).
   *
   * @generated from enum value: RESULT_CODE_RESIGNATION = 9;
   */
  RESIGNATION = 9,

  /**
   * Reported by the platform: a side ran out of time.
   *
   * @generated from enum value: RESULT_CODE_TIMEOUT = 10;
   */
  TIMEOUT = 10,

  /**
   * Reported by the platform: the game was aborted (中断) without a result.
   *
   * @generated from enum value: RESULT_CODE_ABORT = 11;
   */
  ABORT = 11,

  /**
   * Reported by the platform: the players agreed (for instance to a jishogi).
   *
   * @generated from enum value: RESULT_CODE_AGREEMENT = 12;
   */
  AGREEMENT = 12,
}

/**
 * Describes the enum shogi.v1.ResultCode.
 */
export const ResultCodeSchema: GenEnum<ResultCode> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 2);

/**
 * The result of a game that ends without a winner (RULES.md sections 3 to 5).
 *
 * @generated from enum shogi.v1.OrdinaryResult
 */
export enum OrdinaryResult {
  /**
   * Not set: a side won.
   *
   * @generated from enum value: ORDINARY_RESULT_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * A draw (online services, the CSA server).
   *
   * @generated from enum value: ORDINARY_RESULT_DRAW = 1;
   */
  DRAW = 1,

  /**
   * No result: replayed with colours swapped (指し直し, JSA).
   *
   * @generated from enum value: ORDINARY_RESULT_REPLAY = 2;
   */
  REPLAY = 2,
}

/**
 * Describes the enum shogi.v1.OrdinaryResult.
 */
export const OrdinaryResultSchema: GenEnum<OrdinaryResult> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 3);

/**
 * What happens to an illegal move (RULES.md section 1).
 *
 * @generated from enum shogi.v1.IllegalMovePolicy
 */
export enum IllegalMovePolicy {
  /**
   * Not set: keep the preset's policy.
   *
   * @generated from enum value: ILLEGAL_MOVE_POLICY_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * Refused with its reason; the game goes on.
   *
   * @generated from enum value: ILLEGAL_MOVE_POLICY_REJECT = 1;
   */
  REJECT = 1,

  /**
   * Recorded, and the mover loses at once.
   *
   * @generated from enum value: ILLEGAL_MOVE_POLICY_FORFEIT = 2;
   */
  FORFEIT = 2,
}

/**
 * Describes the enum shogi.v1.IllegalMovePolicy.
 */
export const IllegalMovePolicySchema: GenEnum<IllegalMovePolicy> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 4);

/**
 * How declaration points are judged (RULES.md section 4, point 6).
 *
 * @generated from enum shogi.v1.DeclarationRule
 */
export enum DeclarationRule {
  /**
   * Not set: keep the preset's rule.
   *
   * @generated from enum value: DECLARATION_RULE_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * No declarations in this ruleset.
   *
   * @generated from enum value: DECLARATION_RULE_NONE = 1;
   */
  NONE = 1,

  /**
   * The 27-point rule: Black needs 28, White 27.
   *
   * @generated from enum value: DECLARATION_RULE_POINTS27 = 2;
   */
  POINTS27 = 2,

  /**
   * The JSA 24-point rule: 31+ wins, 24..30 jishogi, under 24 loses.
   *
   * @generated from enum value: DECLARATION_RULE_JSA24 = 3;
   */
  JSA24 = 3,
}

/**
 * Describes the enum shogi.v1.DeclarationRule.
 */
export const DeclarationRuleSchema: GenEnum<DeclarationRule> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 5);

/**
 * When a declaration is judged (RULES.md section 4).
 *
 * @generated from enum shogi.v1.DeclarationTrigger
 */
export enum DeclarationTrigger {
  /**
   * Not set: keep the preset's trigger.
   *
   * @generated from enum value: DECLARATION_TRIGGER_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * Only on request (CSA `%KACHI`, USI `bestmove win`, JSA).
   *
   * @generated from enum value: DECLARATION_TRIGGER_EXPLICIT = 1;
   */
  EXPLICIT = 1,

  /**
   * Awarded as soon as the side to move qualifies (Shogi Wars, Lishogi).
   *
   * @generated from enum value: DECLARATION_TRIGGER_AUTOMATIC = 2;
   */
  AUTOMATIC = 2,
}

/**
 * Describes the enum shogi.v1.DeclarationTrigger.
 */
export const DeclarationTriggerSchema: GenEnum<DeclarationTrigger> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 6);

/**
 * What a declaration that does not qualify does (RULES.md section 4).
 *
 * @generated from enum shogi.v1.FailedDeclaration
 */
export enum FailedDeclaration {
  /**
   * Not set: keep the preset's choice.
   *
   * @generated from enum value: FAILED_DECLARATION_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * The declarer loses.
   *
   * @generated from enum value: FAILED_DECLARATION_LOSS = 1;
   */
  LOSS = 1,

  /**
   * The declaration is refused and play goes on.
   *
   * @generated from enum value: FAILED_DECLARATION_REFUSE = 2;
   */
  REFUSE = 2,
}

/**
 * Describes the enum shogi.v1.FailedDeclaration.
 */
export const FailedDeclarationSchema: GenEnum<FailedDeclaration> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 7);

/**
 * How a move cap ends the game (RULES.md section 5).
 *
 * @generated from enum shogi.v1.CapMode
 */
export enum CapMode {
  /**
   * Not set: keep the preset's mode.
   *
   * @generated from enum value: CAP_MODE_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * A draw when ply N+1 would be due.
   *
   * @generated from enum value: CAP_MODE_PLAIN = 1;
   */
  PLAIN = 1,

  /**
   * The JSA 500-move rule with its check extension.
   *
   * @generated from enum value: CAP_MODE_JSA500 = 2;
   */
  JSA500 = 2,
}

/**
 * Describes the enum shogi.v1.CapMode.
 */
export const CapModeSchema: GenEnum<CapMode> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 8);

/**
 * The agreement-count result when both sides reach the threshold (RULES.md section 4).
 *
 * @generated from enum shogi.v1.AgreementTie
 */
export enum AgreementTie {
  /**
   * Not set: keep the preset's choice.
   *
   * @generated from enum value: AGREEMENT_TIE_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * Jishogi, with the ruleset's jishogi result.
   *
   * @generated from enum value: AGREEMENT_TIE_JISHOGI = 1;
   */
  JISHOGI = 1,

  /**
   * White wins.
   *
   * @generated from enum value: AGREEMENT_TIE_WHITE_WINS = 2;
   */
  WHITE_WINS = 2,

  /**
   * Black wins.
   *
   * @generated from enum value: AGREEMENT_TIE_BLACK_WINS = 3;
   */
  BLACK_WINS = 3,
}

/**
 * Describes the enum shogi.v1.AgreementTie.
 */
export const AgreementTieSchema: GenEnum<AgreementTie> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 9);

/**
 * What happened to a submitted move.
 *
 * @generated from enum shogi.v1.MoveOutcome
 */
export enum MoveOutcome {
  /**
   * Not set.
   *
   * @generated from enum value: MOVE_OUTCOME_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * The move is legal and stored.
   *
   * @generated from enum value: MOVE_OUTCOME_ACCEPTED = 1;
   */
  ACCEPTED = 1,

  /**
   * The move is illegal and refused (`reject` policy); nothing is stored, the game goes on.
   *
   * @generated from enum value: MOVE_OUTCOME_REJECTED = 2;
   */
  REJECTED = 2,

  /**
   * The move is illegal and the mover loses (`forfeit` policy); the verdict says so.
   *
   * @generated from enum value: MOVE_OUTCOME_FORFEITED = 3;
   */
  FORFEITED = 3,
}

/**
 * Describes the enum shogi.v1.MoveOutcome.
 */
export const MoveOutcomeSchema: GenEnum<MoveOutcome> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 10);

/**
 * Why the platform ends a game.
 *
 * @generated from enum shogi.v1.EndReason
 */
export enum EndReason {
  /**
   * Not set: invalid.
   *
   * @generated from enum value: END_REASON_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * A side resigned (投了); `loser` names it.
   *
   * @generated from enum value: END_REASON_RESIGNATION = 1;
   */
  RESIGNATION = 1,

  /**
   * A side ran out of time; `loser` names it.
   *
   * @generated from enum value: END_REASON_TIMEOUT = 2;
   */
  TIMEOUT = 2,

  /**
   * The game was aborted without a result.
   *
   * @generated from enum value: END_REASON_ABORT = 3;
   */
  ABORT = 3,

  /**
   * Jishogi by agreement: the ruleset's jishogi result (draw or replay).
   *
   * @generated from enum value: END_REASON_JISHOGI_AGREEMENT = 4;
   */
  JISHOGI_AGREEMENT = 4,
}

/**
 * Describes the enum shogi.v1.EndReason.
 */
export const EndReasonSchema: GenEnum<EndReason> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 11);

/**
 * Why a call failed: the `reason` of the google.rpc.ErrorInfo in the status details of every
 * error this service produces, in the domain `shogi-arbiter.move-validator`.
 *
 * ErrorInfo.reason carries the value's name WITHOUT the `ERROR_REASON_` prefix, e.g.
 * reason = "PLY_TAKEN" for ERROR_REASON_PLY_TAKEN (the prefix is only there because protobuf
 * enum values share one namespace; "PLY_TAKEN" and "PLY_AHEAD" are what clients already see). A
 * client maps it back by prepending the prefix (prost: `ErrorReason::from_str_name`). The
 * reason is fine-grained, the status code coarse: a client branches on the reason when it knows
 * it, and on the status code otherwise, so a reason it does not know yet (new ones may be added)
 * or a status without an ErrorInfo (those gRPC itself produces: CANCELLED, DEADLINE_EXCEEDED,
 * RESOURCE_EXHAUSTED, UNIMPLEMENTED, and UNAVAILABLE or INTERNAL when the connection fails) is
 * handled by its code. Each reason is carried by one status code, named below; moving a reason to another code
 * is a breaking change. ErrorInfo.metadata keys, as each reason below names them: `game_id`,
 * `current_ply` (plies played in the game), `verdict_code`, `verdict_ply` and `sequence` (a
 * stream sequence).
 *
 * Illegal moves and verdicts are answers, never errors: a REJECTED or FORFEITED move, a lost or
 * refused declaration, a game that ends, all come back with OK.
 *
 * @generated from enum shogi.v1.ErrorReason
 */
export enum ErrorReason {
  /**
   * Not set; a status without a reason is handled by its code alone.
   *
   * @generated from enum value: ERROR_REASON_UNSPECIFIED = 0;
   */
  UNSPECIFIED = 0,

  /**
   * INVALID_ARGUMENT: a request field is malformed (an SFEN, a USI move, a game id, a handicap
   * name, ply 0, a missing side or end reason). A google.rpc.BadRequest names each field
   * (`start.sfen`, `usi`, `game_id`, ...). Fix the request; the same request fails again.
   *
   * @generated from enum value: ERROR_REASON_INVALID_REQUEST = 1;
   */
  INVALID_REQUEST = 1,

  /**
   * INVALID_ARGUMENT: the ruleset is refused, an unknown preset or an option out of range or
   * contradicting another (see the Ruleset message). A google.rpc.BadRequest has one field
   * violation per option at fault: `ruleset.preset` or `ruleset.overrides.<field>`. Fix the
   * ruleset.
   *
   * @generated from enum value: ERROR_REASON_INVALID_RULESET = 2;
   */
  INVALID_RULESET = 2,

  /**
   * NOT_FOUND: no game with this id (metadata `game_id`). Check the id or create the game; a
   * retry fails the same way.
   *
   * @generated from enum value: ERROR_REASON_GAME_NOT_FOUND = 3;
   */
  GAME_NOT_FOUND = 3,

  /**
   * ALREADY_EXISTS: CreateGame with a client-chosen id that a game created with a different
   * ruleset, start or strict flag already has (metadata `game_id`). The same CreateGame again is
   * a retry and answers OK with the game. Choose another id, or GetGame the existing one.
   *
   * @generated from enum value: ERROR_REASON_GAME_EXISTS = 4;
   */
  GAME_EXISTS = 4,

  /**
   * FAILED_PRECONDITION: a move, a declaration or an ending after the game's verdict (RULES.md
   * section 1, `game_over`). Metadata `game_id`, `verdict_code` (the result code as RULES.md
   * writes it) and `verdict_ply`; the Verdict itself follows the ErrorInfo in the details, packed
   * as a google.protobuf.Any (`type.googleapis.com/shogi.v1.Verdict`). Do not retry: show the
   * verdict. (The same move for the same ply as the one that ended the game is a retry, and
   * answers OK as the first time.)
   *
   * @generated from enum value: ERROR_REASON_GAME_OVER = 5;
   */
  GAME_OVER = 5,

  /**
   * FAILED_PRECONDITION: Declare or EvaluateImpasse for a game whose ruleset has no declaration
   * rule (DECLARATION_RULE_NONE). Metadata `game_id`. Do not retry.
   *
   * @generated from enum value: ERROR_REASON_DECLARATION_NOT_ALLOWED = 6;
   */
  DECLARATION_NOT_ALLOWED = 6,

  /**
   * ABORTED: SubmitMove for a ply that a different move already holds (metadata `current_ply`):
   * another writer won it, or the client's view is stale. Nothing was written. Resynchronise
   * (GetGame or WatchGame); never resubmit a move for that ply.
   *
   * @generated from enum value: ERROR_REASON_PLY_TAKEN = 7;
   */
  PLY_TAKEN = 7,

  /**
   * ABORTED: SubmitMove for a ply beyond the game's next one (metadata `current_ply`): the
   * client missed moves. Nothing was written. Resynchronise, then submit ply `current_ply + 1`.
   *
   * @generated from enum value: ERROR_REASON_PLY_AHEAD = 8;
   */
  PLY_AHEAD = 8,

  /**
   * ABORTED: concurrent writers to the game kept winning the race for its log, and this call
   * gave up. Nothing it tried was written. Retry the same request with backoff; if a racing
   * writer stored the same move, the retry answers as for a duplicate.
   *
   * @generated from enum value: ERROR_REASON_CONTENDED = 9;
   */
  CONTENDED = 9,

  /**
   * UNAVAILABLE: the bus did not answer a write, so it may have been stored, or may be stored
   * later. Retry the SAME request (same game, ply and move; same declaration; same creation),
   * which is idempotent: the bus stores a write once (`Nats-Msg-Id`) and a stored one is
   * answered as it was. Never send a different request in its place until one of them answers:
   * a different move for that ply would be PLY_TAKEN if the first was stored.
   *
   * @generated from enum value: ERROR_REASON_OUTCOME_UNKNOWN = 10;
   */
  OUTCOME_UNKNOWN = 10,

  /**
   * UNAVAILABLE: the bus could not be reached or read, and nothing was written. Retry with
   * backoff, the same request or another.
   *
   * @generated from enum value: ERROR_REASON_BUS_UNAVAILABLE = 11;
   */
  BUS_UNAVAILABLE = 11,

  /**
   * UNAVAILABLE: strict mode only (`shogi-strict: true`). The move or declaration is stored and
   * ended the game, but the service that owns the ending (the repetition-watcher or the
   * impasse-judge) did not announce the verdict in time. Retry the same request (it answers
   * from the stored move and waits again), or WatchGame for the verdict.
   *
   * @generated from enum value: ERROR_REASON_VERDICT_PENDING = 12;
   */
  VERDICT_PENDING = 12,

  /**
   * UNAVAILABLE: this instance is shutting down (health NOT_SERVING); it ends WatchGame streams
   * with it, and refuses new calls while it drains. Reconnect (another instance) and retry, or
   * resume WatchGame from the last ply received.
   *
   * @generated from enum value: ERROR_REASON_SHUTTING_DOWN = 13;
   */
  SHUTTING_DOWN = 13,

  /**
   * INTERNAL: the game's log on the bus holds an event that cannot be read (metadata `game_id`,
   * `sequence`): the game cannot be rebuilt. Do not retry; report it to the operator.
   *
   * @generated from enum value: ERROR_REASON_UNREADABLE_GAME = 14;
   */
  UNREADABLE_GAME = 14,

  /**
   * UNAUTHENTICATED: no bearer token, or the wrong one (`authorization: Bearer <token>`
   * metadata), when the service requires one. Fix the credentials; a retry as it is fails again.
   *
   * @generated from enum value: ERROR_REASON_UNAUTHENTICATED = 15;
   */
  UNAUTHENTICATED = 15,
}

/**
 * Describes the enum shogi.v1.ErrorReason.
 */
export const ErrorReasonSchema: GenEnum<ErrorReason> = /*@__PURE__*/
  enumDesc(file_shogi_v1_arbiter, 12);

/**
 * The move validator: validates every move with the rules core, answers at once, and writes each
 * accepted move as a durable event to the bus.
 *
 * Errors: every status this service produces carries a google.rpc.ErrorInfo with an ErrorReason
 * (see it for what a client should do), and INVALID_ARGUMENT a google.rpc.BadRequest too. The
 * statuses each RPC can return, besides OK:
 *
 * - Every RPC: UNAUTHENTICATED (UNAUTHENTICATED) when a token is configured; CANCELLED when the
 *   client cancels; DEADLINE_EXCEEDED when the client's deadline passes (a write may still be
 *   stored: retry the same request, as for OUTCOME_UNKNOWN); RESOURCE_EXHAUSTED when a message
 *   is larger than the server's or the client's limit (no ErrorInfo; gRPC's default is 4 MiB);
 *   UNAVAILABLE (SHUTTING_DOWN) while the instance drains.
 * - CreateGame: INVALID_ARGUMENT (INVALID_REQUEST: `game_id`, `start.sfen`, `start.handicap`;
 *   INVALID_RULESET: `ruleset.preset`, `ruleset.overrides.<field>`); ALREADY_EXISTS
 *   (GAME_EXISTS); UNAVAILABLE (OUTCOME_UNKNOWN, BUS_UNAVAILABLE); INTERNAL (UNREADABLE_GAME,
 *   when the id is taken and the existing game cannot be read).
 * - SubmitMove: INVALID_ARGUMENT (INVALID_REQUEST: `game_id`, `ply`, `usi`); NOT_FOUND
 *   (GAME_NOT_FOUND); FAILED_PRECONDITION (GAME_OVER); ABORTED (PLY_TAKEN, PLY_AHEAD,
 *   CONTENDED); UNAVAILABLE (OUTCOME_UNKNOWN, BUS_UNAVAILABLE, VERDICT_PENDING); INTERNAL
 *   (UNREADABLE_GAME). An illegal move is OK with outcome REJECTED or FORFEITED.
 * - ValidateMove: INVALID_ARGUMENT (INVALID_REQUEST: `sfen`, `usi`). It reads no game and no bus.
 * - Declare: INVALID_ARGUMENT (INVALID_REQUEST: `game_id`, `declarer`); NOT_FOUND
 *   (GAME_NOT_FOUND); FAILED_PRECONDITION (GAME_OVER, DECLARATION_NOT_ALLOWED); ABORTED
 *   (CONTENDED); UNAVAILABLE (OUTCOME_UNKNOWN, BUS_UNAVAILABLE, VERDICT_PENDING); INTERNAL
 *   (UNREADABLE_GAME). A declaration that fails is OK, with a losing verdict or none (refused).
 * - EvaluateImpasse: INVALID_ARGUMENT (INVALID_REQUEST: `target`, `game_id`, `sfen`, `rule`,
 *   `initial_sfen`); for a game: NOT_FOUND (GAME_NOT_FOUND), FAILED_PRECONDITION
 *   (DECLARATION_NOT_ALLOWED), UNAVAILABLE (BUS_UNAVAILABLE), INTERNAL (UNREADABLE_GAME). It
 *   writes nothing, so it never has OUTCOME_UNKNOWN.
 * - GetGame: INVALID_ARGUMENT (INVALID_REQUEST: `game_id`); NOT_FOUND (GAME_NOT_FOUND);
 *   UNAVAILABLE (BUS_UNAVAILABLE); INTERNAL (UNREADABLE_GAME). It writes nothing.
 * - WatchGame: before the stream starts, as GetGame; once it runs, the stream ends with OK after
 *   the game's verdict, or with UNAVAILABLE (BUS_UNAVAILABLE, SHUTTING_DOWN) or INTERNAL
 *   (UNREADABLE_GAME). Resume with `from_ply` one past the last move's ply received.
 * - EndGame: INVALID_ARGUMENT (INVALID_REQUEST: `game_id`, `reason`, `loser`); NOT_FOUND
 *   (GAME_NOT_FOUND); FAILED_PRECONDITION (GAME_OVER); ABORTED (CONTENDED); UNAVAILABLE
 *   (OUTCOME_UNKNOWN, BUS_UNAVAILABLE); INTERNAL (UNREADABLE_GAME).
 * - LegalMoves: INVALID_ARGUMENT (INVALID_REQUEST: `sfen`). It reads no game and no bus.
 * - ListGames: INVALID_ARGUMENT (INVALID_REQUEST: `page_size`, `page_token`); UNAVAILABLE
 *   (BUS_UNAVAILABLE). A game whose creation event cannot be read is left out of the list.
 * - AnalyzeGame: as GetGame.
 *
 * @generated from service shogi.v1.MoveValidator
 */
export const MoveValidator: GenService<{
  /**
   * Creates a game from a ruleset and a start position, with an optional client-chosen id.
   *
   * @generated from rpc shogi.v1.MoveValidator.CreateGame
   */
  createGame: {
    methodKind: "unary";
    input: typeof CreateGameRequestSchema;
    output: typeof CreateGameResponseSchema;
  },
  /**
   * Plays a move in a game: accepted (stored on the bus before the answer), rejected or
   * forfeited, with any ending the move decides. Idempotent per (game, ply, move).
   *
   * @generated from rpc shogi.v1.MoveValidator.SubmitMove
   */
  submitMove: {
    methodKind: "unary";
    input: typeof SubmitMoveRequestSchema;
    output: typeof SubmitMoveResponseSchema;
  },
  /**
   * Checks a move against a position, statelessly.
   *
   * @generated from rpc shogi.v1.MoveValidator.ValidateMove
   */
  validateMove: {
    methodKind: "unary";
    input: typeof ValidateMoveRequestSchema;
    output: typeof ValidateMoveResponseSchema;
  },
  /**
   * An impasse declaration by the side to move; the answer carries the verdict and points.
   *
   * @generated from rpc shogi.v1.MoveValidator.Declare
   */
  declare: {
    methodKind: "unary";
    input: typeof DeclareRequestSchema;
    output: typeof DeclareResponseSchema;
  },
  /**
   * The declaration calculator for a game or a position, without effect.
   *
   * @generated from rpc shogi.v1.MoveValidator.EvaluateImpasse
   */
  evaluateImpasse: {
    methodKind: "unary";
    input: typeof EvaluateImpasseRequestSchema;
    output: typeof EvaluateImpasseResponseSchema;
  },
  /**
   * A game's current state, with its effective ruleset (every option, the preset expanded).
   *
   * @generated from rpc shogi.v1.MoveValidator.GetGame
   */
  getGame: {
    methodKind: "unary";
    input: typeof GetGameRequestSchema;
    output: typeof GetGameResponseSchema;
  },
  /**
   * The game's events from a ply on, then live until the game's verdict.
   *
   * @generated from rpc shogi.v1.MoveValidator.WatchGame
   */
  watchGame: {
    methodKind: "server_streaming";
    input: typeof WatchGameRequestSchema;
    output: typeof WatchGameResponseSchema;
  },
  /**
   * Ends a game with a result the platform reports.
   *
   * @generated from rpc shogi.v1.MoveValidator.EndGame
   */
  endGame: {
    methodKind: "unary";
    input: typeof EndGameRequestSchema;
    output: typeof EndGameResponseSchema;
  },
  /**
   * The legal moves of a position, statelessly, from the rules core.
   *
   * @generated from rpc shogi.v1.MoveValidator.LegalMoves
   */
  legalMoves: {
    methodKind: "unary";
    input: typeof LegalMovesRequestSchema;
    output: typeof LegalMovesResponseSchema;
  },
  /**
   * The games on the bus, in creation order, a page at a time.
   *
   * @generated from rpc shogi.v1.MoveValidator.ListGames
   */
  listGames: {
    methodKind: "unary";
    input: typeof ListGamesRequestSchema;
    output: typeof ListGamesResponseSchema;
  },
  /**
   * A game's state with, for every position, its occurrence count and the check streaks, and
   * both sides' declaration reports at the current position.
   *
   * @generated from rpc shogi.v1.MoveValidator.AnalyzeGame
   */
  analyzeGame: {
    methodKind: "unary";
    input: typeof AnalyzeGameRequestSchema;
    output: typeof AnalyzeGameResponseSchema;
  },
}> = /*@__PURE__*/
  serviceDesc(file_shogi_v1_arbiter, 0);

