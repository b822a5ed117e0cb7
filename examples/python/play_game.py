"""A platform's first game against the arbiter, in Python with grpcio.

It creates a game, plays the README's perpetual-check game to its verdict and reads the
evidence, meets the two errors every platform meets (ABORTED `PLY_TAKEN` for a ply another move
holds, FAILED_PRECONDITION `GAME_OVER` after the verdict) by their ErrorInfo reasons, and declares
in an impasse position. Then it plays against the arbiter's clock in real time (docs/rules.md
section 9): a move 50 ms before its side's deadline is accepted and one 50 ms after it is
MOVE_OUTCOME_TIME_UP with the time-up verdict; byoyomi periods are used up as the clock's rules
say; a late resignation and a late declaration are time-ups. Last, it plays two games at once on
one SubmitMoves stream, as a platform that sends every move of many games would, and reads a
move's error from the stream as the google.rpc.Status it is. It exits 1, naming what was wrong,
on any answer other than the arbiter's rules give (docs/rules.md), so that CI can run it
against a real server.

    ./generate.sh                                   # the stubs, from proto/, into gen/
    .venv/bin/python play_game.py --addr 127.0.0.1:50051
"""

import argparse
import os
import sys
import time
import uuid

import queue

import grpc
from google.rpc import error_details_pb2, status_pb2
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

# How far from a deadline the clocked games aim their calls, in milliseconds.
MARGIN_MS = 50


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


def now_ms():
    """Unix milliseconds: the arbiter's clock is the same machine's wall clock."""
    return time.time_ns() // 1_000_000


def wait_until(unix_ms):
    delay = unix_ms - now_ms()
    if delay > 0:
        time.sleep(delay / 1000)


def clocked(preset, rounding=pb.CLOCK_ROUNDING_UNSPECIFIED, main_ms=0, byoyomi_ms=0, periods=0):
    """A ruleset with the arbiter's clock: `preset` with a time control (Durations)."""
    overrides = pb.RulesetOverrides(clock_rounding=rounding)
    overrides.time_main.FromMilliseconds(main_ms)
    if byoyomi_ms:
        overrides.time_byoyomi.FromMilliseconds(byoyomi_ms)
        overrides.time_periods = periods
    return pb.Ruleset(preset=preset, overrides=overrides)


def settle(side, byoyomi_ms, charged_ms):
    """The clock's rules (docs/rules.md section 9, no increment): a side's SideClock after a move
    charged `charged_ms`, or None when it is out of time. The main time goes first; the excess
    runs through the byoyomi periods, a period that runs out is used up, the one the move falls
    in is kept."""
    if charged_ms < side.remaining_ms:
        left = side.remaining_ms - charged_ms
        return pb.SideClock(remaining_ms=left, periods_left=side.periods_left)
    used = (charged_ms - side.remaining_ms) // byoyomi_ms if byoyomi_ms else side.periods_left
    if used >= side.periods_left:
        return None
    return pb.SideClock(remaining_ms=0, periods_left=side.periods_left - used)


def side_clock(clock, color):
    return clock.black if color == pb.COLOR_BLACK else clock.white


def expect_time_up(what, verdict, loser, deadline_ms):
    """`verdict` is the clock's time-up of `loser`, whose deadline was `deadline_ms`."""
    winner = pb.COLOR_WHITE if loser == pb.COLOR_BLACK else pb.COLOR_BLACK
    expect(f"{what}: verdict", verdict.code_name, "timeout")
    expect(f"{what}: winner", pb.Color.Name(verdict.winner), pb.Color.Name(winner))
    expect(f"{what}: evidence", verdict.WhichOneof("evidence"), "time_up")
    e = verdict.time_up
    expect(f"{what}: the side out of time", pb.Color.Name(e.side), pb.Color.Name(loser))
    expect(f"{what}: its deadline", e.deadline_unix_ms, deadline_ms)
    expect(f"{what}: found at or after the deadline", e.at_unix_ms >= deadline_ms, True)
    expect(f"{what}: charged reaches what it had", e.charged_ms >= e.available_ms, True)


def late_call(what, call):
    """The answer of `call`, made after its side's deadline; or, when the arbiter flagged the
    silent side before the call came, the verdict in the details of its GAME_OVER error. Both
    are the rules' answers to a side out of time."""
    try:
        return call()
    except grpc.RpcError as err:
        if err.code() != grpc.StatusCode.FAILED_PRECONDITION:
            raise
        info, verdicts = error_info(err)
        expect(f"{what}: flagged before the call, reason", info.reason, "GAME_OVER")
        expect(f"{what}: the verdict in the details", len(verdicts), 1)
        return verdicts[0]


def clocked_moves(stub):
    """Sudden death, charged to the millisecond: White's move aimed 50 ms before its deadline,
    then Black's 50 ms after its own."""
    game_id = f"py-clock-{uuid.uuid4().hex[:12]}"
    game = stub.CreateGame(
        pb.CreateGameRequest(
            game_id=game_id,
            ruleset=clocked("online", pb.CLOCK_ROUNDING_MILLISECONDS, main_ms=2_000),
        ),
        timeout=10,
    ).game
    expect("clocked game: has the clock", game.HasField("clock"), True)
    expect("clocked game: Black's clock runs", pb.Color.Name(game.clock.running), "COLOR_BLACK")
    expect(
        "clocked game: deadline = start + main time",
        game.clock.deadline_unix_ms - game.clock.turn_started_unix_ms,
        2_000,
    )
    answer = submit(stub, game_id, 1, "7g7f")
    expect("clocked ply 1", pb.MoveOutcome.Name(answer.outcome), "MOVE_OUTCOME_ACCEPTED")
    white_start, deadline = answer.clock.turn_started_unix_ms, answer.clock.deadline_unix_ms
    expect("White's deadline", deadline - white_start, 2_000)

    wait_until(deadline - MARGIN_MS)
    answer = submit(stub, game_id, 2, "3c3d")
    outcome = pb.MoveOutcome.Name(answer.outcome)
    if outcome == "MOVE_OUTCOME_TIME_UP":
        # Sent 50 ms early, received late (a busy machine): the rules' answer to a late move.
        print(f"note: ply 2 took over {MARGIN_MS} ms to arrive; it was late, and judged so")
        expect_time_up("ply 2, arrived late", answer.verdict, pb.COLOR_WHITE, deadline)
        return
    expect(f"ply 2, {MARGIN_MS} ms before the deadline", outcome, "MOVE_OUTCOME_ACCEPTED")
    # Black's turn starts when White's move was received: before the deadline.
    received = answer.clock.turn_started_unix_ms
    expect("ply 2 received before the deadline", received < deadline, True)
    expect(
        "White's time left, as the clock charges it",
        answer.clock.white.remaining_ms,
        2_000 - (received - white_start),
    )

    deadline = answer.clock.deadline_unix_ms
    wait_until(deadline + MARGIN_MS)
    late = late_call("ply 3 late", lambda: submit(stub, game_id, 3, "2g2f"))
    if isinstance(late, pb.SubmitMoveResponse):
        expect(
            f"ply 3, {MARGIN_MS} ms after the deadline",
            pb.MoveOutcome.Name(late.outcome),
            "MOVE_OUTCOME_TIME_UP",
        )
        late = late.verdict
    expect_time_up("ply 3 late", late, pb.COLOR_BLACK, deadline)
    expect("ply 3 late: ended at the plies played", late.ply, 2)


def byoyomi_periods_and_late_resignation(stub):
    """1 s of main time and three 1 s byoyomi periods: each move's SideClock is what the clock's
    rules make of its receipt time; Black, on its last period, resigns 50 ms late."""
    game_id = f"py-byoyomi-{uuid.uuid4().hex[:12]}"
    byoyomi = 1_000
    game = stub.CreateGame(
        pb.CreateGameRequest(
            game_id=game_id,
            ruleset=clocked("online", main_ms=1_000, byoyomi_ms=byoyomi, periods=3),
        ),
        timeout=10,
    ).game
    clock = game.clock
    black = clock.black
    expect("byoyomi: Black's clock", (black.remaining_ms, black.periods_left), (1_000, 3))
    expect("byoyomi: first deadline", clock.deadline_unix_ms - clock.turn_started_unix_ms, 4_000)
    # (move, how long after its turn started it is sent; 0: at once)
    plan = [("7g7f", 2_500), ("3c3d", 0), ("2g2f", 1_500), ("8c8d", 0)]
    for ply, (usi, think_ms) in enumerate(plan, start=1):
        mover = pb.COLOR_BLACK if ply % 2 else pb.COLOR_WHITE
        before = side_clock(clock, mover)
        wait_until(clock.turn_started_unix_ms + think_ms)
        answer = submit(stub, game_id, ply, usi)
        expect(f"byoyomi ply {ply}", pb.MoveOutcome.Name(answer.outcome), "MOVE_OUTCOME_ACCEPTED")
        # The next turn starts at this move's receipt: the clock charged what it took.
        elapsed = answer.clock.turn_started_unix_ms - clock.turn_started_unix_ms
        want = settle(before, byoyomi, elapsed)
        got = side_clock(answer.clock, mover)
        expect(
            f"byoyomi ply {ply} after {elapsed} ms: (main time left, periods left)",
            (got.remaining_ms, got.periods_left),
            (want.remaining_ms, want.periods_left),
        )
        clock = answer.clock
    black = clock.black
    expect("byoyomi: Black's periods left", (black.remaining_ms, black.periods_left), (0, 1))
    deadline = clock.deadline_unix_ms
    expect("byoyomi: one period to the deadline", deadline - clock.turn_started_unix_ms, byoyomi)

    wait_until(deadline + MARGIN_MS)
    request = pb.EndGameRequest(
        game_id=game_id, reason=pb.END_REASON_RESIGNATION, loser=pb.COLOR_BLACK
    )
    verdict = late_call("late resignation", lambda: stub.EndGame(request, timeout=10))
    if isinstance(verdict, pb.EndGameResponse):
        verdict = verdict.verdict
    expect_time_up("late resignation", verdict, pb.COLOR_BLACK, deadline)
    before = verdict.time_up.before
    expect("late resignation: periods left at the turn's start", before.periods_left, 1)


def late_declaration(stub):
    """A declaration that would win (28 points), made 50 ms after the declarer's deadline."""
    game_id = f"py-late-declaration-{uuid.uuid4().hex[:12]}"
    game = stub.CreateGame(
        pb.CreateGameRequest(
            game_id=game_id,
            ruleset=clocked("csa", main_ms=1_000),
            start=pb.StartPosition(sfen=IMPASSE_SFEN),
        ),
        timeout=10,
    ).game
    deadline = game.clock.deadline_unix_ms
    wait_until(deadline + MARGIN_MS)
    request = pb.DeclareRequest(game_id=game_id, declarer=pb.COLOR_BLACK, has_time=True)
    answer = late_call("late declaration", lambda: stub.Declare(request, timeout=10))
    if isinstance(answer, pb.DeclareResponse):
        # The clock, not the platform's has_time, decides condition 5.
        expect("late declaration: has time", answer.report.has_time, False)
        answer = answer.verdict
    expect_time_up("late declaration", answer, pb.COLOR_BLACK, deadline)


def on_a_stream(stub):
    """Two games on one SubmitMoves stream: each move answered with its tag as SubmitMove
    answers it; a move for a ply another holds answered with its error, read as the
    google.rpc.Status whose fields SubmitMoveError has."""
    games = [f"py-stream-{i}-{uuid.uuid4().hex[:8]}" for i in range(2)]
    for game_id in games:
        stub.CreateGame(pb.CreateGameRequest(game_id=game_id, ruleset=pb.Ruleset(preset="online")), timeout=10)
    line = "7g7f 3c3d 2g2f 8c8d".split()
    sent = queue.Queue()

    def requests():
        while (request := sent.get()) is not None:
            yield request

    answers = stub.SubmitMoves(requests(), timeout=30)
    tag = 0
    expected = {}
    for ply, usi in enumerate(line, start=1):
        for game_id in games:
            tag += 1
            expected[tag] = (game_id, ply)
            sent.put(pb.SubmitMovesRequest(tag=tag, move=pb.SubmitMoveRequest(game_id=game_id, ply=ply, usi=usi)))
    # A second move for ply 1 of the first game, after its moves: PLY_TAKEN.
    tag += 1
    taken = tag
    sent.put(pb.SubmitMovesRequest(tag=taken, move=pb.SubmitMoveRequest(game_id=games[0], ply=1, usi="5g5f")))
    sent.put(None)
    got = {}
    for answer in answers:
        got[answer.tag] = answer
    expect("stream: answers, one a move", sorted(got), list(range(1, tag + 1)))
    for t, (game_id, ply) in expected.items():
        answer = got[t]
        expect(f"stream: tag {t} ({game_id} ply {ply})", answer.WhichOneof("answer"), "submitted")
        expect(f"stream: tag {t} outcome", pb.MoveOutcome.Name(answer.submitted.outcome), "MOVE_OUTCOME_ACCEPTED")
        expect(f"stream: tag {t} ply", answer.submitted.ply, ply)
    error = got[taken]
    expect("stream: the taken ply's answer", error.WhichOneof("answer"), "error")
    status = status_pb2.Status.FromString(error.error.SerializeToString())
    expect("stream: the taken ply's code", status.code, grpc.StatusCode.ABORTED.value[0])
    infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    info = error_details_pb2.ErrorInfo()
    infos[0].Unpack(info)
    expect("stream: the taken ply's reason", info.reason, "PLY_TAKEN")
    expect("stream: the taken ply's current_ply", info.metadata["current_ply"], str(len(line)))
    for game_id in games:
        state = stub.GetGame(pb.GetGameRequest(game_id=game_id), timeout=10).game
        expect(f"stream: {game_id}'s moves", list(state.moves), line)


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
            clocked_moves(stub)
            byoyomi_periods_and_late_resignation(stub)
            late_declaration(stub)
            on_a_stream(stub)
        except WrongAnswer as wrong:
            print(f"WRONG ANSWER: {wrong}", file=sys.stderr)
            return 1
    print("python client: every answer as the rules give it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
