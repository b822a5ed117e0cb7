//! The arbiter's clock through the service (docs/rules.md section 9): receipt times read from a
//! clock the test moves, the real server on loopback against a real nats-server. A move before
//! its side's deadline is charged and accepted, one at the deadline ends the game on time with
//! the clock's evidence; byoyomi periods are used up; late resignations and declarations are
//! time-ups; a platform's timeout stands only when the clock says so; and a second instance
//! reading the same log derives the same clock.

mod common;

use common::Running;
use move_validator::{Config, TimeSource};
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use test_support::NatsServer;
use tonic::Code;
use tonic::transport::Channel;

/// The test's clock: Unix milliseconds it sets.
#[derive(Clone)]
struct Now(Arc<AtomicI64>);

impl Now {
    fn at(ms: i64) -> Now {
        Now(Arc::new(AtomicI64::new(ms)))
    }
    fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
    fn source(&self) -> TimeSource {
        let now = self.0.clone();
        TimeSource::from_fn(move || now.load(Ordering::SeqCst))
    }
}

async fn start(nats: &NatsServer, now: &Now) -> Running {
    let mut config = Config::new(nats.url());
    config.time = now.source();
    Running::start(config).await
}

fn secs(s: i64) -> Option<prost_types::Duration> {
    Some(prost_types::Duration {
        seconds: s,
        nanos: 0,
    })
}

async fn create(c: &mut MoveValidatorClient<Channel>, id: &str, overrides: pb::RulesetOverrides) {
    c.create_game(pb::CreateGameRequest {
        ruleset: Some(pb::Ruleset {
            preset: "online".into(),
            overrides: Some(overrides),
        }),
        start: None,
        game_id: id.into(),
        strict: false,
    })
    .await
    .expect("create");
}

async fn submit(
    c: &mut MoveValidatorClient<Channel>,
    id: &str,
    ply: u32,
    usi: &str,
) -> pb::SubmitMoveResponse {
    c.submit_move(pb::SubmitMoveRequest {
        game_id: id.into(),
        ply,
        usi: usi.into(),
        strict: false,
        comment: String::new(),
    })
    .await
    .unwrap_or_else(|e| panic!("{id} ply {ply} {usi}: {e:?}"))
    .into_inner()
}

fn side(clock: &pb::ClockState, color: pb::Color) -> (u64, u32) {
    let s = if color == pb::Color::Black {
        clock.black.unwrap()
    } else {
        clock.white.unwrap()
    };
    (s.remaining_ms, s.periods_left)
}

fn time_up(v: &pb::Verdict) -> pb::TimeUpEvidence {
    assert_eq!(v.code, pb::ResultCode::Timeout as i32, "{v:?}");
    match &v.evidence {
        Some(pb::verdict::Evidence::TimeUp(e)) => *e,
        other => panic!("not the clock's evidence: {other:?}"),
    }
}

const T0: i64 = 1_800_000_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_before_its_deadline_is_accepted_and_one_at_it_is_time_up() {
    let nats = NatsServer::start();
    let now = Now::at(T0);
    let mut v = start(&nats, &now).await;
    create(
        &mut v.client,
        "sudden",
        pb::RulesetOverrides {
            time_main: secs(10),
            ..Default::default()
        },
    )
    .await;
    let state = v
        .client
        .get_game(pb::GetGameRequest {
            game_id: "sudden".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    let clock = state.clock.expect("a clocked game shows its clock");
    assert_eq!(clock.running, pb::Color::Black as i32);
    assert_eq!(clock.turn_started_unix_ms, T0);
    assert_eq!(clock.deadline_unix_ms, T0 + 10_000);

    // Black thinks 3 s; White answers 1 ms before its deadline.
    now.set(T0 + 3_000);
    let a = submit(&mut v.client, "sudden", 1, "7g7f").await;
    assert_eq!(a.outcome, pb::MoveOutcome::Accepted as i32);
    let clock = a.clock.expect("the answer carries the clock");
    assert_eq!(side(&clock, pb::Color::Black), (7_000, 0));
    assert_eq!(clock.deadline_unix_ms, T0 + 13_000);
    now.set(T0 + 12_999);
    let a = submit(&mut v.client, "sudden", 2, "3c3d").await;
    assert_eq!(a.outcome, pb::MoveOutcome::Accepted as i32);
    assert_eq!(side(&a.clock.unwrap(), pb::Color::White), (1, 0));

    // Black's 7 s run out at T0 + 19,999: a move exactly then is late.
    let deadline = T0 + 12_999 + 7_000;
    now.set(deadline);
    let late = submit(&mut v.client, "sudden", 3, "2g2f").await;
    assert_eq!(late.outcome, pb::MoveOutcome::TimeUp as i32);
    let verdict = late.verdict.expect("the time-up verdict");
    assert_eq!(verdict.winner, pb::Color::White as i32);
    assert_eq!(verdict.ply, 2, "ended at the plies played");
    assert_eq!(verdict.received_unix_ms, deadline);
    let e = time_up(&verdict);
    assert_eq!(e.side, pb::Color::Black as i32);
    assert_eq!(
        (e.turn_started_unix_ms, e.deadline_unix_ms, e.at_unix_ms),
        (T0 + 12_999, deadline, deadline)
    );
    assert_eq!(
        (e.elapsed_ms, e.charged_ms, e.available_ms),
        (7_000, 7_000, 7_000)
    );
    // The same late move again gets the same answer; another move the game-over error.
    now.set(deadline + 5_000);
    let again = submit(&mut v.client, "sudden", 3, "2g2f").await;
    assert_eq!(again.outcome, pb::MoveOutcome::TimeUp as i32);
    assert_eq!(again.verdict, Some(verdict.clone()));
    let other = v
        .client
        .submit_move(pb::SubmitMoveRequest {
            game_id: "sudden".into(),
            ply: 3,
            usi: "1g1f".into(),
            strict: false,
            comment: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(other.code(), Code::FailedPrecondition, "{other:?}");

    // A second instance, reading the log alone, derives the same game, clock and verdict.
    let mut w = start(&nats, &Now::at(T0 + 60_000)).await;
    let read = w
        .client
        .get_game(pb::GetGameRequest {
            game_id: "sudden".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert_eq!(read.verdict, Some(verdict));
    let clock = read.clock.unwrap();
    assert_eq!(
        clock.running,
        pb::Color::Unspecified as i32,
        "over: no clock runs"
    );
    assert_eq!(clock.deadline_unix_ms, 0);
    assert_eq!(side(&clock, pb::Color::White), (1, 0));
    assert_eq!(side(&clock, pb::Color::Black), (7_000, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn byoyomi_periods_are_used_up_as_the_clock_says() {
    let nats = NatsServer::start();
    let now = Now::at(T0);
    let mut v = start(&nats, &now).await;
    create(
        &mut v.client,
        "periods",
        pb::RulesetOverrides {
            time_main: secs(5),
            time_byoyomi: secs(10),
            time_periods: Some(3),
            ..Default::default()
        },
    )
    .await;
    // 5 s of main time and 2 whole periods in a 29.999 s move: one period left.
    now.set(T0 + 29_999);
    let a = submit(&mut v.client, "periods", 1, "7g7f").await;
    assert_eq!(side(&a.clock.unwrap(), pb::Color::Black), (0, 1));
    now.set(T0 + 30_000);
    let a = submit(&mut v.client, "periods", 2, "3c3d").await;
    assert_eq!(side(&a.clock.unwrap(), pb::Color::White), (4_999, 3));
    // The last period: 9.999 s is in time, 10 s is not.
    now.set(T0 + 39_999);
    let a = submit(&mut v.client, "periods", 3, "2g2f").await;
    assert_eq!(a.outcome, pb::MoveOutcome::Accepted as i32);
    assert_eq!(side(&a.clock.unwrap(), pb::Color::Black), (0, 1));
    now.set(T0 + 39_999 + 4_999 + 30_000 - 1);
    let a = submit(&mut v.client, "periods", 4, "8c8d").await;
    assert_eq!(
        a.outcome,
        pb::MoveOutcome::Accepted as i32,
        "White's 3 periods"
    );
    assert_eq!(side(&a.clock.unwrap(), pb::Color::White), (0, 1));
    let turn = T0 + 39_999 + 4_999 + 30_000 - 1;
    now.set(turn + 10_000);
    let late = submit(&mut v.client, "periods", 5, "2f2e").await;
    assert_eq!(late.outcome, pb::MoveOutcome::TimeUp as i32);
    let e = time_up(&late.verdict.unwrap());
    assert_eq!(e.before.unwrap().periods_left, 1);
    assert_eq!(e.deadline_unix_ms, turn + 10_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_resignation_or_declaration_is_time_up_and_a_report_needs_the_clock() {
    let nats = NatsServer::start();
    let now = Now::at(T0);
    let mut v = start(&nats, &now).await;
    let control = pb::RulesetOverrides {
        time_main: secs(60),
        ..Default::default()
    };
    for id in ["resign-in-time", "resign-late", "declare-late", "reported"] {
        create(&mut v.client, id, control).await;
    }
    let end = |id: &str, reason: pb::EndReason, loser: pb::Color| pb::EndGameRequest {
        game_id: id.into(),
        reason: reason as i32,
        loser: loser as i32,
        ..Default::default()
    };
    now.set(T0 + 59_999);
    let v1 = v
        .client
        .end_game(end(
            "resign-in-time",
            pb::EndReason::Resignation,
            pb::Color::Black,
        ))
        .await
        .unwrap()
        .into_inner()
        .verdict
        .unwrap();
    assert_eq!(v1.code, pb::ResultCode::Resignation as i32);
    assert_eq!(v1.received_unix_ms, T0 + 59_999);

    now.set(T0 + 60_000);
    let v2 = v
        .client
        .end_game(end(
            "resign-late",
            pb::EndReason::Resignation,
            pb::Color::Black,
        ))
        .await
        .unwrap()
        .into_inner()
        .verdict
        .unwrap();
    assert_eq!(time_up(&v2).side, pb::Color::Black as i32);
    assert_eq!(v2.winner, pb::Color::White as i32);

    let declared = v
        .client
        .declare(pb::DeclareRequest {
            game_id: "declare-late".into(),
            declarer: pb::Color::Black as i32,
            has_time: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        !declared.report.unwrap().has_time,
        "condition 5 from the clock"
    );
    assert_eq!(
        time_up(&declared.verdict.unwrap()).side,
        pb::Color::Black as i32
    );

    // A platform's timeout: refused while the side to move has time, judged once it has not.
    now.set(T0 + 30_000);
    let refused = v
        .client
        .end_game(end("reported", pb::EndReason::Timeout, pb::Color::Black))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    now.set(T0 + 61_000);
    let v3 = v
        .client
        .end_game(end("reported", pb::EndReason::Timeout, pb::Color::Black))
        .await
        .unwrap()
        .into_inner()
        .verdict
        .unwrap();
    let e = time_up(&v3);
    assert_eq!(
        (e.deadline_unix_ms, e.at_unix_ms),
        (T0 + 60_000, T0 + 61_000)
    );
}

/// An illegal move the platform reports (a CSA `%CHUDAN`, no move of the board): judged at its
/// receipt as a resignation is, recorded at the ply it was meant for with the platform's note,
/// and read back so from the log by another instance; a late one is a time-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reported_illegal_move_is_judged_at_its_receipt() {
    let nats = NatsServer::start();
    let now = Now::at(T0);
    let mut v = start(&nats, &now).await;
    let control = pb::RulesetOverrides {
        time_main: secs(60),
        ..Default::default()
    };
    for id in ["illegal-in-time", "illegal-late"] {
        create(&mut v.client, id, control).await;
    }
    let end = |id: &str, note: &str| pb::EndGameRequest {
        game_id: id.into(),
        reason: pb::EndReason::IllegalMove as i32,
        loser: pb::Color::Black as i32,
        note: note.into(),
    };
    let e = v
        .client
        .end_game(end("illegal-in-time", &"%".repeat(257)))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    now.set(T0 + 59_999);
    let in_time = v
        .client
        .end_game(end("illegal-in-time", "%CHUDAN"))
        .await
        .unwrap()
        .into_inner()
        .verdict
        .unwrap();
    assert_eq!(
        (in_time.code, in_time.winner, in_time.ply),
        (
            pb::ResultCode::IllegalMove as i32,
            pb::Color::White as i32,
            1
        )
    );
    assert_eq!(
        in_time.evidence,
        Some(pb::verdict::Evidence::Reported(pb::ReportedEvidence {
            note: "%CHUDAN".into()
        }))
    );
    now.set(T0 + 60_000);
    let late = v
        .client
        .end_game(end("illegal-late", "%CHUDAN"))
        .await
        .unwrap()
        .into_inner()
        .verdict
        .unwrap();
    assert_eq!(time_up(&late).side, pb::Color::Black as i32);

    // Another instance reads the same verdicts from the log.
    let mut w = start(&nats, &now).await;
    for (id, verdict) in [("illegal-in-time", &in_time), ("illegal-late", &late)] {
        let game = common::game(&mut w.client, id).await;
        assert_eq!(game.verdict.as_ref(), Some(verdict), "{id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_without_a_time_control_has_no_clock() {
    let nats = NatsServer::start();
    let now = Now::at(T0);
    let mut v = start(&nats, &now).await;
    create(&mut v.client, "untimed", pb::RulesetOverrides::default()).await;
    now.set(T0 + 86_400_000);
    let a = submit(&mut v.client, "untimed", 1, "7g7f").await;
    assert_eq!(a.outcome, pb::MoveOutcome::Accepted as i32);
    assert_eq!(a.clock, None);
}

/// A side that never moves is flagged at its deadline with no call arriving: the clock's
/// deadline is a message schedule on the bus, and its flag is judged by the validator against
/// the log (real time here, the system's clock).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_side_is_flagged_at_its_deadline_without_a_call() {
    const FLAG_PATIENCE: test_support::Deadline = test_support::Deadline::secs(10);
    let nats = NatsServer::start();
    let mut v = Running::start(Config::new(nats.url())).await;
    let c = &mut v.client;
    let overrides = pb::RulesetOverrides {
        time_main: Some(prost_types::Duration {
            seconds: 0,
            nanos: 800_000_000,
        }),
        ..Default::default()
    };
    create(c, "silent", overrides).await;
    // Black moves in time; White stays silent.
    let a = submit(c, "silent", 1, "7g7f").await;
    assert_eq!(a.outcome, pb::MoveOutcome::Accepted as i32);
    let deadline = a.clock.unwrap().deadline_unix_ms;
    let mut watch = c
        .watch_game(pb::WatchGameRequest {
            game_id: "silent".into(),
            from_ply: 0,
            verdict_only: false,
        })
        .await
        .unwrap()
        .into_inner();
    let verdict = tokio::time::timeout(FLAG_PATIENCE.get(), async {
        loop {
            let event = watch
                .message()
                .await
                .unwrap()
                .expect("the stream ends with a verdict");
            if let Some(pb::watch_game_response::Event::Verdict(v)) = event.event {
                return v;
            }
        }
    })
    .await
    .expect("the silent side is flagged");
    let e = time_up(&verdict);
    assert_eq!(e.side, pb::Color::White as i32);
    assert_eq!(verdict.winner, pb::Color::Black as i32);
    assert_eq!(e.deadline_unix_ms, deadline);
    let late = e.at_unix_ms - deadline;
    println!("flagged {late} ms after the deadline");
    assert!(late >= 0, "flagged before its deadline: {late} ms");
    // The log holds it: a move now is refused as after the end.
    let after = c
        .submit_move(pb::SubmitMoveRequest {
            game_id: "silent".into(),
            ply: 2,
            usi: "3c3d".into(),
            strict: false,
            comment: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(after.code(), Code::FailedPrecondition, "{after:?}");
}
