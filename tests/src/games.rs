//! Scripted games with known endings, from `../shared/rules` and `../shared/corpus`. The
//! ending of each is computed by the adjudication layer from the script (the oracle the
//! services must agree with), and the fixtures that state their own result are checked
//! against it first.

use shogi_adjudication::judge;
use shogi_proto::v1 as pb;
use shogi_rules::{Move, Position};

/// One game to play through the services.
#[derive(Debug, Clone)]
pub struct Scripted {
    /// Where it comes from.
    pub source: String,
    /// The start position.
    pub start_sfen: String,
    /// The ruleset to create it with.
    pub ruleset: pb::Ruleset,
    /// The moves to submit, the last one ending the game.
    pub moves: Vec<String>,
    /// Whether the last move is forfeited (illegal under a forfeit ruleset).
    pub forfeit_last: bool,
    /// The one verdict the game must get.
    pub expected: pb::Verdict,
}

use test_support::{shared, tsv};

/// The oracle: the ending of `moves` from `start` under `ruleset`, and the plies to submit.
fn oracle(
    source: String,
    start: &Position,
    ruleset: pb::Ruleset,
    moves: &[Move],
) -> Option<Scripted> {
    let rules = shogi_proto::convert::ruleset_from_pb(Some(&ruleset)).ok()?;
    // Only what a platform can create: a position the validator's SFEN check accepts.
    Position::from_sfen(&start.to_sfen()).ok()?;
    let judgement = judge(start.clone(), moves.iter().copied(), false, &rules);
    let verdict = judgement.verdict?;
    let forfeit_last = verdict.code == shogi_adjudication::ResultCode::IllegalMove;
    // The legal plies played, and the forfeited move after them if the game ended so.
    let played = judgement.plies as usize + usize::from(forfeit_last);
    if played == 0 || played > moves.len() {
        return None;
    }
    Some(Scripted {
        source,
        start_sfen: start.to_sfen(),
        ruleset,
        moves: moves[..played].iter().map(Move::to_string).collect(),
        forfeit_last,
        expected: shogi_proto::convert::verdict_pb("", &verdict),
    })
}

fn code_name(code: i32) -> String {
    pb::ResultCode::try_from(code)
        .map(|c| {
            c.as_str_name()
                .trim_start_matches("RESULT_CODE_")
                .to_ascii_lowercase()
        })
        .unwrap_or_default()
}

/// The repetition fixtures that end (each checked against its stated result and ply).
pub fn repetition() -> Vec<Scripted> {
    tsv("rules/repetition.tsv")
        .into_iter()
        .filter(|r| r[3] != "none")
        .map(|r| {
            let start = Position::from_sfen(&r[1]).expect("fixture sfen");
            let moves: Vec<Move> = r[2]
                .split_whitespace()
                .map(|m| Move::from_usi(m).expect("fixture move"))
                .collect();
            let s = oracle(
                format!("repetition.tsv {}", r[0]),
                &start,
                pb::Ruleset::default(),
                &moves,
            )
            .unwrap_or_else(|| panic!("{}: no ending", r[0]));
            assert_eq!(code_name(s.expected.code), r[3], "{}", r[0]);
            assert_eq!(s.expected.ply.to_string(), r[5], "{}", r[0]);
            s
        })
        .collect()
}

/// The move fixtures: one move from a position, under the `forfeit` policy, so that an
/// illegal one ends the game (a verdict the validator writes into the log); the legal ones
/// that end the game (checkmate) too.
pub fn single_moves() -> Vec<Scripted> {
    let ruleset = pb::Ruleset {
        preset: "csa".into(),
        overrides: Some(pb::RulesetOverrides {
            illegal_move: pb::IllegalMovePolicy::Forfeit as i32,
            ..Default::default()
        }),
    };
    tsv("rules/moves.tsv")
        .into_iter()
        .filter_map(|r| {
            let start = Position::from_sfen(&r[1]).ok()?;
            // A test position where the side not to move is in check is no game's start: the
            // arbiter refuses it (INVALID_ARGUMENT).
            if start.opponent_in_check() {
                return None;
            }
            let mv = Move::from_usi(&r[2]).ok()?;
            if start.check_move(mv).is_err() && !start.has_legal_move() {
                return None;
            }
            oracle(
                format!("moves.tsv {}", r[0]),
                &start,
                ruleset.clone(),
                &[mv],
            )
        })
        .collect()
}

/// Corpus records cut by a move cap of `cap` plies (CSA rules, plain cap): each ends at the
/// cap, or earlier by its own ending.
pub fn corpus(cap: u32, max: usize) -> Vec<Scripted> {
    let dir = shared("corpus/records");
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let ruleset = pb::Ruleset {
        preset: "csa".into(),
        overrides: Some(pb::RulesetOverrides {
            move_cap: Some(cap),
            cap_mode: pb::CapMode::Plain as i32,
            ..Default::default()
        }),
    };
    files
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            let name = p.file_name()?.to_string_lossy().into_owned();
            let record = shogi_records::read_any(&name, &bytes).ok()?;
            let moves: Vec<Move> = record
                .moves
                .iter()
                .take_while(|m| m.legal.is_ok())
                .map(|m| m.mv)
                .collect();
            oracle(
                format!("corpus {name} cap {cap}"),
                &record.start,
                ruleset.clone(),
                &moves,
            )
        })
        .take(max)
        .collect()
}

/// At least `n` games: every fixture once, the corpus under several caps, then copies.
pub fn at_least(n: usize) -> Vec<Scripted> {
    let mut games = repetition();
    games.extend(single_moves());
    for cap in [12, 20, 28] {
        games.extend(corpus(cap, 40));
    }
    let base = games.clone();
    let mut copy = 1;
    while games.len() < n {
        games.extend(base.iter().map(|g| {
            let mut g = g.clone();
            g.source = format!("{} (copy {copy})", g.source);
            g
        }));
        copy += 1;
    }
    games
}
