//! Games whose side to move goes silent, for the fault tests: each must be flagged at its
//! deadline exactly once, whatever dies meanwhile (docs/rules.md section 9). On a nats-server
//! without message schedules (before 2.12) a game with a time control is refused at creation,
//! naming the server's version, and that is what is checked instead.

use crate::play::{Clients, read};
use shogi_proto::convert::duration_pb;
use shogi_proto::event::decode_verdict;
use shogi_proto::subject;
use shogi_proto::v1 as pb;
use std::time::Duration;
use tokio::time::Instant;

/// Silent games, started: their ids.
#[derive(Debug)]
pub struct Silent {
    ids: Vec<String>,
}

/// Starts `n` games `<prefix>-<i>`: Black with `black_main`, White with 1 to `white_max_secs`
/// seconds of main time spread over the games; Black moves once, then White stays silent.
/// `None` (and the refusal of a clocked game checked) where the server has no message
/// schedules.
///
/// # Panics
///
/// On a wrong answer or a call that keeps failing.
pub async fn start_silent(
    clients: &Clients,
    prefix: &str,
    n: usize,
    black_main: Duration,
    white_max_secs: u64,
) -> Option<Silent> {
    let create = |id: String, i: usize| {
        let white_ms = 1000 + (i as u64 * 7919) % ((white_max_secs.max(2) - 1) * 1000);
        pb::CreateGameRequest {
            ruleset: Some(pb::Ruleset {
                preset: "online".into(),
                overrides: Some(pb::RulesetOverrides {
                    time_main: Some(duration_pb(black_main.as_millis() as u64)),
                    time_main_white: Some(duration_pb(white_ms)),
                    ..Default::default()
                }),
            }),
            start: None,
            game_id: id,
            strict: false,
        }
    };
    let version = test_support::server_version(&test_support::nats_server_binary());
    if !arbiter_bus::has_message_schedules(&version) {
        let refused = clients
            .call("clocked", |mut c| {
                let r = create(format!("{prefix}-refused"), 0);
                async move { c.create_game(r).await }
            })
            .await
            .expect_err("a clocked game on a server without message schedules");
        assert_eq!(
            refused.code(),
            tonic::Code::FailedPrecondition,
            "{refused:?}"
        );
        assert!(refused.message().contains(&version), "{refused:?}");
        eprintln!(
            "nats-server {version}: a clocked game is refused ({})",
            refused.message()
        );
        return None;
    }
    let mut ids = Vec::new();
    for i in 0..n {
        let id = format!("{prefix}-{i}");
        clients
            .call(&id, |mut c| {
                let r = create(id.clone(), i);
                async move { c.create_game(r).await }
            })
            .await
            .unwrap_or_else(|s| panic!("{id}: create: {s}"));
        let moved = clients
            .call(&id, |mut c| {
                let r = pb::SubmitMoveRequest {
                    game_id: id.clone(),
                    ply: 1,
                    usi: "7g7f".into(),
                    strict: false,
                    comment: String::new(),
                };
                async move { c.submit_move(r).await }
            })
            .await
            .unwrap_or_else(|s| panic!("{id}: move: {s}"));
        assert_eq!(moved.outcome, pb::MoveOutcome::Accepted as i32, "{id}");
        ids.push(id);
    }
    Some(Silent { ids })
}

impl Silent {
    /// Checks that every game got exactly one verdict, White's time-up, recorded once in its
    /// log and on its `.result`, never before its deadline; the flags' delays from the
    /// deadlines, in milliseconds, sorted.
    ///
    /// # Panics
    ///
    /// When a game has no verdict within `deadline`, or another one, or it twice.
    pub async fn assert_each_flagged_once(
        &self,
        bus: &arbiter_bus::Bus,
        deadline: Duration,
    ) -> Vec<i64> {
        let mut late = Vec::new();
        for id in &self.ids {
            let result = subject::result(id);
            let until = Instant::now() + deadline;
            let recorded = loop {
                if let Some(m) = read(id, deadline, || bus.last(&result)).await {
                    break m;
                }
                assert!(Instant::now() < until, "{id}: no verdict");
                tokio::time::sleep(Duration::from_millis(20)).await;
            };
            let v = decode_verdict(recorded.message_type.as_deref(), &recorded.payload)
                .unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(v.code, pb::ResultCode::Timeout as i32, "{id}: {v:?}");
            assert_eq!(v.winner, pb::Color::Black as i32, "{id}: White was silent");
            let Some(pb::verdict::Evidence::TimeUp(up)) = v.evidence else {
                panic!("{id}: no clock evidence: {v:?}");
            };
            assert!(
                up.at_unix_ms >= up.deadline_unix_ms,
                "{id}: flagged early: {up:?}"
            );
            late.push(up.at_unix_ms - up.deadline_unix_ms);
            let (mut endings, mut results, mut from) = (0, 0, 1);
            let all = subject::all(id);
            while let Some(m) = read(id, deadline, || bus.next(&all, from)).await {
                from = m.sequence + 1;
                match subject::parse(&m.subject).map(|(_, k)| k) {
                    Some(subject::Kind::Log)
                        if m.message_type.as_deref() == Some(shogi_proto::VERDICT_TYPE) =>
                    {
                        endings += 1;
                    }
                    Some(subject::Kind::Result) => results += 1,
                    _ => {}
                }
            }
            assert_eq!(
                (endings, results),
                (1, 1),
                "{id}: endings in the log, results"
            );
        }
        late.sort_unstable();
        late
    }
}
