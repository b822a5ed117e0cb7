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
/// Returns when its last SubmitMove was first sent (retries included after it): a verdict is
/// timed from there, as the cluster benchmark times it, since the validator records it before
/// it answers the deciding move.
///
/// # Panics
///
/// On a wrong answer or a call that keeps failing.
pub async fn play(clients: &Clients, id: String, game: &Scripted) -> Instant {
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
    let mut last_sent = Instant::now();
    for (i, usi) in game.moves.iter().enumerate() {
        last_sent = Instant::now();
        let req = pb::SubmitMoveRequest {
            game_id: id.clone(),
            ply: i as u32 + 1,
            usi: usi.clone(),
            strict: false,
            comment: String::new(),
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
    last_sent
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

/// How long [`assert_one_right_verdict`] waits for a game's `.result` once its `.verdict` is
/// there (the validator's check is one delivery behind the announcement).
const RESULT_WAIT: test_support::Deadline = test_support::Deadline::secs(10);

/// Checks that every game `<prefix>-<i>` of `games` has exactly one verdict on the bus, and the
/// one its script expects (code, winner, ply): one announcement on `.verdict`, and one checked
/// verdict on `.result` (what the platforms hear), waited for up to [`RESULT_WAIT`].
///
/// # Panics
///
/// On a game without a verdict, with two, or with the wrong one.
pub async fn assert_one_right_verdict(bus: &arbiter_bus::Bus, prefix: &str, games: &[Scripted]) {
    for (i, g) in games.iter().enumerate() {
        let id = format!("{prefix}-{i}");
        for (subject, wait) in [
            (shogi_proto::subject::verdict(&id), Duration::ZERO),
            (shogi_proto::subject::result(&id), RESULT_WAIT.get()),
        ] {
            let until = Instant::now() + wait;
            let first = loop {
                let first = bus.next(&subject, 1).await.expect("read the verdict");
                match first {
                    Some(m) => break m,
                    None if Instant::now() < until => {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    None => panic!("{id} ({}): no verdict on {subject}", g.source),
                }
            };
            let again = bus
                .next(&subject, first.sequence + 1)
                .await
                .expect("read the verdicts");
            assert!(
                again.is_none(),
                "{id} ({}): two verdicts on {subject}",
                g.source
            );
            let v =
                shogi_proto::event::decode_verdict(first.message_type.as_deref(), &first.payload)
                    .expect("a Verdict");
            assert_eq!(
                (v.code, v.winner, v.ply),
                (g.expected.code, g.expected.winner, g.expected.ply),
                "{id} ({}) on {subject}",
                g.source
            );
        }
    }
}

/// Checks that the log of every game `<prefix>-<i>` of `games`, as a validator reads it for
/// GetGame, holds every move the game's script had accepted, in order, and nothing after its
/// ending: the moves played are the script's (its last one left out when it was forfeited),
/// and the game has ended.
///
/// # Panics
///
/// On a game whose moves differ, or that has not ended.
pub async fn assert_every_move_logged(clients: &Clients, prefix: &str, games: &[Scripted]) {
    for (i, g) in games.iter().enumerate() {
        let id = format!("{prefix}-{i}");
        let req = pb::GetGameRequest {
            game_id: id.clone(),
            ..Default::default()
        };
        let state = clients
            .call(&id, |mut c| {
                let r = req.clone();
                async move { c.get_game(r).await }
            })
            .await
            .unwrap_or_else(|s| panic!("{id} ({}): GetGame: {s}", g.source))
            .game
            .unwrap_or_else(|| panic!("{id}: GetGame without a game"));
        let accepted = g.moves.len() - usize::from(g.forfeit_last);
        assert_eq!(
            state.moves,
            g.moves[..accepted],
            "{id} ({}): the log's moves",
            g.source
        );
        assert!(state.verdict.is_some(), "{id} ({}): not ended", g.source);
    }
}

/// When a subscriber's connection went down, and came back if it did.
type Away =
    std::sync::Arc<std::sync::Mutex<Vec<(std::time::SystemTime, Option<std::time::SystemTime>)>>>;

/// The notices heard per game: the stream sequence each carried (`Nats-Sequence`).
type Heard = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<Option<u64>>>>>;

/// A platform listening the cheapest way: a core NATS subscription to every game's republished
/// verdict (`shogi.verdict.*`), keeping what it receives per game (with the stream sequence the
/// republish names in `Nats-Sequence`), and the times its connection was down (a core
/// subscriber hears nothing published while it is away).
#[derive(Debug, Clone)]
pub struct VerdictSubscriber {
    received: Heard,
    away: Away,
    /// When each game's first notice arrived.
    first: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Instant>>>,
}

/// What [`VerdictSubscriber::check`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Heard1 {
    /// Games stored while the subscriber was away, not heard (a core subscriber's loss).
    pub exempt: usize,
    /// Notices heard again with the same stored message (the same `Nats-Sequence`): a
    /// republish repeated by a new stream leader on a cluster.
    pub repeats: usize,
}

impl VerdictSubscriber {
    /// Subscribes on `url` (one server URL, or several separated by commas).
    ///
    /// # Panics
    ///
    /// When it cannot connect.
    pub async fn start(url: &str) -> VerdictSubscriber {
        use futures::StreamExt as _;
        let received = Heard::default();
        let away = Away::default();
        let events = away.clone();
        let urls: Vec<async_nats::ServerAddr> = url
            .split(',')
            .map(|u| u.parse().expect("a NATS URL"))
            .collect();
        let client = async_nats::ConnectOptions::new()
            .retry_on_initial_connect()
            .event_callback(move |event| {
                let events = events.clone();
                async move {
                    let now = std::time::SystemTime::now();
                    let mut away = events.lock().unwrap();
                    match event {
                        async_nats::Event::Disconnected => away.push((now, None)),
                        async_nats::Event::Connected => {
                            if let Some(last) = away.last_mut().filter(|w| w.1.is_none()) {
                                last.1 = Some(now);
                            }
                        }
                        _ => {}
                    }
                }
            })
            .connect(urls)
            .await
            .expect("connect the verdict subscriber");
        let mut sub = client
            .subscribe(shogi_proto::VERDICT_NOTICES)
            .await
            .expect("subscribe");
        client.flush().await.expect("flush the subscription");
        let heard = received.clone();
        let first = std::sync::Arc::new(std::sync::Mutex::new(std::collections::HashMap::new()));
        let arrivals = first.clone();
        tokio::spawn(async move {
            let _client = client;
            while let Some(m) = sub.next().await {
                let id = m
                    .subject
                    .as_str()
                    .strip_prefix("shogi.verdict.")
                    .unwrap_or_default()
                    .to_owned();
                let seq = m
                    .headers
                    .as_ref()
                    .and_then(|h| h.get("Nats-Sequence"))
                    .and_then(|v| v.as_str().parse().ok());
                arrivals
                    .lock()
                    .unwrap()
                    .entry(id.clone())
                    .or_insert_with(Instant::now);
                heard.lock().unwrap().entry(id).or_default().push(seq);
            }
        });
        VerdictSubscriber {
            received,
            away,
            first,
        }
    }

    /// When the first notice of game `id` arrived, if one did.
    pub fn heard_at(&self, id: &str) -> Option<Instant> {
        self.first.lock().unwrap().get(id).copied()
    }

    /// Checks what the subscriber heard of games `<prefix>-<i>`, as [`Self::check`] with no
    /// repeat allowed: exactly one notice of every game whose verdict the bus stored while the
    /// subscriber was connected, never two. Returns how many games were exempt.
    ///
    /// # Panics
    ///
    /// On a game heard twice, or not heard though stored while the subscriber was there.
    pub async fn assert_each_heard_once(
        &self,
        bus: &arbiter_bus::Bus,
        prefix: &str,
        games: usize,
        deadline: Duration,
    ) -> usize {
        self.check(bus, prefix, games, deadline, None).await.exempt
    }

    /// Checks what the subscriber heard of games `<prefix>-<i>`: one notice of every game whose
    /// verdict the bus stored while the subscriber was connected (with a margin of a second
    /// around each time it was away), carrying the stored verdict's stream sequence, and never
    /// a notice of another message. A verdict stored within `failover` (the time a stream's
    /// leader died and its successor took over, with a margin of two seconds) may be heard
    /// twice, or not at all: the stream republishes from its leader. Waits up to `deadline`
    /// for notices on their way.
    ///
    /// # Panics
    ///
    /// On a game heard twice, or heard with another message than the one stored, or not heard
    /// though stored while the subscriber was there, outside `failover`.
    pub async fn check(
        &self,
        bus: &arbiter_bus::Bus,
        prefix: &str,
        games: usize,
        deadline: Duration,
        failover: Option<(std::time::SystemTime, std::time::SystemTime)>,
    ) -> Heard1 {
        let margin = Duration::from_secs(1);
        let mut found = Heard1 {
            exempt: 0,
            repeats: 0,
        };
        let until = Instant::now() + deadline;
        for i in 0..games {
            let id = format!("{prefix}-{i}");
            let stored = bus
                .next(&shogi_proto::subject::result(&id), 1)
                .await
                .expect("read the verdict");
            let stored_seq = stored.as_ref().map(|m| m.sequence);
            let in_failover = stored.as_ref().and_then(|m| m.time).is_some_and(|t| {
                failover.is_some_and(|(from, to)| {
                    let two = Duration::from_secs(2);
                    t >= from.checked_sub(two).unwrap_or(from) && t <= to + two
                })
            });
            let while_away = stored.and_then(|m| m.time).is_some_and(|t| {
                self.away.lock().unwrap().iter().any(|(down, up)| {
                    let from = down.checked_sub(margin).unwrap_or(*down);
                    t >= from && up.is_none_or(|up| t <= up + margin)
                })
            });
            loop {
                let heard = self
                    .received
                    .lock()
                    .unwrap()
                    .get(&id)
                    .cloned()
                    .unwrap_or_default();
                for seq in &heard {
                    assert_eq!(
                        *seq, stored_seq,
                        "{id}: a notice of another message than the verdict stored"
                    );
                }
                assert!(
                    heard.len() <= 1 || in_failover,
                    "{id}: {} verdict notices on shogi.verdict.{id}",
                    heard.len()
                );
                if !heard.is_empty() {
                    found.repeats += heard.len() - 1;
                    break;
                }
                if while_away || in_failover {
                    found.exempt += 1;
                    break;
                }
                assert!(
                    Instant::now() < until,
                    "{id}: no verdict notice on shogi.verdict.{id}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        found
    }
}

/// What the durable consumers of game `game_id`'s partition say on the server at `url`, one
/// line each (delivered, ack floor, pending, ack pending, redelivered), for a failure message:
/// a game without a verdict is a consumer that stopped, or a worker that took a delivery and
/// dropped it, and the two look alike from the bus's side only in these figures.
pub async fn consumers_of(url: &str, game_id: &str) -> String {
    let partition = shogi_proto::subject::partition(game_id);
    let suffix = format!("-p{partition}");
    let read = async {
        let client = async_nats::connect(url).await.map_err(|e| e.to_string())?;
        let js = async_nats::jetstream::new(client);
        let stream = js
            .get_stream(shogi_proto::STREAM)
            .await
            .map_err(|e| e.to_string())?;
        let mut names = Vec::new();
        let mut consumers = stream.consumers();
        while let Some(info) = futures::StreamExt::next(&mut consumers).await {
            let info = info.map_err(|e| e.to_string())?;
            if info.name.ends_with(&suffix) || info.name == "verdict-check" {
                names.push(info.name.clone());
            }
        }
        names.sort();
        let mut lines = Vec::new();
        for name in names {
            let i = stream
                .consumer_info(&name)
                .await
                .map_err(|e| e.to_string())?;
            lines.push(format!(
                "{name}: delivered {}, ack floor {}, pending {}, ack pending {}, redelivered {}",
                i.delivered.stream_sequence,
                i.ack_floor.stream_sequence,
                i.num_pending,
                i.num_ack_pending,
                i.num_redelivered
            ));
        }
        Ok::<_, String>(lines.join("; "))
    };
    match tokio::time::timeout(Duration::from_secs(10), read).await {
        Ok(Ok(s)) => format!("partition {partition}: {s}"),
        Ok(Err(e)) => format!("partition {partition}: consumers unreadable: {e}"),
        Err(_) => format!("partition {partition}: consumers unreadable in 10 s"),
    }
}
