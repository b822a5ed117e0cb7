//! A platform that is not trusted with requests, given what deploy/STREAMS.md ("Limits") says
//! to give it: its own named gRPC credential with quotas (README, "Credentials"), and the
//! NATS user `listener` (deploy/nats/auth.conf), which hears the verdicts and publishes
//! nothing. On a real nats-server with the shipped `auth.conf`, it floods with everything
//! those credentials allow, from threads at the lowest CPU priority as if on its own hosts,
//! while another platform's player submits moves:
//!
//! - every gRPC call of the flood past its quotas is refused RESOURCE_EXHAUSTED with a
//!   `QuotaFailure` naming the limit, and nothing else refuses it; each move on its SubmitMoves
//!   streams is a call too, and it holds no more of them open than its `move_streams`;
//! - its NATS connections past the account's limit are refused, and so are its subscriptions
//!   past a connection's limit and every publish (a request on the JetStream API) it tries;
//! - every call of the player succeeds.
//!
//! The player's quiet and flooded move rates and their ratio are printed; a timed test asserts
//! counts, never speed: the benchmark `benches/hostile_platform.rs` measures the ratio. After
//! the player's windows the flood goes on until a quota refuses it, however slowly it runs.

use arbiter_tests::hostile::{self, Flooded, Switch};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const DEADLINE: test_support::Deadline = test_support::Deadline::secs(60);
/// Each window the player's moves are counted over.
const WINDOW: Duration = Duration::from_secs(1);
/// Quiet and flooded windows, taken in turn.
const ROUNDS: usize = 2;
/// Connections the flood tries past the listener account's limit.
const EXTRA_CONNECTIONS: usize = 8;
/// Concurrent gRPC loops of the flood.
const CALL_LOOPS: usize = 16;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_platforms_flood_is_refused_and_another_platforms_moves_all_succeed() {
    let hostile::Stage {
        nats,
        dir: _dir,
        mut procs,
        port,
        player,
        games,
    } = hostile::Stage::start("arbiter-hostile-", DEADLINE.get(), WINDOW).await;

    let switch = Arc::new(Switch::default());
    let flooded = Arc::new(Mutex::new(Flooded::default()));
    let (connections, subscriptions) = hostile::account_limits("LISTENER");
    let listeners = hostile::listener_flood(
        nats.port(),
        connections + EXTRA_CONNECTIONS,
        subscriptions,
        switch.clone(),
        flooded.clone(),
    );
    let calls = hostile::grpc_flood(
        port,
        CALL_LOOPS,
        "warm-0".to_owned(),
        switch.clone(),
        flooded.clone(),
    );
    let (mut quiet, mut under_flood) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        quiet.push(hostile::player_rate(&player, &games, &format!("quiet-{round}"), WINDOW).await);
        switch.set(true, false);
        under_flood
            .push(hostile::player_rate(&player, &games, &format!("flood-{round}"), WINDOW).await);
        switch.set(false, false);
    }
    quiet.push(hostile::player_rate(&player, &games, "quiet-last", WINDOW).await);
    // The player's windows done, the flood goes on until its quotas refuse it. At the lowest
    // priority on a loaded machine (`tools/busy.sh`), two windows may hold too few of its calls
    // to pass a rate quota (48 in one such run); its live games meet `live_games` by count,
    // however slowly it runs.
    // Its loops open a SubmitMoves stream each and keep it: with `move_streams` of them open
    // the next is refused, by count too (a refusal over a rate may come first or not at all).
    switch.set(true, false);
    tokio::task::block_in_place(|| {
        test_support::wait_for(
            DEADLINE,
            "the flood's stream past move_streams refused",
            || {
                let f = flooded.lock().unwrap();
                f.calls_refused.contains_key("move_streams").then_some(())
            },
        )
    });
    switch.set(false, true);
    for (writer, thread) in listeners {
        let _ = writer.shutdown(std::net::Shutdown::Both);
        thread.join().expect("a flooding connection");
    }
    calls.join().expect("the gRPC flood");

    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let f = flooded.lock().unwrap();
    println!(
        "player, moves/s: quiet {quiet:.0?} (mean {:.0}), under the flood {under_flood:.0?} \
         (mean {:.0}): {:.2}x (counted, not asserted: the benchmark measures it); the flood: \
         {} gRPC calls answered, refused {:?}; {} SubmitMoves streams held; {} NATS connections let in, {} refused; {} \
         subscriptions refused; {} rounds of a subscription remade, a publish refused ({}) and \
         a PING",
        mean(&quiet),
        mean(&under_flood),
        mean(&under_flood) / mean(&quiet),
        f.calls_answered,
        f.calls_refused,
        f.streams_opened,
        f.connections.0,
        f.connections.1,
        f.subscriptions_refused,
        f.nats_rounds,
        f.publishes_refused,
    );
    for p in &mut procs {
        assert!(p.is_running(), "{} exited", p.name());
    }
    assert!(f.calls_failed.is_empty(), "{:?}", f.calls_failed);
    assert!(f.nats_other.is_empty(), "{:?}", f.nats_other);
    assert!(
        !f.calls_refused.is_empty(),
        "the flood never met its quotas: {} calls answered",
        f.calls_answered
    );
    for limit in f.calls_refused.keys() {
        assert!(
            [
                "calls_per_second",
                "games_per_second",
                "live_games",
                "move_streams"
            ]
            .contains(&limit.as_str()),
            "a refusal naming {limit}"
        );
    }
    assert_eq!(
        f.streams_opened,
        hostile::HOSTILE_MOVE_STREAMS,
        "SubmitMoves streams held open at once"
    );
    assert_eq!(
        f.connections,
        (connections, EXTRA_CONNECTIONS),
        "the listener's connections let in and refused"
    );
    assert_eq!(
        f.subscriptions_refused,
        connections * 16,
        "16 subscriptions past the limit on each connection"
    );
    assert!(f.nats_rounds > 0, "the NATS flood ran no round");
    assert_eq!(
        f.publishes_refused, f.nats_rounds,
        "each round's publish refused"
    );
}
