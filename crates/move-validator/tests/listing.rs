//! ListGames from the validator's index (issue 20, item 5): a page costs a few NATS requests,
//! not two a game, and answers what the scan it replaces answered, page for page and token for
//! token, over 200 games, through verdicts announced between pages, games created and ended
//! through another validator, and a purged game. The real server on loopback against a real
//! nats-server; the requests are counted by the server (`/varz` `in_msgs`: the JetStream API's
//! own total leaves message gets out).

use arbiter_bus::{EventBus, JetStreamBus, NatsOptions, StreamSettings};
use move_validator::Config;
use shogi_proto::convert;
use shogi_proto::event::{decode_created, decode_verdict};
use shogi_proto::subject;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use test_support::NatsServer;
use tonic::transport::Channel;

mod common;
use common::{create, serve};

const GAMES: usize = 200;

/// What a page may cost the validator in JetStream API requests once its index has read the
/// stream: the stream's state and one message get per subject filter that finds nothing new.
const PAGE_REQUESTS_MAX: u64 = 3;

async fn start(
    nats: &NatsServer,
) -> (
    MoveValidatorClient<Channel>,
    tokio::sync::oneshot::Sender<()>,
) {
    let (channel, stop) = serve(Config::new(nats.url())).await;
    (MoveValidatorClient::new(channel), stop)
}

fn id(i: usize) -> String {
    format!("g{i:03}")
}

fn list(page_size: u32, page_token: &str, live_only: bool) -> pb::ListGamesRequest {
    pb::ListGamesRequest {
        page_size,
        page_token: page_token.into(),
        live_only,
    }
}

async fn end(c: &mut MoveValidatorClient<Channel>, game_id: &str) {
    c.end_game(pb::EndGameRequest {
        game_id: game_id.into(),
        reason: pb::EndReason::Resignation as i32,
        loser: pb::Color::Black as i32,
        ..Default::default()
    })
    .await
    .unwrap();
}

/// A nats-server whose monitoring port answers on loopback, and that port.
fn monitored_server() -> (NatsServer, u16) {
    let port = test_support::free_port();
    let nats = NatsServer::start_with_config(&format!("http: \"127.0.0.1:{port}\""));
    (nats, port)
}

/// The messages the server has received from clients so far (`/varz` `in_msgs`): each NATS
/// request a client makes is one.
fn in_msgs(monitor: u16) -> u64 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", monitor)).unwrap();
    conn.write_all(b"GET /varz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    let (_, rest) = answer
        .split_once("\"in_msgs\":")
        .unwrap_or_else(|| panic!("no in_msgs in {answer}"));
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("in_msgs is not a number in {answer}"))
}

/// The NATS requests `call` costs, as the server counts them (nothing else runs meanwhile).
async fn requests<T>(monitor: u16, call: impl std::future::Future<Output = T>) -> u64 {
    let before = in_msgs(monitor);
    let _ = call.await;
    in_msgs(monitor) - before
}

/// The scan ListGames made before its index, kept here as the reference its answers are
/// held to: the creation events from the token on, one message get each, and each game's
/// last `.result` (the checked verdict), one more.
async fn scan(bus: &dyn EventBus, req: &pb::ListGamesRequest) -> pb::ListGamesResponse {
    let size = if req.page_size == 0 {
        50
    } else {
        req.page_size as usize
    };
    let mut from: u64 = if req.page_token.is_empty() {
        1
    } else {
        req.page_token.parse().unwrap()
    };
    let mut games = Vec::new();
    let mut scanned = 0;
    while games.len() < size && scanned < 1000 {
        let Some(msg) = bus.next(subject::ALL_CREATED, from).await.unwrap() else {
            break;
        };
        from = msg.sequence + 1;
        scanned += 1;
        let created = match decode_created(&msg.payload) {
            Ok(created) if subject::created(&created.game_id) == msg.subject => created,
            _ => continue,
        };
        let verdict = match bus.last(&subject::result(&created.game_id)).await.unwrap() {
            Some(v) => decode_verdict(v.message_type.as_deref(), &v.payload).ok(),
            None => None,
        };
        if req.live_only && verdict.is_some() {
            continue;
        }
        games.push(pb::GameSummary {
            preset: convert::preset_of(created.ruleset.as_ref()).to_owned(),
            game_id: created.game_id,
            created_sequence: msg.sequence,
            start_sfen: created.start_sfen,
            verdict,
        });
    }
    pb::ListGamesResponse {
        games,
        next_page_token: from.to_string(),
    }
}

/// Pages through the whole list with `page_size` and `live_only`, the validator and the scan
/// side by side, and asserts that every page and every token are the same; the number of
/// games listed.
async fn same_as_scan(
    c: &mut MoveValidatorClient<Channel>,
    bus: &dyn EventBus,
    page_size: u32,
    live_only: bool,
) -> usize {
    let mut token = String::new();
    let mut listed = 0;
    loop {
        let req = list(page_size, &token, live_only);
        let got = c.list_games(req.clone()).await.unwrap().into_inner();
        let want = scan(bus, &req).await;
        assert_eq!(got, want, "{req:?}");
        listed += got.games.len();
        if got.games.is_empty() {
            return listed;
        }
        token = got.next_page_token;
    }
}

/// 200 games, every fourth ended: once the index has read the stream, a page of 100 costs at
/// most three requests (the scan: two a game, 201), and every page of every size, live or
/// not, is the scan's; a verdict announced between two pages leaves the game out of the next
/// `live_only` page; another validator lists the games this one creates and ends, as they
/// are at its call; a purged game is no longer listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_games_reads_an_index_and_answers_as_the_scan_did() {
    let (nats, monitor) = monitored_server();
    let (mut c, _stop) = start(&nats).await;
    for i in 0..GAMES {
        let preset = ["online", "amateur", ""][i % 3];
        c.create_game(create(&id(i), preset, None, None))
            .await
            .unwrap();
    }
    for i in (0..GAMES).step_by(4) {
        end(&mut c, &id(i)).await;
    }
    let bus = JetStreamBus::connect(
        &NatsOptions::new(nats.url()),
        "reference",
        &StreamSettings::new(shogi_proto::STREAM, shogi_proto::STREAM_SUBJECTS),
    )
    .await
    .unwrap();

    // The first call reads the stream into the index; after that, a page costs what the
    // stream's state and two reads that find nothing new cost, whatever its size.
    c.list_games(list(1, "", false)).await.unwrap();
    for live_only in [false, true] {
        let cost = requests(monitor, c.list_games(list(100, "", live_only))).await;
        eprintln!("a page of 100 (live_only {live_only}): {cost} requests");
        assert!(
            cost <= PAGE_REQUESTS_MAX,
            "a page of 100 (live_only {live_only}) cost {cost} requests"
        );
    }
    // The scan it replaced, for the record: two requests a game.
    let scan_cost = requests(monitor, scan(&bus, &list(100, "", false))).await;
    eprintln!("the scan's page of 100: {scan_cost} requests");
    assert!(scan_cost >= 200, "the scan cost {scan_cost}");

    // The same answers, page for page.
    for (size, live_only, games) in [
        (100, false, GAMES),
        (100, true, GAMES * 3 / 4),
        (7, false, GAMES),
        (7, true, GAMES * 3 / 4),
        (0, false, GAMES),
    ] {
        let listed = same_as_scan(&mut c, &bus, size, live_only).await;
        assert_eq!(listed, games, "page size {size}, live_only {live_only}");
    }

    // A verdict between two live pages: the ended game is not on the second.
    let first = c.list_games(list(10, "", true)).await.unwrap().into_inner();
    let next = scan(&bus, &list(10, &first.next_page_token, true)).await;
    let ended = next.games[3].game_id.clone();
    end(&mut c, &ended).await;
    let second = c
        .list_games(list(10, &first.next_page_token, true))
        .await
        .unwrap()
        .into_inner();
    assert!(
        second.games.iter().all(|g| g.game_id != ended),
        "{ended} ended and still listed live"
    );
    assert_eq!(
        second,
        scan(&bus, &list(10, &first.next_page_token, true)).await
    );
    // Not live, it is listed with its verdict.
    let all = c
        .list_games(list(10, &first.next_page_token, false))
        .await
        .unwrap()
        .into_inner();
    let listed = all.games.iter().find(|g| g.game_id == ended).unwrap();
    assert_eq!(listed.verdict.as_ref().unwrap().code_name, "resignation");

    // Another validator: its index reads what this one wrote, and what it writes after.
    let (mut other, _stop_other) = start(&nats).await;
    assert_eq!(same_as_scan(&mut other, &bus, 100, false).await, GAMES);
    c.create_game(create("late", "online", None, None))
        .await
        .unwrap();
    end(&mut c, &id(1)).await;
    assert_eq!(same_as_scan(&mut other, &bus, 100, false).await, GAMES + 1);
    assert_eq!(
        same_as_scan(&mut other, &bus, 30, true).await,
        GAMES * 3 / 4 + 1 - 2
    );
    let cost = requests(monitor, other.list_games(list(100, "", false))).await;
    assert!(cost <= PAGE_REQUESTS_MAX, "the other's page cost {cost}");

    // A purged game (what `streams prune` does) is no longer listed.
    let purged = id(0);
    assert!(bus.purge_subject(&subject::all(&purged)).await.unwrap() > 0);
    for validator in [&mut c, &mut other] {
        assert_eq!(same_as_scan(validator, &bus, 100, false).await, GAMES);
        let page = validator
            .list_games(list(100, "", false))
            .await
            .unwrap()
            .into_inner();
        assert!(page.games.iter().all(|g| g.game_id != purged));
    }
}

/// On the embedded bus (`shogi-arbiter serve`), the same index answers as the scan did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_games_on_the_embedded_bus_answers_as_the_scan_did() {
    let bus: arbiter_bus::Bus = std::sync::Arc::new(arbiter_bus::MemoryBus::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (_stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(move_validator::serve(
        listener,
        bus.clone(),
        Config::new("nats://unused"),
        async {
            let _ = stopped.await;
        },
    ));
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    let mut c = MoveValidatorClient::new(channel);
    for i in 0..40 {
        c.create_game(create(&id(i), "online", None, None))
            .await
            .unwrap();
    }
    for i in (0..40).step_by(3) {
        end(&mut c, &id(i)).await;
    }
    assert_eq!(same_as_scan(&mut c, bus.as_ref(), 6, false).await, 40);
    assert_eq!(same_as_scan(&mut c, bus.as_ref(), 6, true).await, 40 - 14);
    end(&mut c, &id(1)).await;
    assert_eq!(same_as_scan(&mut c, bus.as_ref(), 100, true).await, 40 - 15);
}

fn password(user: &str) -> String {
    format!("{user}-secret-for-the-test")
}

/// Under the shipped authorization (deploy/nats/auth.conf), as its own user and in bind mode,
/// the validator keeps its index with the rights it had (STREAM.INFO and message gets on
/// `SHOGI_GAMES`): no new subject, no consumer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_games_needs_no_right_the_validator_lacks() {
    let auth = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../deploy/nats/auth.conf"
    ))
    .expect("deploy/nats/auth.conf");
    let nats = NatsServer::start_with_auth(&auth, password);
    let as_user = |user: &str| NatsOptions {
        user: Some(user.into()),
        password: Some(password(user)),
        ..NatsOptions::new(nats.url())
    };
    // The streams, as `streams apply` makes them as admin.
    arbiter_runtime::streams::connect(&as_user("admin"), "setup", shogi_proto::STREAM, 1)
        .await
        .unwrap();
    let mut config = Config::new(nats.url());
    config.nats = NatsOptions {
        provision: arbiter_bus::Provision::Bind,
        ..as_user("validator")
    };
    let (channel, _stop) = serve(config).await;
    let mut c = MoveValidatorClient::new(channel);
    for i in 0..3 {
        c.create_game(create(&id(i), "online", None, None))
            .await
            .unwrap();
    }
    end(&mut c, &id(1)).await;
    let all = c.list_games(list(0, "", false)).await.unwrap().into_inner();
    let ids: Vec<_> = all.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["g000", "g001", "g002"]);
    assert!(all.games[1].verdict.is_some());
    let live = c.list_games(list(0, "", true)).await.unwrap().into_inner();
    let ids: Vec<_> = live.games.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["g000", "g002"]);
}
