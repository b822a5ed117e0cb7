"""A platform's first game against the arbiter, in Python with grpcio.

It creates a game, plays the README's perpetual-check game to its verdict and reads the
evidence, meets the two errors every platform meets (ABORTED `PLY_TAKEN` for a ply another move
holds, FAILED_PRECONDITION `GAME_OVER` after the verdict) by their ErrorInfo reasons, and declares
in an impasse position. It exits 1, naming what was wrong, on any answer other than the
arbiter's rules give (docs/rules.md), so that CI can run it against a real server.

    ./generate.sh                                   # the stubs, from proto/, into gen/
    .venv/bin/python play_game.py --addr 127.0.0.1:50051
"""

import argparse
import os
import sys
import uuid

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
from shogi.v1 import arbiter_pb2 as pb  # noqa: E402
from shogi.v1 import arbiter_pb2_grpc  # noqa: E402

# The README's first game: Black's rook checks White's king back and forth; the position after
# ply 1 comes back at plies 5, 9 and 13, and every Black move since ply 1 gave check.
PERPETUAL_SFEN = "6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1"
PERPETUAL_MOVES = "5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h".split()

# Black's king in camp with 12 pieces and 28 points: enough under the 27-point rule
# (shared fixture `lishogi-black-yes`, Lishogi ImpasseTest.scala).
IMPASSE_SFEN = "2SGS4/+B+RGKGLLRB/3G5/9/7pp/8k/9/9/9 b - 1"

ERROR_DOMAIN = "shogi-arbiter.move-validator"


class WrongAnswer(Exception):
    """The arbiter answered something its rules do not give."""


def expect(what, got, want):
    if got != want:
        raise WrongAnswer(f"{what}: got {got!r}, want {want!r}")
    print(f"ok  {what}: {got!r}")


def error_info(err):
    """The status's google.rpc.ErrorInfo and the other details (the verdict of a game over)."""
    status = rpc_status.from_call(err)
    if status is None:
        raise WrongAnswer(f"{err.code()} without google.rpc.Status details: {err.details()}")
    info, verdicts = None, []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
        elif detail.Is(pb.Verdict.DESCRIPTOR):
            verdict = pb.Verdict()
            detail.Unpack(verdict)
            verdicts.append(verdict)
    if info is None:
        raise WrongAnswer(f"{err.code()} without an ErrorInfo: {err.details()}")
    expect("ErrorInfo domain", info.domain, ERROR_DOMAIN)
    return info, verdicts


def submit(stub, game_id, ply, usi):
    return stub.SubmitMove(pb.SubmitMoveRequest(game_id=game_id, ply=ply, usi=usi), timeout=10)


def perpetual_check_game(stub):
    game_id = f"py-perpetual-{uuid.uuid4().hex[:12]}"
    game = stub.CreateGame(
        pb.CreateGameRequest(
            game_id=game_id,
            ruleset=pb.Ruleset(preset="online"),
            start=pb.StartPosition(sfen=PERPETUAL_SFEN),
        ),
        timeout=10,
    ).game
    expect("created game id", game.game_id, game_id)
    expect("created at ply", game.ply, 0)

    verdict = None
    for ply, usi in enumerate(PERPETUAL_MOVES, start=1):
        answer = submit(stub, game_id, ply, usi)
        expect(f"ply {ply} {usi}", pb.MoveOutcome.Name(answer.outcome), "MOVE_OUTCOME_ACCEPTED")
        if ply < len(PERPETUAL_MOVES) and answer.HasField("verdict"):
            raise WrongAnswer(f"ply {ply} ended the game early: {answer.verdict}")
        if ply == 1:
            # Another move for a ply the game already has: the platform's view was stale.
            # ABORTED, reason PLY_TAKEN, and the game's ply in the metadata; nothing stored.
            try:
                submit(stub, game_id, 1, "5h4h")
                raise WrongAnswer("a second move for ply 1 was accepted")
            except grpc.RpcError as err:
                expect("second move for ply 1: status", err.code(), grpc.StatusCode.ABORTED)
                info, _ = error_info(err)
                expect("second move for ply 1: reason", info.reason, "PLY_TAKEN")
                expect("second move for ply 1: current_ply", info.metadata["current_ply"], "1")
        verdict = answer.verdict if answer.HasField("verdict") else None
    if verdict is None:
        raise WrongAnswer("the 13th move did not end the game")

    expect("verdict code", pb.ResultCode.Name(verdict.code), "RESULT_CODE_PERPETUAL_CHECK")
    expect("verdict code name", verdict.code_name, "perpetual_check")
    expect("winner (the checked side)", pb.Color.Name(verdict.winner), "COLOR_WHITE")
    expect("verdict ply", verdict.ply, 13)
    expect("evidence kind", verdict.WhichOneof("evidence"), "perpetual_check")
    evidence = verdict.perpetual_check
    expect("occurrence plies", list(evidence.plies), [1, 5, 9, 13])
    expect("checker", pb.Color.Name(evidence.checker), "COLOR_BLACK")
    expect("checker's plies, each a check", list(evidence.check_plies), [3, 5, 7, 9, 11, 13])

    # The game's state says the same.
    state = stub.GetGame(pb.GetGameRequest(game_id=game_id), timeout=10).game
    expect("GetGame ply", state.ply, 13)
    expect("GetGame moves", list(state.moves), PERPETUAL_MOVES)
    expect("GetGame verdict is the same", state.verdict == verdict, True)

    # A move after the verdict is not judged: FAILED_PRECONDITION, reason GAME_OVER, with the
    # verdict that ended the game in the details.
    try:
        submit(stub, game_id, 14, "2a3a")
        raise WrongAnswer("a move after the verdict was answered OK")
    except grpc.RpcError as err:
        expect("move after the end: status", err.code(), grpc.StatusCode.FAILED_PRECONDITION)
        info, verdicts = error_info(err)
        expect("move after the end: reason", info.reason, "GAME_OVER")
        expect("move after the end: verdict_code", info.metadata["verdict_code"], "perpetual_check")
        expect("move after the end: verdict_ply", info.metadata["verdict_ply"], "13")
        expect("move after the end: the verdict in the details", verdicts == [verdict], True)


def impasse_declaration(stub):
    game_id = f"py-impasse-{uuid.uuid4().hex[:12]}"
    # The `csa` preset: the 27-point rule, declared on request (CSA `%KACHI`).
    stub.CreateGame(
        pb.CreateGameRequest(
            game_id=game_id,
            ruleset=pb.Ruleset(preset="csa"),
            start=pb.StartPosition(sfen=IMPASSE_SFEN),
        ),
        timeout=10,
    )
    answer = stub.Declare(
        pb.DeclareRequest(game_id=game_id, declarer=pb.COLOR_BLACK, has_time=True), timeout=10
    )
    report = answer.report
    expect("declaration rule", report.rule, "points27")
    expect("declaration outcome", report.outcome, "win")
    expect("points", report.points, 28)
    expect("points to win (Black)", report.points_to_win, 28)
    expect("pieces in camp", report.pieces_in_camp, 12)
    unmet = [c.name for c in report.conditions if not c.met]
    expect("conditions not met", unmet, [])
    expect("declaration verdict", answer.verdict.code_name, "declaration")
    expect("declaration winner", pb.Color.Name(answer.verdict.winner), "COLOR_BLACK")
    expect("declaration evidence is the report", answer.verdict.declaration == report, True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addr", default="127.0.0.1:50051", help="the arbiter's gRPC address")
    args = parser.parse_args()
    with grpc.insecure_channel(args.addr) as channel:
        grpc.channel_ready_future(channel).result(timeout=20)
        stub = arbiter_pb2_grpc.MoveValidatorStub(channel)
        try:
            perpetual_check_game(stub)
            impasse_declaration(stub)
        except WrongAnswer as wrong:
            print(f"WRONG ANSWER: {wrong}", file=sys.stderr)
            return 1
    print("python client: every answer as the rules give it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
