//! GetGame and AnalyzeGame as a platform meets them: the analysis of a game, and a game too
//! long for one answer, refused whole (ANSWER_TOO_LARGE, never cut short) and read a page at a
//! time to its end, the pages adding up to what a server with room for it answers whole. The
//! real server on loopback against a real nats-server; the long game is long for a server whose
//! largest message is 2 KiB, so that a few hundred plies do.

use move_validator::{Config, MAX_PAGE_PLIES};
use prost::Message as _;
use shogi_adjudication::{Game, Ruleset};
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use test_support::NatsServer;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

mod common;
use common::{create, field, reason, serve, submit};

/// The largest message of the server the long game is too long for.
const SMALL: usize = 2048;

/// The validator on loopback with the largest message `max_message_bytes`, and a client.
async fn start(
    nats: &NatsServer,
    max_message_bytes: usize,
) -> (
    MoveValidatorClient<Channel>,
    tokio::sync::oneshot::Sender<()>,
) {
    let mut config = Config::new(nats.url());
    config.max_message_bytes = max_message_bytes;
    let (channel, stop) = serve(config).await;
    (MoveValidatorClient::new(channel), stop)
}

fn metadata(status: &Status, key: &str) -> String {
    let details = status.get_error_details();
    let info = details.error_info().expect("an ErrorInfo");
    info.metadata
        .get(key)
        .unwrap_or_else(|| panic!("no {key} in {info:?}"))
        .clone()
}

fn get(id: &str, from_ply: u32, max_plies: u32) -> pb::GetGameRequest {
    pb::GetGameRequest {
        game_id: id.into(),
        from_ply,
        max_plies,
    }
}

fn analyze(id: &str, from_ply: u32, max_plies: u32) -> pb::AnalyzeGameRequest {
    pb::AnalyzeGameRequest {
        game_id: id.into(),
        from_ply,
        max_plies,
    }
}

/// A game of `plies` plies from the start position under the `online` rules (no move cap), its
/// moves drawn by a fixed LCG among the legal ones that do not end it.
fn long_game(plies: usize) -> Vec<String> {
    let mut game = Game::startpos(Ruleset::online());
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut moves = Vec::with_capacity(plies);
    while moves.len() < plies {
        let legal: Vec<_> = game.position().legal_moves().iter().copied().collect();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let start = (seed >> 33) as usize % legal.len();
        let mv = (0..legal.len())
            .map(|i| legal[(start + i) % legal.len()])
            .find(|mv| {
                let mut copy = game.clone();
                copy.play(*mv).is_ok_and(|o| o.verdict.is_none())
            })
            .expect("a move that does not end the game");
        game.play(mv).unwrap();
        moves.push(mv.to_string());
    }
    moves
}

/// A game longer than one 2 KiB answer: asked for whole, GetGame and AnalyzeGame refuse it
/// with ANSWER_TOO_LARGE naming the ply and a page size that fits; read a page at a time, each
/// page within the limit and describing the whole game, the pages add up to the moves played
/// and to the analysis a server with room answers whole. A short game is still answered whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_game_is_refused_whole_and_read_a_page_at_a_time() {
    const PLIES: u32 = 400;
    let nats = NatsServer::start();
    let (mut small, _stop) = start(&nats, SMALL).await;
    let (mut roomy, _stop_roomy) = start(&nats, 64 * 1024).await;
    small
        .create_game(create("long", "online", None, None))
        .await
        .unwrap();
    let played = long_game(PLIES as usize);
    for (i, usi) in played.iter().enumerate() {
        let answer = small
            .submit_move(submit("long", i as u32 + 1, usi))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(answer.outcome, pb::MoveOutcome::Accepted as i32, "{usi}");
    }

    // Whole: refused, before anything is cut short.
    let status = small
        .get_game(get("long", 0, 0))
        .await
        .expect_err("too large");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::FailedPrecondition, "ANSWER_TOO_LARGE")
    );
    assert_eq!(metadata(&status, "game_id"), "long");
    assert_eq!(metadata(&status, "current_ply"), PLIES.to_string());
    let page: u32 = metadata(&status, "max_plies").parse().unwrap();
    assert!(page > 0 && page < PLIES, "a page of {page}");

    // GetGame a page of the suggested size at a time, then as many as fit at a time.
    let whole = roomy
        .get_game(get("long", 0, 0))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(whole.next_ply, 0);
    let whole_state = whole.game.expect("a state");
    assert_eq!(whole_state.moves, played);
    // From ply 0 (or 1: the same first move) with `max_plies` 0: as many as fit.
    for (first, max_plies) in [(0, page), (1, 0)] {
        let (mut moves, mut from, mut pages) = (Vec::new(), first, 0);
        loop {
            let answer = small
                .get_game(get("long", from, max_plies))
                .await
                .unwrap_or_else(|s| panic!("page from {from}: {s:?}"))
                .into_inner();
            assert!(answer.encoded_len() <= SMALL);
            let state = answer.game.expect("a state");
            if max_plies > 0 {
                assert!(state.moves.len() <= max_plies as usize);
            }
            // Every field but the moves describes the whole game.
            assert_eq!(
                pb::GameState {
                    moves: Vec::new(),
                    ..state.clone()
                },
                pb::GameState {
                    moves: Vec::new(),
                    ..whole_state.clone()
                }
            );
            moves.extend(state.moves);
            pages += 1;
            if answer.next_ply == 0 {
                break;
            }
            assert_eq!(answer.next_ply as usize, moves.len() + 1);
            from = answer.next_ply;
        }
        assert_eq!(moves, played, "pages of {max_plies}");
        assert!(pages > 1, "{pages} pages of {max_plies}");
    }

    // AnalyzeGame: refused whole; its pages are the roomy server's whole answer.
    let status = small
        .analyze_game(analyze("long", 0, 0))
        .await
        .expect_err("too large");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::FailedPrecondition, "ANSWER_TOO_LARGE")
    );
    assert_eq!(metadata(&status, "current_ply"), PLIES.to_string());
    let whole = roomy
        .analyze_game(analyze("long", 0, 0))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(whole.positions.len(), PLIES as usize + 1);
    assert_eq!(whole.next_ply, 0);
    let (mut positions, mut moves, mut from, mut pages) = (Vec::new(), Vec::new(), 0, 0);
    let mut last = loop {
        let answer = small
            .analyze_game(analyze("long", from, MAX_PAGE_PLIES))
            .await
            .unwrap_or_else(|s| panic!("page from {from}: {s:?}"))
            .into_inner();
        assert!(answer.encoded_len() <= SMALL);
        let state = answer.game.clone().expect("a state");
        let plies: Vec<u32> = answer.positions.iter().map(|p| p.ply).collect();
        assert_eq!(plies.first(), Some(&from), "a page starts at from_ply");
        // The page's moves are its positions' (ply 0 has none).
        let usis: Vec<String> = answer
            .positions
            .iter()
            .filter(|p| p.ply > 0)
            .map(|p| p.usi.clone())
            .collect();
        assert_eq!(state.moves, usis);
        positions.extend(answer.positions.iter().cloned());
        moves.extend(state.moves);
        pages += 1;
        if answer.next_ply == 0 {
            break answer;
        }
        from = answer.next_ply;
    };
    assert!(pages > 1, "{pages} pages");
    assert_eq!(positions, whole.positions);
    assert_eq!(moves, played);
    last.positions = whole.positions.clone();
    if let Some(g) = last.game.as_mut() {
        g.moves = played.clone();
    }
    assert_eq!(
        last, whole,
        "the state, reports and warnings describe the whole game"
    );

    // A short game on the small server: whole, as before.
    small
        .create_game(create("short", "online", None, None))
        .await
        .unwrap();
    for (i, usi) in ["7g7f", "3c3d", "8h2b+"].into_iter().enumerate() {
        small
            .submit_move(submit("short", i as u32 + 1, usi))
            .await
            .unwrap();
    }
    let answer = small
        .get_game(get("short", 0, 0))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (answer.game.unwrap().moves, answer.next_ply),
        (vec!["7g7f".to_owned(), "3c3d".into(), "8h2b+".into()], 0)
    );
    let answer = small
        .analyze_game(analyze("short", 0, 0))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((answer.positions.len(), answer.next_ply), (4, 0));
}

/// A page past the game's next ply, or larger than MAX_PAGE_PLIES, is INVALID_ARGUMENT naming
/// the field; a page from the next ply is empty and complete (nothing new yet); a page cut by
/// `max_plies` says where the next starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_pages_name_their_field_and_the_next_ply_is_an_empty_page() {
    let nats = NatsServer::start();
    let (mut c, _stop) = start(&nats, 64 * 1024).await;
    c.create_game(create("g", "online", None, None))
        .await
        .unwrap();
    for (i, usi) in ["7g7f", "3c3d"].into_iter().enumerate() {
        c.submit_move(submit("g", i as u32 + 1, usi)).await.unwrap();
    }
    for (from, max, bad) in [
        (0, MAX_PAGE_PLIES + 1, "max_plies"),
        (4, 0, "from_ply"),
        (4, 1, "from_ply"),
    ] {
        let got = c.get_game(get("g", from, max)).await.expect_err("bad page");
        let analysed = c
            .analyze_game(analyze("g", from, max))
            .await
            .expect_err("bad page");
        for status in [got, analysed] {
            assert_eq!(
                (
                    status.code(),
                    field(&status).as_str(),
                    reason(&status).as_str()
                ),
                (Code::InvalidArgument, bad, "INVALID_REQUEST"),
                "from {from}, max {max}"
            );
        }
    }
    let answer = c.get_game(get("g", 3, 0)).await.unwrap().into_inner();
    assert_eq!(answer.next_ply, 0);
    assert_eq!(answer.game.map(|g| (g.ply, g.moves.len())), Some((2, 0)));
    let answer = c
        .analyze_game(analyze("g", 3, 5))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((answer.positions.len(), answer.next_ply), (0, 0));
    // One move a page: the first page is ply 1, and the next starts at 2.
    let answer = c.get_game(get("g", 0, 1)).await.unwrap().into_inner();
    assert_eq!(
        (answer.game.unwrap().moves, answer.next_ply),
        (vec!["7g7f".to_owned()], 2)
    );
    let answer = c
        .analyze_game(analyze("g", 1, 1))
        .await
        .unwrap()
        .into_inner();
    let plies: Vec<_> = answer.positions.iter().map(|p| p.ply).collect();
    assert_eq!((plies, answer.next_ply), (vec![1], 2));
}

/// AnalyzeGame counts each position's occurrences and each side's check streak as the game
/// goes, reports both sides' declarations and the last ply's warnings; a bad id is
/// INVALID_ARGUMENT naming `game_id`, an unknown one NOT_FOUND.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_game_counts_occurrences_and_check_streaks() {
    let nats = NatsServer::start();
    let (mut c, _stop) = start(&nats, 64 * 1024).await;
    c.create_game(create(
        "perpetual",
        "online",
        None,
        Some("6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1"),
    ))
    .await
    .unwrap();
    let moves = "5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h".split(' ');
    for (i, usi) in moves.enumerate() {
        c.submit_move(submit("perpetual", i as u32 + 1, usi))
            .await
            .unwrap();
    }
    let analysis = c
        .analyze_game(pb::AnalyzeGameRequest {
            game_id: "perpetual".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(analysis.game.as_ref().map(|g| g.ply), Some(9));
    assert_eq!(analysis.positions.len(), 10, "plies 0 to 9");
    let at = |ply: usize| &analysis.positions[ply];
    assert_eq!(
        (at(0).ply, at(0).usi.as_str(), at(0).occurrence),
        (0, "", 1)
    );
    assert_eq!((at(1).usi.as_str(), at(1).gave_check), ("5h3h", true));
    assert_eq!((at(2).usi.as_str(), at(2).gave_check), ("3a2a", false));
    assert_eq!(
        (at(5).occurrence, at(5).earlier_plies.as_slice()),
        (2, &[1][..])
    );
    assert_eq!(
        (at(9).occurrence, at(9).earlier_plies.as_slice()),
        (3, &[1, 5][..])
    );
    // Rook on 2h, king on 3a, Black to move: first seen at ply 4.
    assert_eq!(at(4).occurrence, 1);
    assert_eq!(
        (at(6).occurrence, at(6).earlier_plies.as_slice()),
        (2, &[2][..])
    );
    // Black checked with each of its five moves, White never.
    assert_eq!((at(9).black_check_streak, at(9).white_check_streak), (5, 0));
    assert_eq!(at(3).black_check_streak, 2);
    let kinds: Vec<_> = analysis
        .warnings
        .iter()
        .map(|w| match &w.kind {
            Some(pb::warning::Kind::ThirdOccurrence(t)) => format!("third {:?}", t.plies),
            Some(pb::warning::Kind::PerpetualCheckRisk(r)) => {
                format!("risk {} since {}", r.checker, r.since_ply)
            }
            None => "none".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "third [1, 5, 9]".to_owned(),
            format!("risk {} since 1", pb::Color::Black as i32)
        ]
    );
    // The 27-point rule of `online`: both sides' reports. It is White's turn after ply 9, so
    // Black's first condition fails and White's holds.
    let black = analysis.black_declaration.as_ref().expect("black's report");
    let white = analysis.white_declaration.as_ref().expect("white's report");
    assert_eq!(
        (black.rule.as_str(), black.declarer),
        ("points27", pb::Color::Black as i32)
    );
    assert_eq!(white.declarer, pb::Color::White as i32);
    let declarers_turn = |r: &pb::DeclarationReport| {
        r.conditions
            .iter()
            .find(|c| c.name == "declarers_turn")
            .map(|c| c.met)
    };
    assert_eq!(declarers_turn(black), Some(false));
    assert_eq!(declarers_turn(white), Some(true));

    // A ruleset that does not count the start position: ply 0 is not an occurrence.
    c.create_game(create(
        "csa-count",
        "online",
        Some(pb::RulesetOverrides {
            start_position_counted: Some(false),
            declaration: pb::DeclarationRule::None as i32,
            declaration_trigger: pb::DeclarationTrigger::Explicit as i32,
            ..Default::default()
        }),
        None,
    ))
    .await
    .unwrap();
    let analysis = c
        .analyze_game(pb::AnalyzeGameRequest {
            game_id: "csa-count".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(analysis.positions[0].occurrence, 0);
    assert!(analysis.black_declaration.is_none() && analysis.white_declaration.is_none());

    let status = c
        .analyze_game(pb::AnalyzeGameRequest {
            game_id: "no.such game".into(),
            ..Default::default()
        })
        .await
        .expect_err("bad id");
    assert_eq!(
        (
            status.code(),
            field(&status).as_str(),
            reason(&status).as_str()
        ),
        (Code::InvalidArgument, "game_id", "INVALID_REQUEST")
    );
    let status = c
        .analyze_game(pb::AnalyzeGameRequest {
            game_id: "nobody".into(),
            ..Default::default()
        })
        .await
        .expect_err("unknown");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::NotFound, "GAME_NOT_FOUND")
    );
}
