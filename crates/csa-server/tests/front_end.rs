//! The front end in front of the whole arbiter (the stack on its embedded bus), over TCP as an
//! engine meets it: endings the arbiter reaches (a late move, a verdict no CSA client caused),
//! and the bounds on bad clients.

mod common;

use common::{Client, Front, X1_LOGINS, start, started, white_plays_chudan};
use shogi_proto::v1 as pb;
use shogi_proto::v1::move_validator_client::MoveValidatorClient;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_no_csa_client_caused_ends_the_csa_game() {
    let front = start(|_| {}).await;
    let (mut b, mut w) = started(&front, X1_LOGINS, "watch-600-10").await;
    b.send(b"+7776FU\n").await;
    assert_eq!(w.until(|l| l.starts_with('+')).await, ["+7776FU,T0"]);
    // A platform ends the game on the arbiter (as the arbiter's flag of a silent side does by
    // itself): only WatchGame tells the front end.
    let game_id = the_game(&front).await.game_id;
    MoveValidatorClient::connect(front.grpc.clone())
        .await
        .expect("connect")
        .end_game(pb::EndGameRequest {
            game_id,
            reason: pb::EndReason::Resignation as i32,
            loser: pb::Color::White as i32,
            ..Default::default()
        })
        .await
        .expect("end the game");
    assert_eq!(
        w.until(|l| l.starts_with("#LOSE")).await,
        ["%TORYO", "#RESIGN", "#LOSE"]
    );
    assert_eq!(
        b.until(|l| l.starts_with("#WIN")).await,
        ["+7776FU,T0", "%TORYO", "#RESIGN", "#WIN"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_after_its_sides_deadline_is_a_time_up() {
    let front = start(|_| {}).await;
    // One second, no byoyomi: Black's first move a second and a tenth late.
    let (mut b, mut w) = started(&front, X1_LOGINS, "late-1-0").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    b.send(b"+7776FU\n").await;
    assert_eq!(
        b.until(|l| l.starts_with('#') && l != "#TIME_UP").await,
        ["#TIME_UP", "#LOSE"]
    );
    assert_eq!(
        w.until(|l| l.starts_with('#') && l != "#TIME_UP").await,
        ["#TIME_UP", "#WIN"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_answered_and_bounded() {
    let front = start(|c| c.max_connections = 3).await;
    let mut c = Client::connect(&front.csa).await;
    c.send(b"LOGIN bad pw x1\n").await;
    c.until(|l| l == "##[LOGIN] +OK x1").await;
    // A line of a megabyte: refused with its column, and the next line is read whole.
    let mut long = vec![b'x'; 1 << 20];
    long.extend_from_slice(b"\n%%VERSION\n");
    c.send(&long).await;
    let error = c.line().await.expect("an answer");
    assert!(error.starts_with("##[ERROR] column 8193"), "{error}");
    assert!(c.until(|l| l == "##[VERSION] +OK").await[0].starts_with("##[VERSION] Shogi Server"));
    // A line that is no UTF-8 (nor a move's comment in EUC-JP or Shift_JIS).
    c.send(b"%%WHO\xff\xfe\n").await;
    let error = c.line().await.expect("an answer");
    assert!(error.starts_with("##[ERROR] column 6"), "{error}");
    // Two more connections fill the limit; one more is told so and closed.
    let _two = Client::connect(&front.csa).await;
    let _three = Client::connect(&front.csa).await;
    let mut four = Client::connect(&front.csa).await;
    assert_eq!(
        four.line().await.as_deref(),
        Some("##[ERROR] too many connections")
    );
    assert_eq!(four.line().await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_logs_in_is_closed() {
    let front = start(|c| c.login_timeout = Duration::from_millis(200)).await;
    let mut silent = Client::connect(&front.csa).await;
    assert_eq!(silent.line().await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_is_echoed_with_the_seconds_the_clock_charged() {
    let front = start(|_| {}).await;
    let (mut b, mut w) = started(&front, X1_LOGINS, "charged-10-0").await;
    // A second and a twentieth: charged one whole second (SubmitMoveResponse.charged_ms).
    tokio::time::sleep(Duration::from_millis(1050)).await;
    b.send(b"+7776FU\n").await;
    assert_eq!(w.until(|l| l.starts_with('+')).await, ["+7776FU,T1"]);
    assert_eq!(b.until(|l| l.starts_with('+')).await, ["+7776FU,T1"]);
    w.send(b"-3334FU\n").await;
    assert_eq!(b.until(|l| l.starts_with('-')).await, ["-3334FU,T0"]);
}

/// The only game on the arbiter behind `front`, whole.
async fn the_game(front: &Front) -> pb::GameState {
    common::the_game(front.grpc.trim_start_matches("http://")).await
}

/// `%CHUDAN` (and every line shogi-server plays as an illegal move that is no move of the board)
/// reaches the arbiter as what it is: an illegal move the front end reports, with the line, at
/// the ply it was meant for; the players get shogi-server's lines.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chudan_is_an_illegal_move_reported_with_its_line() {
    let front = start(|_| {}).await;
    let (mut b, mut w) = started(&front, X1_LOGINS, "chudan-600-10").await;
    white_plays_chudan(&mut b, &mut w).await;
    let game = the_game(&front).await;
    assert_eq!(game.moves, ["7g7f"], "no move stands for the line");
    let v = game.verdict.expect("a verdict");
    assert_eq!(
        (v.code, v.winner, v.ply, v.code_name.as_str()),
        (
            pb::ResultCode::IllegalMove as i32,
            pb::Color::Black as i32,
            2,
            "illegal_move"
        ),
        "{v:?}"
    );
    assert_eq!(
        v.evidence,
        Some(pb::verdict::Evidence::Reported(pb::ReportedEvidence {
            note: "%CHUDAN".to_owned()
        }))
    );
}

/// `--csa-checkmate shogi-server`: after the mating move the game goes on for the players until
/// the mated side's line; the arbiter's verdict is the checkmate all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkmate_held_for_shogi_servers_lines_ends_at_the_mated_sides_line() {
    let front = start(|c| c.checkmate = csa_server::CheckmateLines::ShogiServer).await;
    let (mut b, mut w) = started(&front, X1_LOGINS, "mate-600-10").await;
    let mate = [
        "+7776FU", "-3334FU", "+8822UM", "-5142OU", "+0066KA", "-6152KI", "+9796FU", "-2133KE",
        "+2233UM",
    ];
    for m in mate {
        let who = if m.starts_with('+') { &mut b } else { &mut w };
        who.send(format!("{m}\n").as_bytes()).await;
        b.until(|l| l.starts_with(m)).await;
        w.until(|l| l.starts_with(m)).await;
    }
    let game = the_game(&front).await;
    let v = game.verdict.expect("the checkmate, on the arbiter");
    assert_eq!(v.code, pb::ResultCode::Checkmate as i32, "{v:?}");
    // The mated side's %KACHI: echoed with its time, then an illegal declaration.
    w.send(b"%KACHI\n").await;
    assert_eq!(
        w.until(|l| l.starts_with("#LOSE")).await,
        ["%KACHI,T0", "%KACHI", "#ILLEGAL_MOVE", "#LOSE"]
    );
    assert_eq!(
        b.until(|l| l.starts_with("#WIN")).await,
        ["%KACHI,T0", "%KACHI", "#ILLEGAL_MOVE", "#WIN"]
    );
}

/// `--csa-checkmate shogi-server`: a mated side that stays silent is out of time at the end of
/// its time, as in shogi-server (which finds it when a line comes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_mated_side_is_out_of_time() {
    let front = start(|c| c.checkmate = csa_server::CheckmateLines::ShogiServer).await;
    let (mut b, mut w) = started(&front, X1_LOGINS, "matetime-2-1").await;
    let mate = [
        "+7776FU", "-3334FU", "+8822UM", "-5142OU", "+0066KA", "-6152KI", "+9796FU", "-2133KE",
        "+2233UM",
    ];
    for m in mate {
        let who = if m.starts_with('+') { &mut b } else { &mut w };
        who.send(format!("{m}\n").as_bytes()).await;
        b.until(|l| l.starts_with(m)).await;
        w.until(|l| l.starts_with(m)).await;
    }
    assert_eq!(
        w.until(|l| l.starts_with("#LOSE")).await,
        ["#TIME_UP", "#LOSE"]
    );
    assert_eq!(
        b.until(|l| l.starts_with("#WIN")).await,
        ["#TIME_UP", "#WIN"]
    );
}

/// As shogi-server: a name logged in again with the same password, its former connection
/// waiting for no game, takes the name over and closes the former connection (the client that
/// logs out and at once in again, its `LOGOUT` not yet read; `TC_functional` hung on it under
/// load); with another password, or while the former plays, the new login is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_logged_in_again_takes_over_an_idle_connection_not_a_game() {
    let front = start(|_| {}).await;
    let mut former = Client::login(&front.csa, "again").await;
    former.send(b"%%GAME again-600-10 +\n").await;
    let mut other_password = Client::connect(&front.csa).await;
    other_password.send(b"LOGIN again other x1\n").await;
    assert_eq!(
        other_password.line().await.as_deref(),
        Some("LOGIN:incorrect")
    );
    let mut again = Client::login(&front.csa, "again").await;
    // The former connection is closed (whatever it was told before).
    while let Some(line) = former.line().await {
        assert!(!line.starts_with("BEGIN"), "the former was paired: {line}");
    }
    // The name is the new connection's: it plays, and while it does, the name is not taken.
    let mut white = Client::login(&front.csa, "white").await;
    again.send(b"%%GAME again-600-10 +\n").await;
    white.send(b"%%GAME again-600-10 -\n").await;
    again.until(|l| l == "END Game_Summary").await;
    white.until(|l| l == "END Game_Summary").await;
    again.send(b"AGREE\n").await;
    white.send(b"AGREE\n").await;
    again.until(|l| l.starts_with("START:")).await;
    let mut third = Client::connect(&front.csa).await;
    third.send(b"LOGIN again pw x1\n").await;
    assert_eq!(third.line().await.as_deref(), Some("LOGIN:incorrect"));
}
