//! The sweep over the live games (docs/rules.md section 10) on a real nats-server, two
//! validators sweeping the same stream at once:
//!
//! - games nobody played for the abandon limit (some never moved, some after a move) are
//!   ended as abandoned exactly once: one ending in each log, one verdict on each `.result`,
//!   `abort` with the evidence (the last entry's time, the limit, when it was found); a move
//!   after it is refused as after the game's end;
//! - a log whose deciding move was stored by an instance that then died (nothing on `.result`,
//!   no announcement, as when the owner's delivery is stolen) gets its verdict on `.result`
//!   from the sweep, without any call.

mod common;

use common::Running;
use futures::StreamExt;
use move_validator::{Announcements, Config, SweepSettings, TimeSource};
use shogi_proto::event::LogEntry;
use shogi_proto::subject;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime};
use test_support::{Deadline, NatsServer};
use tonic::transport::Channel;

const DEADLINE: Deadline = Deadline::secs(30);
const LIMIT: Duration = Duration::from_secs(3600);

/// The validators' clock: the real time plus an offset the test moves.
#[derive(Clone, Default)]
struct Ahead(Arc<AtomicI64>);

impl Ahead {
    fn source(&self) -> TimeSource {
        let ahead = self.0.clone();
        TimeSource::from_fn(move || real_now_ms() + ahead.load(Ordering::SeqCst))
    }
}

fn real_now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

async fn start(nats: &NatsServer, ahead: &Ahead, announcements: Announcements) -> Running {
    let mut config = Config::new(nats.url());
    config.time = ahead.source();
    config.announcements = announcements;
    config.sweep = SweepSettings {
        // The sweep's period, not a wait: every sweep looks at every game of the test.
        interval: Duration::from_millis(100),
        abandon_after: Some(LIMIT),
        max_games: 1000,
    };
    Running::start(config).await
}

async fn create(c: &mut MoveValidatorClient<Channel>, id: &str, sfen: Option<&str>) {
    let deadline = tokio::time::Instant::now() + DEADLINE.get();
    loop {
        let asked = c
            .create_game(pb::CreateGameRequest {
                ruleset: Some(pb::Ruleset {
                    preset: "online".into(),
                    overrides: None,
                }),
                start: sfen.map(|s| pb::StartPosition {
                    start: Some(pb::start_position::Start::Sfen(s.into())),
                }),
                game_id: id.into(),
                strict: false,
            })
            .await;
        match asked {
            Ok(_) => return,
            // The service still connecting to the server.
            Err(e) if e.code() == tonic::Code::Unavailable => {
                assert!(tokio::time::Instant::now() < deadline, "create {id}: {e:?}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(e) => panic!("create {id}: {e:?}"),
        }
    }
}

async fn verdict(c: &mut MoveValidatorClient<Channel>, id: &str) -> Option<pb::Verdict> {
    common::game(c, id).await.verdict
}

/// How many messages the stream holds on each of `subjects`.
async fn counts(js: &async_nats::jetstream::Context, subjects: &[String]) -> Vec<usize> {
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    let mut out = Vec::new();
    for s in subjects {
        let info = stream.info_with_subjects(s).await.unwrap();
        let held: Vec<(String, usize)> = info.map(|r| r.unwrap()).collect().await;
        out.push(held.iter().find(|(k, _)| k == s).map_or(0, |(_, n)| *n));
    }
    out
}

/// The verdict on the game's `.result`, once there is one.
async fn result(js: &async_nats::jetstream::Context, id: &str) -> Option<pb::Verdict> {
    let stream = js.get_stream(shogi_proto::STREAM).await.unwrap();
    let m = stream
        .get_last_raw_message_by_subject(&subject::result(id))
        .await
        .ok()?;
    let decoded = shogi_proto::event::decode_verdict(Some(shogi_proto::VERDICT_TYPE), &m.payload);
    Some(decoded.expect("a verdict on .result"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn games_nobody_plays_are_abandoned_once_by_two_sweeping_validators() {
    let nats = NatsServer::start();
    let ahead = Ahead::default();
    let mut a = start(&nats, &ahead, Announcements::ByValidator).await;
    let mut b = start(&nats, &ahead, Announcements::ByValidator).await;
    let ids: Vec<String> = (0..8).map(|i| format!("idle-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        create(&mut a.client, id, None).await;
        if i % 2 == 1 {
            let moved = a
                .client
                .submit_move(pb::SubmitMoveRequest {
                    game_id: id.clone(),
                    ply: 1,
                    usi: "7g7f".into(),
                    strict: false,
                    comment: String::new(),
                })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(moved.outcome, pb::MoveOutcome::Accepted as i32);
        }
    }
    let before = real_now_ms();
    // Two hours later by the validators' clocks: every game has gone its limit.
    ahead
        .0
        .store(2 * LIMIT.as_millis() as i64, Ordering::SeqCst);
    let deadline = tokio::time::Instant::now() + DEADLINE.get();
    for id in &ids {
        let v = loop {
            if let Some(v) = verdict(&mut b.client, id).await {
                break v;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{id} not abandoned within {DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(v.code, pb::ResultCode::Abort as i32, "{v:?}");
        assert_eq!(v.winner, pb::Color::Unspecified as i32);
        let Some(pb::verdict::Evidence::Abandoned(e)) = v.evidence else {
            panic!("{id}: not the abandonment's evidence: {v:?}");
        };
        assert_eq!(e.limit_ms, LIMIT.as_millis() as u64);
        assert!(e.last_activity_unix_ms <= before, "{e:?}");
        assert!(
            e.at_unix_ms - e.last_activity_unix_ms >= LIMIT.as_millis() as i64,
            "{e:?}"
        );
    }
    let client = async_nats::connect(nats.url()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    for id in &ids {
        // The verdict reaches `.result` once both instances have settled it.
        let deadline = tokio::time::Instant::now() + DEADLINE.get();
        while result(&js, id).await.is_none() {
            assert!(tokio::time::Instant::now() < deadline, "{id}: no .result");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let recorded = result(&js, id).await.unwrap();
        assert_eq!(recorded.code, pb::ResultCode::Abort as i32);
        let moved = usize::from(id.ends_with(['1', '3', '5', '7']));
        assert_eq!(
            counts(&js, &[subject::moves(id), subject::result(id)]).await,
            vec![moved + 1, 1],
            "{id}: one ending in the log, one verdict on .result"
        );
    }
    // The game is over: a move is refused with its verdict.
    let refused = a
        .client
        .submit_move(pb::SubmitMoveRequest {
            game_id: "idle-0".into(),
            ply: 1,
            usi: "7g7f".into(),
            strict: false,
            comment: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(
        refused.code(),
        tonic::Code::FailedPrecondition,
        "{refused:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_ending_whose_recording_died_with_its_writer_is_recorded_by_the_sweep() {
    let nats = NatsServer::start();
    let ahead = Ahead::default();
    // In a pipeline with no owner running: nobody announces, so `verdict-check` never runs.
    let mut v = start(&nats, &ahead, Announcements::ByOwners).await;
    let client = async_nats::connect(nats.url()).await.unwrap();
    let js = async_nats::jetstream::new(client);
    // Black mates with G*5b; the move is written into the log as the validator writes it,
    // and nothing after it: its writer died before `.result`.
    let ids: Vec<String> = (0..4).map(|i| format!("mated-{i}")).collect();
    for id in &ids {
        create(&mut v.client, id, Some("4k4/9/4G4/9/9/9/9/9/4K4 b G 1")).await;
        let entry = LogEntry::Move(pb::MoveAccepted {
            game_id: id.clone(),
            ply: 1,
            usi: "G*5b".into(),
            sfen_after: "4k4/4G4/4G4/9/9/9/9/9/4K4 w - 2".into(),
            gives_check: true,
            position_hash: 0,
            received_unix_ms: real_now_ms(),
            comment: String::new(),
        })
        .envelope(0);
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", entry.msg_id.as_str());
        headers.insert("Nats-Expected-Last-Subject-Sequence", "0");
        headers.insert(shogi_proto::MESSAGE_TYPE_HEADER, entry.message_type);
        js.publish_with_headers(entry.subject.clone(), headers, entry.payload.clone().into())
            .await
            .unwrap()
            .await
            .unwrap();
    }
    let deadline = tokio::time::Instant::now() + DEADLINE.get();
    for id in &ids {
        let recorded = loop {
            if let Some(r) = result(&js, id).await {
                break r;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{id}: the ending was not recorded on .result within {DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(
            recorded.code,
            pb::ResultCode::Checkmate as i32,
            "{recorded:?}"
        );
        assert_eq!(recorded.winner, pb::Color::Black as i32);
        assert_eq!(
            counts(&js, &[subject::result(id), subject::verdict(id)]).await,
            vec![1, 0],
            "{id}: recorded once, never announced"
        );
    }
}
