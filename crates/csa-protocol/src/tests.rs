//! Unit tests as data tables, one `check(input, expect)` per table.

use crate::command::{Command, Login, ParseErrorKind, Turn};
use crate::game_name::{GameKind, GameName, GameNameError, Handicap, IdentifierError, TimeControl};
use crate::matcher::{Matcher, Pairing, SeekRefusal};
use crate::moves::{CsaMove, MoveError};
use crate::server::{self, GameEnd, GameSummary, Status, TimedMove, WhoEntry};
use crate::server_line::ServerLine;
use crate::session::{Action, Event, Output, Session};
use shogi_rules::{Color, Position};

fn mv(text: &str) -> CsaMove {
    CsaMove::parse(text).expect("a move in the table")
}

fn game(text: &str) -> GameName {
    GameName::parse(text).expect("a game name in the table")
}

#[test]
fn client_lines() {
    #[track_caller]
    fn check(input: &[u8], expect: Result<Command, (usize, ParseErrorKind)>) {
        let got = Command::parse(input).map_err(|e| (e.column, e.kind));
        assert_eq!(got, expect, "{:?}", String::from_utf8_lossy(input));
    }
    let login = |name: &str, password: &str, x1| {
        Ok(Command::Login(Login {
            name: name.into(),
            password: password.into(),
            x1,
        }))
    };
    check(b"LOGIN alice pw x1\n", login("alice", "pw", true));
    check(
        b"LOGIN alice floodgate-300-10F,trip\r\n",
        login("alice", "floodgate-300-10F,trip", false),
    );
    check(b"LOGIN  a.b@c-d_e  pw", login("a.b@c-d_e", "pw", false));
    check(b"LOGIN alice", Err((1, ParseErrorKind::LoginShape)));
    check(b"LOGIN alice pw x2", Err((1, ParseErrorKind::LoginShape)));
    check(
        b"LOGIN al!ce pw",
        Err((
            7,
            ParseErrorKind::PlayerName(IdentifierError::BadChar { ch: '!', column: 3 }),
        )),
    );
    check(
        format!("LOGIN {} pw", "a".repeat(33)).as_bytes(),
        Err((
            7,
            ParseErrorKind::PlayerName(IdentifierError::TooLong { len: 33 }),
        )),
    );
    check(b"LOGOUT", Ok(Command::Logout));
    check(b"AGREE", Ok(Command::Agree(None)));
    check(b"AGREE game+1", Ok(Command::Agree(Some("game+1".into()))));
    check(
        b"REJECT game+1\n",
        Ok(Command::Reject(Some("game+1".into()))),
    );
    check(
        b"+7776FU",
        Ok(Command::Move {
            mv: mv("+7776FU"),
            comment: None,
        }),
    );
    check(
        b"-0055KA,'* 30 +2726FU",
        Ok(Command::Move {
            mv: mv("-0055KA"),
            comment: Some("* 30 +2726FU".into()),
        }),
    );
    // What follows a comma without a quote is ignored, as shogi-server does (`,T10`).
    check(
        b"+7776FU,T10",
        Ok(Command::Move {
            mv: mv("+7776FU"),
            comment: None,
        }),
    );
    check(
        b"+7776F",
        Err((1, ParseErrorKind::Move(MoveError::Length { len: 6 }))),
    );
    check(
        b"+7x76FU",
        Err((3, ParseErrorKind::Move(MoveError::Digit { column: 3 }))),
    );
    check(
        b"+7076FU",
        Err((2, ParseErrorKind::Move(MoveError::OffBoard { column: 2 }))),
    );
    check(
        b"+7770FU",
        Err((4, ParseErrorKind::Move(MoveError::OffBoard { column: 4 }))),
    );
    check(
        b"+7776XX",
        Err((
            6,
            ParseErrorKind::Move(MoveError::Piece { name: "XX".into() }),
        )),
    );
    check(b"%TORYO", Ok(Command::Resign));
    check(b"%TORYO,'resign", Ok(Command::Resign));
    check(b"%KACHI", Ok(Command::Kachi));
    check(b"%CHUDAN", Ok(Command::Chudan));
    check(b"%MATTA", Ok(Command::OtherSpecial("%MATTA".into())));
    check(b"\n", Ok(Command::KeepAlive));
    check(b"", Ok(Command::KeepAlive));
    check(b" \r\n", Ok(Command::QuietKeepAlive));
    check(b"  \t", Ok(Command::Blank));
    check(
        b"%%GAME floodgate-300-10F *",
        Ok(Command::Game {
            name: game("floodgate-300-10F"),
            turn: Turn::Any,
        }),
    );
    check(
        b"%%GAME g-1500-0 + ",
        Ok(Command::Game {
            name: game("g-1500-0"),
            turn: Turn::Black,
        }),
    );
    check(
        b"%%CHALLENGE g-1500-0 -",
        Ok(Command::Challenge {
            name: game("g-1500-0"),
            turn: Turn::White,
        }),
    );
    check(b"%%GAME", Ok(Command::CancelGame));
    check(b"%%GAME g-1500-0", Err((16, ParseErrorKind::TurnRequired)));
    check(
        b"%%GAME g-1500-0 x",
        Err((17, ParseErrorKind::TurnRequired)),
    );
    check(
        b"%%GAME nothree +",
        Err((
            8,
            ParseErrorKind::GameName {
                name: "nothree".into(),
                error: GameNameError::Shape,
            },
        )),
    );
    check(b"%%WHO", Ok(Command::Who));
    check(b"%%LIST", Ok(Command::List));
    check(b"%%SHOW g+1", Ok(Command::Show("g+1".into())));
    check(b"%%SHOW", Err((1, ParseErrorKind::Unknown)));
    check(b"%%MONITORON g", Ok(Command::MonitorOn("g".into())));
    check(b"%%MONITOROFF g", Ok(Command::MonitorOff("g".into())));
    check(b"%%MONITOR2ON g", Ok(Command::Monitor2On("g".into())));
    check(b"%%MONITOR2OFF g", Ok(Command::Monitor2Off("g".into())));
    check(b"%%HELP", Ok(Command::Help));
    check(b"%%VERSION", Ok(Command::Version));
    check(b"%%RATING", Ok(Command::Rating));
    check(b"%%CHAT hello all", Ok(Command::Chat("hello all".into())));
    check(b"CHALLENGE", Ok(Command::ChallengeAccepted));
    check(
        b"%%SETBUOY buoy_x-1-2 +7776FU-3334FU 3",
        Ok(Command::SetBuoy {
            game: "buoy_x-1-2".into(),
            moves: "+7776FU-3334FU".into(),
            count: 3,
        }),
    );
    check(
        b"%%SETBUOY buoy_x-1-2 +7776FU",
        Ok(Command::SetBuoy {
            game: "buoy_x-1-2".into(),
            moves: "+7776FU".into(),
            count: 1,
        }),
    );
    check(
        b"%%DELETEBUOY buoy_x-1-2",
        Ok(Command::DeleteBuoy("buoy_x-1-2".into())),
    );
    check(
        b"%%GETBUOYCOUNT buoy_x-1-2",
        Ok(Command::GetBuoyCount("buoy_x-1-2".into())),
    );
    check(
        b"%%FORK src",
        Ok(Command::Fork {
            source: "src".into(),
            new_game: None,
            nth: None,
        }),
    );
    check(
        b"%%FORK src buoy_y-1-2 7",
        Ok(Command::Fork {
            source: "src".into(),
            new_game: Some("buoy_y-1-2".into()),
            nth: Some(7),
        }),
    );
    check(b"%%%81DOJO", Ok(Command::Ignored));
    check(b"%%BLAH", Err((1, ParseErrorKind::Unknown)));
    check(b"%", Err((1, ParseErrorKind::Unknown)));
    check(b"hello", Err((1, ParseErrorKind::Unknown)));
    check(b"AB\xff\xfe", Err((3, ParseErrorKind::InvalidUtf8)));
    check(
        &vec![b'+'; crate::MAX_LINE_LEN + 1],
        Err((
            crate::MAX_LINE_LEN + 1,
            ParseErrorKind::TooLong {
                len: crate::MAX_LINE_LEN + 1,
            },
        )),
    );
}

/// Any bytes parse to a command or an error, never a panic (a fixed pseudo-random sample,
/// weighted towards the bytes the grammar looks at).
#[test]
fn any_bytes_parse_without_panic() {
    let alphabet = b"+-%0123456789FUKAHIOT ,'\t\r\nLOGIN xAGREMSWC\xff\xc3";
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let len = (next() % 24) as usize;
        let line: Vec<u8> = (0..len)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let _ = Command::parse(&line);
        let _ = ServerLine::parse(&String::from_utf8_lossy(&line));
        let mut s = Session::new("test");
        let _ = s.line(&line);
    }
}

#[test]
fn game_names() {
    #[track_caller]
    fn check(input: &str, expect: Result<(&str, [u32; 3], bool, GameKind), GameNameError>) {
        let got = GameName::parse(input).map(|g| {
            let t = g.time();
            (
                g.base().to_owned(),
                [t.total, t.byoyomi, t.increment],
                t.stop_watch,
                g.kind(),
            )
        });
        let expect = expect.map(|(b, n, sw, k)| (b.to_owned(), n, sw, k));
        assert_eq!(got, expect, "{input}");
    }
    check(
        "floodgate-300-10F",
        Ok(("floodgate", [300, 0, 10], false, GameKind::Floodgate)),
    );
    check(
        "floodgate-600-10",
        Ok(("floodgate", [600, 10, 0], false, GameKind::Floodgate)),
    );
    check(
        "game-1500-60",
        Ok(("game", [1500, 60, 0], false, GameKind::Direct)),
    );
    check(
        "game-10-05",
        Ok(("game", [10, 5, 0], true, GameKind::Direct)),
    );
    check(
        "game-10-00",
        Ok(("game", [10, 0, 0], true, GameKind::Direct)),
    );
    check(
        "game-10-05F",
        Ok(("game", [10, 0, 5], true, GameKind::Direct)),
    );
    check("game-0-0", Ok(("game", [0, 0, 0], false, GameKind::Direct)));
    check(
        "a-b-300-10",
        Ok(("a-b", [300, 10, 0], false, GameKind::Direct)),
    );
    check(
        "floodgatex-300-10",
        Ok(("floodgatex", [300, 10, 0], false, GameKind::Direct)),
    );
    check(
        "buoy_x-1-2",
        Ok(("buoy_x", [1, 2, 0], false, GameKind::Buoy)),
    );
    check(
        "hclance_x-600-10",
        Ok((
            "hclance_x",
            [600, 10, 0],
            false,
            GameKind::Handicap(Handicap::Lance),
        )),
    );
    check(
        "hc10p_x-600-10",
        Ok((
            "hc10p_x",
            [600, 10, 0],
            false,
            GameKind::Handicap(Handicap::TenPieces),
        )),
    );
    check("game", Err(GameNameError::Shape));
    check("game-300", Err(GameNameError::Shape));
    check("-300-10", Err(GameNameError::Shape));
    check("game-300-10FF", Err(GameNameError::Shape));
    check("game-300-F", Err(GameNameError::Shape));
    check("game-3x0-10", Err(GameNameError::Shape));
    check(
        "bad!-300-10",
        Err(GameNameError::Base(IdentifierError::BadChar {
            ch: '!',
            column: 4,
        })),
    );
    check(
        &format!("{}-1-2", "g".repeat(33)),
        Err(GameNameError::Base(IdentifierError::TooLong { len: 33 })),
    );
    check(
        "g-99999999999-1",
        Err(GameNameError::TooLarge { field: "total" }),
    );
    check(
        "g-1-0099999999999",
        Err(GameNameError::TooLarge { field: "byoyomi" }),
    );
}

#[test]
fn csa_mode_logins_read_game_turn_and_trip() {
    #[track_caller]
    fn check(password: &str, expect: (&str, Turn, Option<&str>)) {
        let login = Login {
            name: "p".into(),
            password: password.into(),
            x1: false,
        };
        let r = login.csa_request();
        assert_eq!(
            (r.game.as_str(), r.turn, r.password.as_deref()),
            expect,
            "{password}"
        );
    }
    check("pw", ("default-1500-0", Turn::Any, Some("pw")));
    check("game-300-10", ("game-300-10", Turn::Any, None));
    check("game-300-10-B", ("game-300-10", Turn::Black, None));
    check("game-300-10F-w", ("game-300-10F", Turn::White, None));
    check(
        "floodgate-300-10F,trip",
        ("floodgate-300-10F", Turn::Any, Some("trip")),
    );
    check(
        "game-300-10-B,trip",
        ("game-300-10", Turn::Black, Some("trip")),
    );
    check("game-300-10,a,b", ("game-300-10", Turn::Any, Some("a,b")));
    check("bad!-1-2,trip", ("default-1500-0", Turn::Any, Some("trip")));
    check("pass,", ("default-1500-0", Turn::Any, Some("pass,")));
}

#[test]
fn moves_round_trip() {
    #[track_caller]
    fn check(text: &str, expect: Result<&str, MoveError>) {
        let got = CsaMove::parse(text).map(|m| m.to_string());
        assert_eq!(got, expect.map(str::to_owned), "{text}");
    }
    check("+7776FU", Ok("+7776FU"));
    check("-0055KA", Ok("-0055KA"));
    check("+2822UM", Ok("+2822UM"));
    check("*7776FU", Err(MoveError::Side));
    check("+0076FU", Ok("+0076FU"));
    check("+0776FU", Err(MoveError::OffBoard { column: 2 }));
}

fn summary(position: Position, moves: Vec<TimedMove>, game_name: &str) -> GameSummary {
    GameSummary {
        game_id: "test+g+a+b+20260101000000".into(),
        black: "a".into(),
        white: "b".into(),
        to_move: Color::Black,
        max_moves: 256,
        time: game(game_name).time(),
        least_time_per_move: 0,
        position,
        moves,
    }
}

const EVEN: &str = "P1-KY-KE-GI-KI-OU-KI-GI-KE-KY
P2 * -HI *  *  *  *  * -KA * 
P3-FU-FU-FU-FU-FU-FU-FU-FU-FU
P4 *  *  *  *  *  *  *  *  * 
P5 *  *  *  *  *  *  *  *  * 
P6 *  *  *  *  *  *  *  *  * 
P7+FU+FU+FU+FU+FU+FU+FU+FU+FU
P8 * +KA *  *  *  *  * +HI * 
P9+KY+KE+GI+KI+OU+KI+GI+KE+KY
+
";

#[test]
fn server_lines_render_as_shogi_server_writes_them() {
    #[track_caller]
    fn check(got: String, expect: &str) {
        assert_eq!(got, expect);
    }
    let head = "BEGIN Game_Summary\nProtocol_Version:1.2\nProtocol_Mode:Server\nFormat:Shogi 1.0\n\
                Declaration:Jishogi 1.1\nGame_ID:test+g+a+b+20260101000000\nName+:a\nName-:b\n";
    check(
        summary(Position::startpos(), vec![], "g-300-10F").render(Color::White),
        &format!(
            "{head}Your_Turn:-\nRematch_On_Draw:NO\nTo_Move:+\nMax_Moves:256\nBEGIN Time\n\
             Time_Unit:1sec\nTotal_Time:300\nByoyomi:0\nIncrement:10\nLeast_Time_Per_Move:0\n\
             END Time\nBEGIN Position\n{EVEN}END Position\nEND Game_Summary\n"
        ),
    );
    // A buoy start: the even position, then the moves played with their times.
    let mut s = summary(
        Position::startpos(),
        vec![
            TimedMove {
                mv: mv("+7776FU"),
                time: 1,
            },
            TimedMove {
                mv: mv("-3334FU"),
                time: 1,
            },
        ],
        "buoy_x-10-05",
    );
    s.to_move = Color::Black;
    check(
        s.render(Color::Black),
        &format!(
            "{head}Your_Turn:+\nRematch_On_Draw:NO\nTo_Move:+\nMax_Moves:256\nBEGIN Time\n\
             Time_Unit:1min\nTotal_Time:10\nByoyomi:5\nIncrement:0\nLeast_Time_Per_Move:0\n\
             END Time\nBEGIN Position\n{EVEN}+7776FU,T1\n-3334FU,T1\nEND Position\n\
             END Game_Summary\n"
        ),
    );
    // Hands, rook first; White to move.
    let p = Position::from_sfen("4k4/9/9/9/9/9/9/9/4K4 w RB2Pp 1").expect("an SFEN");
    check(
        server::position_lines(&p),
        "P1 *  *  *  * -OU *  *  *  * \nP2 *  *  *  *  *  *  *  *  * \n\
         P3 *  *  *  *  *  *  *  *  * \nP4 *  *  *  *  *  *  *  *  * \n\
         P5 *  *  *  *  *  *  *  *  * \nP6 *  *  *  *  *  *  *  *  * \n\
         P7 *  *  *  *  *  *  *  *  * \nP8 *  *  *  *  *  *  *  *  * \n\
         P9 *  *  *  * +OU *  *  *  * \nP+00HI00KA00FU00FU\nP-00FU\n-\n",
    );
    check(server::login_ok("a", false), "LOGIN:a OK\n");
    check(
        server::login_ok("a", true),
        "LOGIN:a OK\n##[LOGIN] +OK x1\n",
    );
    check(
        server::login_incorrect(crate::Eol::CrLf, 2),
        "LOGIN:incorrect\r\n",
    );
    check(
        server::login_incorrect(crate::Eol::Lf, 5),
        "LOGIN:incorrect\ntype 'LOGIN name password' or 'LOGIN name password x1'\n",
    );
    check(
        server::login_duplicate("a", true),
        "LOGIN:incorrect\nusername a is already connected\n",
    );
    check(server::start("g+1"), "START:g+1\n");
    check(server::reject("g+1", "b"), "REJECT:g+1 by b\n");
    check(
        server::move_echo(TimedMove {
            mv: mv("+7776FU"),
            time: 12,
        }),
        "+7776FU,T12\n",
    );
    check(server::kachi_echo(3), "%KACHI,T3\n");
    check(
        server::who(&[
            WhoEntry {
                id: "a+0f".into(),
                x1: true,
                status: Status::GameWaiting,
                game: Some(("g-1-2".into(), Turn::Black)),
            },
            WhoEntry {
                id: "b".into(),
                x1: false,
                status: Status::Connected,
                game: None,
            },
        ]),
        "##[WHO] a+0f x1 game_waiting g-1-2 +\n##[WHO] b CSA connected\n##[WHO] +OK\n",
    );
    check(
        server::list(["g+1", "g+2"]),
        "##[LIST] g+1\n##[LIST] g+2\n##[LIST] +OK\n",
    );
    check(
        server::monitor2("g+1", "+7776FU\nT1\n"),
        "##[MONITOR2][g+1] +7776FU\n##[MONITOR2][g+1] T1\n##[MONITOR2][g+1] +OK\n",
    );
    check(
        server::unknown_command("unknown command", "LOGIN alice secret x1"),
        "##[ERROR] unknown command: LOGIN alice...\n",
    );
    check(
        server::version("1"),
        "##[VERSION] Shogi Server revision 1\n##[VERSION] +OK\n",
    );
}

#[test]
fn endings_for_each_side() {
    #[track_caller]
    fn check(end: GameEnd, black: &str, white: &str) {
        assert_eq!(end.render(Color::Black), black, "{end:?} for Black");
        assert_eq!(end.render(Color::White), white, "{end:?} for White");
    }
    use Color::{Black, White};
    check(
        GameEnd::Resign { loser: White },
        "%TORYO\n#RESIGN\n#WIN\n",
        "%TORYO\n#RESIGN\n#LOSE\n",
    );
    check(
        GameEnd::Abandon { loser: Black },
        "%TORYO\n#RESIGN\n#LOSE\n",
        "%TORYO\n#RESIGN\n#WIN\n",
    );
    check(
        GameEnd::TimeUp { loser: Black },
        "#TIME_UP\n#LOSE\n",
        "#TIME_UP\n#WIN\n",
    );
    check(
        GameEnd::Kachi { winner: Black },
        "%KACHI\n#JISHOGI\n#WIN\n",
        "%KACHI\n#JISHOGI\n#LOSE\n",
    );
    check(
        GameEnd::IllegalKachi { loser: White },
        "%KACHI\n#ILLEGAL_MOVE\n#WIN\n",
        "%KACHI\n#ILLEGAL_MOVE\n#LOSE\n",
    );
    check(
        GameEnd::IllegalMove { loser: White },
        "#ILLEGAL_MOVE\n#WIN\n",
        "#ILLEGAL_MOVE\n#LOSE\n",
    );
    check(
        GameEnd::OuteSennichite { loser: Black },
        "#OUTE_SENNICHITE\n#LOSE\n",
        "#OUTE_SENNICHITE\n#WIN\n",
    );
    check(
        GameEnd::Sennichite,
        "#SENNICHITE\n#DRAW\n",
        "#SENNICHITE\n#DRAW\n",
    );
    check(
        GameEnd::MaxMoves,
        "#MAX_MOVES\n#CENSORED\n",
        "#MAX_MOVES\n#CENSORED\n",
    );
    check(GameEnd::Chudan, "#CHUDAN\n", "#CHUDAN\n");
}

#[test]
fn server_lines_read_back() {
    #[track_caller]
    fn check(line: &str, expect: Result<ServerLine, usize>) {
        assert_eq!(
            ServerLine::parse(line).map_err(|e| e.column),
            expect,
            "{line:?}"
        );
    }
    check("LOGIN:a OK", Ok(ServerLine::LoginOk("a".into())));
    check("LOGIN:incorrect", Ok(ServerLine::LoginIncorrect));
    check("LOGIN:", Err(7));
    check(
        "Protocol_Version:1.2",
        Ok(ServerLine::Field {
            key: "Protocol_Version".into(),
            value: "1.2".into(),
        }),
    );
    check(
        "Remaining_Time+:0",
        Ok(ServerLine::Field {
            key: "Remaining_Time+".into(),
            value: "0".into(),
        }),
    );
    check(
        "Last_Move:",
        Ok(ServerLine::Field {
            key: "Last_Move".into(),
            value: "".into(),
        }),
    );
    check(
        "P2 * -HI *  *  *  *  * -KA * ",
        Ok(ServerLine::Board("P2 * -HI *  *  *  *  * -KA * ".into())),
    );
    check("P2 * -HI", Err(2));
    check("P+00FU", Ok(ServerLine::Board("P+00FU".into())));
    check("+", Ok(ServerLine::SideToMove('+')));
    check(
        "+7776FU,T0",
        Ok(ServerLine::Move(TimedMove {
            mv: mv("+7776FU"),
            time: 0,
        })),
    );
    check("+7776FU", Err(8));
    check("%KACHI,T3", Ok(ServerLine::KachiTimed(3)));
    check("%TORYO", Ok(ServerLine::Special("%TORYO".into())));
    check(
        "#OUTE_SENNICHITE",
        Ok(ServerLine::Reason("#OUTE_SENNICHITE".into())),
    );
    check(
        "#CENSORED",
        Ok(ServerLine::Outcome(crate::Outcome::Censored)),
    );
    check("START:g+1", Ok(ServerLine::Start("g+1".into())));
    check(
        "REJECT:g+1 by the Server (timed out)",
        Ok(ServerLine::Reject {
            game_id: "g+1".into(),
            by: "the Server (timed out)".into(),
        }),
    );
    check(
        "##[MONITOR2][g+1] +OK",
        Ok(ServerLine::X1 {
            tag: "MONITOR2][g+1".into(),
            text: "+OK".into(),
        }),
    );
    check(
        "##[SHOW] P1-KY-KE",
        Ok(ServerLine::X1 {
            tag: "SHOW".into(),
            text: "P1-KY-KE".into(),
        }),
    );
    check("", Ok(ServerLine::Empty));
    check("what", Err(1));
}

#[test]
fn pairing_by_game_name() {
    /// Seeks in order, each `(key, name, game, turn, challenge)`, with the coin giving the
    /// seeker Black; the pairing each came to.
    #[track_caller]
    fn check(seeks: &[(u32, &str, &str, Turn, bool)], expect: &[Pairing<u32>]) {
        let mut m = Matcher::new();
        let got: Vec<_> = seeks
            .iter()
            .map(|(k, n, g, t, c)| m.seek(*k, n, &game(g), *t, *c, || Color::Black))
            .collect();
        assert_eq!(got, expect, "{seeks:?}");
    }
    use Pairing::{NoRival, Paired, Waiting};
    use Turn::{Any, Black, White};
    check(
        &[
            (1, "a", "g-1-2", Black, false),
            (2, "b", "g-1-2", Any, false),
        ],
        &[Waiting, Paired { black: 1, white: 2 }],
    );
    check(
        &[(1, "a", "g-1-2", Any, false), (2, "b", "g-1-2", Any, false)],
        &[Waiting, Paired { black: 2, white: 1 }],
    );
    check(
        &[
            (1, "a", "g-1-2", Any, false),
            (2, "b", "g-1-2", Black, false),
        ],
        &[Waiting, Paired { black: 2, white: 1 }],
    );
    // Same turn: no pairing; another game: no pairing; same name: no pairing.
    check(
        &[
            (1, "a", "g-1-2", Black, false),
            (2, "b", "g-1-2", Black, false),
        ],
        &[Waiting, Waiting],
    );
    check(
        &[(1, "a", "g-1-2", Any, false), (2, "b", "g-1-3", Any, false)],
        &[Waiting, Waiting],
    );
    check(
        &[(1, "a", "g-1-2", Any, false), (2, "a", "g-1-2", Any, false)],
        &[Waiting, Waiting],
    );
    // The smallest key waiting is the rival.
    check(
        &[
            (5, "a", "g-1-2", White, false),
            (3, "b", "g-1-2", White, false),
            (9, "c", "g-1-2", Black, false),
        ],
        &[Waiting, Waiting, Paired { black: 9, white: 3 }],
    );
    check(&[(1, "a", "g-1-2", Any, true)], &[NoRival]);
    check(
        &[
            (1, "a", "g-1-2", White, false),
            (2, "b", "g-1-2", Any, true),
        ],
        &[Waiting, Paired { black: 2, white: 1 }],
    );
    check(
        &[
            (1, "a", "floodgate-300-10F", Any, false),
            (2, "b", "floodgate-300-10F", Any, false),
        ],
        &[Waiting, Waiting],
    );
    check(
        &[(1, "a", "floodgate-300-10F", Black, false)],
        &[Pairing::Refused(SeekRefusal::TurnForFloodgate {
            turn: Black,
            game: "floodgate-300-10F".into(),
        })],
    );
    check(
        &[(1, "a", "hc2p_x-1-2", Any, false)],
        &[Pairing::Refused(SeekRefusal::RandomTurnForHandicap)],
    );
    // A second seek replaces the first.
    check(
        &[
            (1, "a", "g-1-2", Any, false),
            (1, "a", "g-1-3", Any, false),
            (2, "b", "g-1-2", Any, false),
        ],
        &[Waiting, Waiting, Waiting],
    );
}

/// One step of a session script: a client line or an event, and what the session puts out.
enum Step {
    Line(&'static str, Vec<Output>),
    Event(Event, Vec<Output>),
    Disconnect(Vec<Output>),
}

fn send(s: &str) -> Output {
    Output::Send(s.to_owned())
}

fn play(m: &str) -> Output {
    Output::Play(Action::Move {
        mv: mv(m),
        comment: None,
    })
}

fn played(m: &str, time: u32) -> Event {
    Event::Played(TimedMove { mv: mv(m), time })
}

const ID: &str = "test+g-1-2+a+b+20260101000000";

/// The script of an x1 login of `a`, `%%GAME g-1-2 <turn>`, the pairing with `me`'s side and
/// both agreements: the session is in play after it.
fn into_play(me: Color) -> Vec<Step> {
    let mut s = summary(Position::startpos(), vec![], "g-1-2");
    s.game_id = ID.into();
    let turn = if me == Color::Black { "+" } else { "-" };
    let text = s.render(me);
    vec![
        Step::Line(
            "LOGIN a pw x1\n",
            vec![Output::Login(Login {
                name: "a".into(),
                password: "pw".into(),
                x1: true,
            })],
        ),
        Step::Event(
            Event::LoginAccepted,
            vec![send("LOGIN:a OK\n##[LOGIN] +OK x1\n")],
        ),
        Step::Line(
            if me == Color::Black {
                "%%GAME g-1-2 +"
            } else {
                "%%GAME g-1-2 -"
            },
            vec![Output::Seek {
                game: game("g-1-2"),
                turn: if turn == "+" {
                    Turn::Black
                } else {
                    Turn::White
                },
                challenge: false,
            }],
        ),
        Step::Event(
            Event::Paired {
                summary: Box::new(s),
                me,
            },
            vec![Output::Send(text)],
        ),
        Step::Line("AGREE", vec![Output::Agree]),
        Step::Event(Event::OpponentAgreed, vec![send(&format!("START:{ID}\n"))]),
    ]
}

#[test]
fn sessions() {
    #[track_caller]
    fn check(steps: Vec<Step>, status: Status) {
        let mut s = Session::new("test");
        for (i, step) in steps.into_iter().enumerate() {
            let (what, got, expect) = match step {
                Step::Line(l, e) => (format!("line {l:?}"), s.line(l.as_bytes()), e),
                Step::Event(ev, e) => (format!("event {ev:?}"), s.event(ev), e),
                Step::Disconnect(e) => ("disconnect".to_owned(), s.disconnected(), e),
            };
            assert_eq!(got, expect, "step {i}: {what}");
        }
        assert_eq!(s.status(), status);
    }
    let with = |mut head: Vec<Step>, tail: Vec<Step>| {
        head.extend(tail);
        head
    };
    use Color::{Black, White};

    // Before login every other line is refused, in the client's line ending.
    check(
        vec![
            Step::Line("%%WHO\r\n", vec![send("LOGIN:incorrect\r\n")]),
            Step::Line(
                "LOGIN a b c d\n",
                vec![send(
                    "LOGIN:incorrect\ntype 'LOGIN name password' or 'LOGIN name password x1'\n",
                )],
            ),
            Step::Line(
                "LOGIN a b x1",
                vec![Output::Login(Login {
                    name: "a".into(),
                    password: "b".into(),
                    x1: true,
                })],
            ),
            Step::Line("%%HELP", vec![]),
            Step::Event(
                Event::LoginRefused,
                vec![
                    send("LOGIN:incorrect\nusername a is already connected\n"),
                    Output::Close,
                ],
            ),
        ],
        Status::Finished,
    );
    // Lines sent while the login is being decided are answered after it.
    check(
        vec![
            Step::Line(
                "LOGIN a b x1",
                vec![Output::Login(Login {
                    name: "a".into(),
                    password: "b".into(),
                    x1: true,
                })],
            ),
            Step::Line("%%VERSION", vec![]),
            Step::Event(
                Event::LoginAccepted,
                vec![
                    send("LOGIN:a OK\n##[LOGIN] +OK x1\n"),
                    send("##[VERSION] Shogi Server revision test\n##[VERSION] +OK\n"),
                ],
            ),
            Step::Line("", vec![send("\n")]),
            Step::Line(" ", vec![]),
            Step::Line("%%WHO", vec![Output::Query(Command::Who)]),
            Step::Line(
                "AGREE",
                vec![send(
                    "##[ERROR] you are in connected status. AGREE is valid in agree_waiting status\n",
                )],
            ),
            Step::Line("+7776FU", vec![]),
            Step::Line(
                "%%GAME hc2p_x-1-2 *",
                vec![send(
                    "##[ERROR] Random turn preference is not allowed for handicapped games\n",
                )],
            ),
            Step::Line(
                "%%CHALLENGE g-1-2 *",
                vec![Output::Seek {
                    game: game("g-1-2"),
                    turn: Turn::Any,
                    challenge: true,
                }],
            ),
            Step::Event(
                Event::NoRival,
                vec![send("##[ERROR] can't find rival for g-1-2\n")],
            ),
            Step::Line(
                "%%GAME g-1-2 *",
                vec![Output::Seek {
                    game: game("g-1-2"),
                    turn: Turn::Any,
                    challenge: false,
                }],
            ),
            Step::Line("%%GAME", vec![Output::CancelSeek]),
        ],
        Status::Connected,
    );
    // CSA mode: the game from the password at once; the connection closes after the game.
    check(
        vec![
            Step::Line(
                "LOGIN a g-1-2-W,trip",
                vec![Output::Login(Login {
                    name: "a".into(),
                    password: "g-1-2-W,trip".into(),
                    x1: false,
                })],
            ),
            Step::Event(
                Event::LoginAccepted,
                vec![
                    send("LOGIN:a OK\n"),
                    Output::Seek {
                        game: game("g-1-2"),
                        turn: Turn::White,
                        challenge: false,
                    },
                ],
            ),
            Step::Event(Event::Rejected { by: "b".into() }, vec![]),
            Step::Disconnect(vec![Output::CancelSeek]),
        ],
        Status::Finished,
    );
    // A move out of turn is held and played in turn; `%KACHI,T<n>` before the result.
    check(
        with(
            into_play(White),
            vec![
                Step::Line("-3334FU", vec![]),
                Step::Line("%KACHI", vec![]),
                Step::Event(
                    played("+7776FU", 2),
                    vec![send("+7776FU,T2\n"), play("-3334FU")],
                ),
                Step::Event(played("-3334FU", 0), vec![send("-3334FU,T0\n")]),
                Step::Event(
                    played("+2726FU", 1),
                    vec![send("+2726FU,T1\n"), Output::Play(Action::Kachi)],
                ),
                Step::Event(Event::KachiTimed { time: 5 }, vec![send("%KACHI,T5\n")]),
                Step::Event(
                    Event::Ended(GameEnd::IllegalKachi { loser: White }),
                    vec![send("%KACHI\n#ILLEGAL_MOVE\n#LOSE\n")],
                ),
            ],
        ),
        Status::Connected,
    );
    // The same move twice is played once; a comment travels with the move.
    check(
        with(
            into_play(Black),
            vec![
                Step::Line(
                    "+7776FU,'* 30 -3334FU",
                    vec![Output::Play(Action::Move {
                        mv: mv("+7776FU"),
                        comment: Some("* 30 -3334FU".into()),
                    })],
                ),
                Step::Line("+7776FU", vec![]),
                Step::Event(played("+7776FU", 1), vec![send("+7776FU,T1\n")]),
                Step::Line("+7776FU", vec![]),
                Step::Event(played("-3334FU", 1), vec![send("-3334FU,T1\n")]),
                Step::Line("%TORYO", vec![Output::Play(Action::Resign)]),
                Step::Event(
                    Event::Ended(GameEnd::Resign { loser: Black }),
                    vec![send("%TORYO\n#RESIGN\n#LOSE\n")],
                ),
            ],
        ),
        Status::Connected,
    );
    // `%CHUDAN` and a malformed move are illegal moves in play.
    check(
        with(
            into_play(Black),
            vec![Step::Line(
                "%CHUDAN",
                vec![Output::Play(Action::Illegal("%CHUDAN".into()))],
            )],
        ),
        Status::Game,
    );
    check(
        with(
            into_play(Black),
            vec![Step::Line(
                "+7700FU",
                vec![Output::Play(Action::Illegal("+7700FU".into()))],
            )],
        ),
        Status::Game,
    );
    // A disconnect in play resigns; LOGOUT too.
    check(
        with(
            into_play(Black),
            vec![Step::Disconnect(vec![Output::Play(Action::Abandon)])],
        ),
        Status::Finished,
    );
    check(
        with(
            into_play(White),
            vec![Step::Line(
                "LOGOUT",
                vec![
                    send("LOGOUT:completed\n"),
                    Output::Play(Action::Abandon),
                    Output::Close,
                ],
            )],
        ),
        Status::Finished,
    );
    // REJECT before agreeing; after agreeing it is an error, and leaving rejects.
    let mut proposed = into_play(Black);
    proposed.truncate(4);
    check(
        with(
            proposed,
            vec![
                Step::Line("REJECT", vec![Output::Reject]),
                Step::Event(
                    Event::Rejected { by: "a".into() },
                    vec![send(&format!("REJECT:{ID} by a\n"))],
                ),
            ],
        ),
        Status::Connected,
    );
    let mut agreed = into_play(Black);
    agreed.truncate(5);
    check(
        with(
            agreed,
            vec![
                Step::Line(
                    "REJECT",
                    vec![send(
                        "##[ERROR] you are in start_waiting status. REJECT is valid in agree_waiting status\n",
                    )],
                ),
                Step::Disconnect(vec![Output::Reject]),
            ],
        ),
        Status::Finished,
    );
}

#[test]
fn time_units() {
    let t = |stop_watch| TimeControl {
        total: 1,
        byoyomi: 0,
        increment: 0,
        stop_watch,
    };
    assert_eq!(t(true).time_unit(), "1min");
    assert_eq!(t(false).time_unit(), "1sec");
}
