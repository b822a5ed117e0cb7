//! Playing scripted games through running validators, and reading the bus, while parts of the
//! system go away and come back: every call is retried on another validator until it gets an
//! answer that is not a transient failure, within a deadline.

use crate::games::Scripted;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::time::Duration;
use tokio::time::Instant;
use tonic::transport::{Channel, Endpoint};

/// Validators, called in turn.
#[derive(Debug, Clone)]
pub struct Clients {
    clients: Vec<MoveValidatorClient<Channel>>,
    deadline: Duration,
}

impl Clients {
    /// Lazy connections to the validators on these loopback ports; a call is retried for up to
    /// `deadline`.
    pub fn new(ports: &[u16], deadline: Duration) -> Clients {
        let clients = ports
            .iter()
            .map(|p| {
                MoveValidatorClient::new(
                    Endpoint::from_shared(format!("http://127.0.0.1:{p}"))
                        .expect("a loopback endpoint")
                        .connect_timeout(Duration::from_secs(1))
                        .timeout(Duration::from_secs(10))
                        .connect_lazy(),
                )
            })
            .collect();
        Clients { clients, deadline }
    }

    /// Calls `f` on one validator, then the next, until it answers something other than a
    /// transient failure (the instance or the bus down, a leader election), within the deadline.
    ///
    /// # Panics
    ///
    /// When the deadline passes with transient failures only.
    pub async fn call<T, F, Fut>(&self, what: &str, mut f: F) -> Result<T, tonic::Status>
    where
        F: FnMut(MoveValidatorClient<Channel>) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let deadline = Instant::now() + self.deadline;
        let mut i = 0;
        loop {
            let client = self.clients[i % self.clients.len()].clone();
            match f(client).await {
                Ok(r) => return Ok(r.into_inner()),
                Err(s)
                    if matches!(
                        s.code(),
                        tonic::Code::Unavailable
                            | tonic::Code::Unknown
                            | tonic::Code::Internal
                            | tonic::Code::Aborted
                            | tonic::Code::Cancelled
                            | tonic::Code::DeadlineExceeded
                    ) =>
                {
                    assert!(Instant::now() < deadline, "{what}: still failing: {s}");
                    i += 1;
                    // A back-off between attempts, not a wait for readiness.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(s) => return Err(s),
            }
        }
    }
}

/// Creates game `id` and submits its moves one by one, checking every answer (accepted, and
/// the last one forfeited where the script says so).
///
/// # Panics
///
/// On a wrong answer or a call that keeps failing.
pub async fn play(clients: &Clients, id: String, game: &Scripted) {
    let create = pb::CreateGameRequest {
        ruleset: Some(game.ruleset.clone()),
        start: Some(pb::StartPosition {
            start: Some(pb::start_position::Start::Sfen(game.start_sfen.clone())),
        }),
        game_id: id.clone(),
        strict: false,
    };
    clients
        .call(&id, |mut c| {
            let r = create.clone();
            async move { c.create_game(r).await }
        })
        .await
        .unwrap_or_else(|s| panic!("{id} ({}): create: {s}", game.source));
    for (i, usi) in game.moves.iter().enumerate() {
        let req = pb::SubmitMoveRequest {
            game_id: id.clone(),
            ply: i as u32 + 1,
            usi: usi.clone(),
            strict: false,
        };
        let answer = clients
            .call(&id, |mut c| {
                let r = req.clone();
                async move { c.submit_move(r).await }
            })
            .await
            .unwrap_or_else(|s| panic!("{id} ({}) ply {}: {s}", game.source, i + 1));
        let last = i + 1 == game.moves.len();
        let expected = if last && game.forfeit_last {
            pb::MoveOutcome::Forfeited
        } else {
            pb::MoveOutcome::Accepted
        };
        assert_eq!(
            answer.outcome,
            expected as i32,
            "{id} ({}) ply {}",
            game.source,
            i + 1
        );
    }
}

/// Retries a bus read through a server going away, for up to `deadline`.
///
/// # Panics
///
/// When the read still fails at the deadline.
pub async fn read<T, F, Fut>(what: &str, deadline: Duration, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, arbiter_bus::BusError>>,
{
    let deadline = Instant::now() + deadline;
    loop {
        match f().await {
            Ok(v) => return v,
            Err(e) => {
                assert!(Instant::now() < deadline, "{what}: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Checks that every game `<prefix>-<i>` of `games` has exactly one verdict on the bus, and the
/// one its script expects (code, winner, ply).
///
/// # Panics
///
/// On a game without a verdict, with two, or with the wrong one.
pub async fn assert_one_right_verdict(bus: &arbiter_bus::Bus, prefix: &str, games: &[Scripted]) {
    use prost::Message as _;
    for (i, g) in games.iter().enumerate() {
        let id = format!("{prefix}-{i}");
        let verdicts = shogi_proto::subject::verdict(&id);
        let first = bus
            .next(&verdicts, 1)
            .await
            .expect("read the verdict")
            .unwrap_or_else(|| panic!("{id} ({}): no verdict", g.source));
        let again = bus
            .next(&verdicts, first.sequence + 1)
            .await
            .expect("read the verdicts");
        assert!(again.is_none(), "{id} ({}): two verdicts", g.source);
        let v = pb::Verdict::decode(first.payload).expect("a Verdict");
        assert_eq!(
            (v.code, v.winner, v.ply),
            (g.expected.code, g.expected.winner, g.expected.ply),
            "{id} ({})",
            g.source
        );
    }
}
