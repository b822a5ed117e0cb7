//! Differential test of the rules core against an independent oracle, cshogi (a C++ move
//! generator derived from Apery, driven from Python by `tools/oracle/gen_legal.py`).
//!
//! The fixture `tests/data/cshogi_legal.tsv` was written by that script (the exact command is in
//! its first line); each row is `sfen <TAB> in_check (0|1) <TAB> sorted legal moves in USI`. For
//! every row the core must list the same legal moves, agree on check, and its single-move check
//! (`check_move`) must accept exactly the moves in the list, with the reason a rule of docs/rules.md
//! section 1 dictates where only one rule can apply.
//!
//! `live_oracle_agrees` runs the generator afresh (a new seed each run, printed for replay) and
//! fails, rather than skips, when cshogi is not installed: `bash tools/oracle/install.sh`. A longer
//! hunt by hand: `SHOGI_ORACLE_COUNT=50000 cargo test -p shogi-rules --test differential live`.

use shogi_rules::{Color, IllegalKind, Move, Piece, PieceKind, Position, Square};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const FIXTURE: &str = include_str!("data/cshogi_legal.tsv");

/// How many failures to print in full before summarising.
const SHOWN_FAILURES: usize = 20;

struct Row {
    line: usize,
    sfen: String,
    in_check: bool,
    moves: Vec<String>,
}

fn parse_rows(text: &str) -> Vec<Row> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(i, l)| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(
                cols.len(),
                3,
                "line {}: expected 3 tab-separated columns: {l}",
                i + 1
            );
            let in_check = match cols[1] {
                "1" => true,
                "0" => false,
                other => panic!("line {}: in_check column is {other:?}, not 0 or 1", i + 1),
            };
            let mut moves: Vec<String> = cols[2].split_whitespace().map(str::to_owned).collect();
            moves.sort();
            Row {
                line: i + 1,
                sfen: cols[0].to_owned(),
                in_check,
                moves,
            }
        })
        .collect()
}

/// A set of moves keyed by [`Move::to_u16`] (15 bits).
struct MoveSet([u64; 512]);

impl MoveSet {
    fn new() -> MoveSet {
        MoveSet([0; 512])
    }
    fn insert(&mut self, mv: Move) {
        let i = mv.to_u16() as usize;
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn contains(&self, mv: Move) -> bool {
        let i = mv.to_u16() as usize;
        self.0[i / 64] & (1 << (i % 64)) != 0
    }
}

fn sorted_difference<'a>(a: &'a [String], b: &[String]) -> Vec<&'a str> {
    a.iter()
        .filter(|m| b.binary_search(m).is_err())
        .map(String::as_str)
        .collect()
}

fn has_unpromoted_pawn_on_file(pos: &Position, color: Color, file: u8) -> bool {
    (1..=9).any(|rank| {
        pos.piece_at(Square::new(file, rank).expect("on the board"))
            == Some(Piece::new(color, PieceKind::Pawn))
    })
}

/// Whether a piece of `kind` dropped on `to` by `color` could never move again (行き所のない駒).
fn is_dead_drop(kind: PieceKind, to: Square, color: Color) -> bool {
    match kind {
        PieceKind::Pawn | PieceKind::Lance => to.relative_rank(color) == 1,
        PieceKind::Knight => to.relative_rank(color) <= 2,
        _ => false,
    }
}

/// The squares the piece on `from` attacks, blockers included (an independent, naive version of
/// the core's attack tables): a board move to any other square is `impossible`.
fn reach(pos: &Position, from: Square, piece: Piece) -> Vec<Square> {
    use PieceKind as K;
    type Offsets = &'static [(i8, i8)];
    const GOLD: Offsets = &[(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (0, 1)];
    const KING: Offsets = &[
        (-1, -1),
        (0, -1),
        (1, -1),
        (-1, 0),
        (1, 0),
        (-1, 1),
        (0, 1),
        (1, 1),
    ];
    const DIAG: Offsets = &[(-1, -1), (1, -1), (-1, 1), (1, 1)];
    const ORTH: Offsets = &[(0, -1), (-1, 0), (1, 0), (0, 1)];
    // (file, rank) offsets for Black, whose forward is towards rank a (rank 1).
    let (steps, rays): (Offsets, Offsets) = match piece.kind {
        K::Pawn => (&[(0, -1)], &[]),
        K::Lance => (&[], &[(0, -1)]),
        K::Knight => (&[(-1, -2), (1, -2)], &[]),
        K::Silver => (&[(-1, -1), (0, -1), (1, -1), (-1, 1), (1, 1)], &[]),
        K::Gold | K::ProPawn | K::ProLance | K::ProKnight | K::ProSilver => (GOLD, &[]),
        K::King => (KING, &[]),
        K::Bishop => (&[], DIAG),
        K::Rook => (&[], ORTH),
        K::Horse => (ORTH, DIAG),
        K::Dragon => (DIAG, ORTH),
    };
    let forward: i8 = if piece.color == Color::Black { 1 } else { -1 };
    let at = |df: i8, dr: i8| {
        let (f, r) = (from.file() as i8 + df, from.rank() as i8 + dr * forward);
        Square::new(u8::try_from(f).ok()?, u8::try_from(r).ok()?)
    };
    let mut out: Vec<Square> = steps.iter().filter_map(|&(df, dr)| at(df, dr)).collect();
    for &(df, dr) in rays {
        for n in 1..9 {
            let Some(sq) = at(df * n, dr * n) else { break };
            out.push(sq);
            if pos.piece_at(sq).is_some() {
                break;
            }
        }
    }
    out
}

/// The reason a drop that the oracle does not list must be refused with, when the rules leave
/// only one; `None` when several rules could apply at once (for example two pawns while in
/// check), where any illegal kind is accepted.
fn expected_drop_kind(pos: &Position, kind: PieceKind, to: Square) -> Option<IllegalKind> {
    let us = pos.side_to_move();
    if pos.hand(us).count(kind) == 0 || pos.piece_at(to).is_some() {
        return Some(IllegalKind::Impossible);
    }
    let two_pawns = kind == PieceKind::Pawn && has_unpromoted_pawn_on_file(pos, us, to.file());
    let dead = is_dead_drop(kind, to, us);
    if pos.in_check() {
        // The drop may also fail to answer the check: the reason depends on the order in which
        // the core tests the rules, which docs/rules.md leaves open.
        return None;
    }
    match (two_pawns, dead) {
        (true, false) => Some(IllegalKind::TwoPawns),
        (false, true) => Some(IllegalKind::DeadPiece),
        (true, true) => None,
        // Not in check, on an empty square, no pawn on the file, not a dead square: a drop
        // cannot expose the mover's own king, so only pawn-drop mate (打ち歩詰め) is left.
        (false, false) => Some(IllegalKind::PawnDropMate),
    }
}

/// Compares one row with the core; returns a description of each disagreement.
fn check_row(row: &Row) -> Vec<String> {
    let mut failures = Vec::new();
    let fail = |failures: &mut Vec<String>, what: String| {
        failures.push(format!("line {}: {}\n    {what}", row.line, row.sfen));
    };
    let pos = match Position::from_sfen(&row.sfen) {
        Ok(pos) => pos,
        Err(e) => {
            fail(
                &mut failures,
                format!("from_sfen rejects the oracle's position: {e}"),
            );
            return failures;
        }
    };

    // The legal move list.
    let mut ours: Vec<String> = pos.legal_moves().iter().map(Move::to_string).collect();
    ours.sort();
    if ours != row.moves {
        fail(
            &mut failures,
            format!(
                "legal moves differ: missing (oracle only) {:?}, extra (core only) {:?}",
                sorted_difference(&row.moves, &ours),
                sorted_difference(&ours, &row.moves)
            ),
        );
    }
    if pos.in_check() != row.in_check {
        fail(
            &mut failures,
            format!("in_check: core {}, oracle {}", pos.in_check(), row.in_check),
        );
    }
    if pos.has_legal_move() == row.moves.is_empty() {
        fail(
            &mut failures,
            format!("has_legal_move is {}", pos.has_legal_move()),
        );
    }
    if pos.is_checkmate() != (row.in_check && row.moves.is_empty()) {
        fail(
            &mut failures,
            format!("is_checkmate is {}", pos.is_checkmate()),
        );
    }

    // Single-move checks: every oracle move is accepted.
    let mut legal = MoveSet::new();
    for text in &row.moves {
        let mv = match Move::from_usi(text) {
            Ok(mv) => mv,
            Err(e) => {
                fail(
                    &mut failures,
                    format!("oracle move {text} does not parse: {e}"),
                );
                continue;
            }
        };
        legal.insert(mv);
        if let Err(e) = pos.check_move(mv) {
            fail(
                &mut failures,
                format!("check_move rejects legal {text}: {}", e.kind),
            );
        }
    }

    // ... and every other move from a square of the mover's pieces, or drop, is refused.
    let us = pos.side_to_move();
    let mut check_candidate = |mv: Move, expected: Option<IllegalKind>| {
        let result = pos.check_move(mv);
        match (legal.contains(mv), result) {
            (true, _) => {} // checked above
            (false, Ok(())) => fail(
                &mut failures,
                format!("check_move accepts {mv}, which the oracle lacks"),
            ),
            (false, Err(e)) => {
                if let Some(want) = expected
                    && e.kind != want
                {
                    fail(
                        &mut failures,
                        format!("check_move({mv}) is {}, want {}", e.kind, want),
                    );
                }
                if matches!(e.kind, IllegalKind::WrongTurn) {
                    fail(&mut failures, format!("check_move({mv}) says wrong_turn"));
                }
            }
        }
    };
    for (from, piece) in pos.pieces() {
        if piece.color != us {
            continue;
        }
        let reachable = reach(&pos, from, piece);
        for to in Square::all() {
            if to == from {
                continue;
            }
            let own_target = pos.piece_at(to).is_some_and(|p| p.color == us);
            let can_promote = piece.kind.can_promote() && (from.in_zone(us) || to.in_zone(us));
            for promote in [false, true] {
                let mv = Move::Normal { from, to, promote };
                let other = Move::Normal {
                    from,
                    to,
                    promote: !promote,
                };
                let expected =
                    if own_target || !reachable.contains(&to) || (promote && !can_promote) {
                        // Not a move of this piece at all, whatever the check situation.
                        Some(IllegalKind::Impossible)
                    } else if legal.contains(other) && !legal.contains(mv) {
                        // The same move with the other choice is legal: promoting where it is not
                        // allowed is impossible, declining it where the piece would be dead is not.
                        Some(if promote {
                            IllegalKind::Impossible
                        } else {
                            IllegalKind::DeadPiece
                        })
                    } else {
                        None
                    };
                check_candidate(mv, expected);
            }
        }
    }
    // Board moves from squares without a piece of the mover: one per square is enough.
    for from in Square::all() {
        if pos.piece_at(from).is_some_and(|p| p.color == us) {
            continue;
        }
        let to = Square::all().find(|&t| t != from).expect("81 squares");
        check_candidate(
            Move::Normal {
                from,
                to,
                promote: false,
            },
            Some(IllegalKind::Impossible),
        );
    }
    for kind in PieceKind::HAND {
        for to in Square::all() {
            check_candidate(Move::Drop { kind, to }, expected_drop_kind(&pos, kind, to));
        }
    }
    failures
}

fn assert_rows_agree(rows: &[Row], source: &str) {
    assert!(!rows.is_empty(), "{source}: no rows");
    let failures: Vec<String> = rows.iter().flat_map(check_row).collect();
    if !failures.is_empty() {
        let shown = failures
            .iter()
            .take(SHOWN_FAILURES)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        panic!(
            "{source}: {} disagreements between the core and cshogi over {} positions \
             (first {}):\n{shown}",
            failures.len(),
            rows.len(),
            failures.len().min(SHOWN_FAILURES)
        );
    }
}

#[test]
fn core_agrees_with_cshogi_fixture() {
    let rows = parse_rows(FIXTURE);
    assert!(
        rows.len() >= 2500,
        "the fixture has only {} rows",
        rows.len()
    );
    assert_rows_agree(&rows, "tests/data/cshogi_legal.tsv");
}

/// Every oracle move plays, and the position it makes survives an SFEN round trip with the same
/// hash (the incremental Zobrist update against one computed from scratch by the parser).
#[test]
fn oracle_moves_play_and_round_trip() {
    let mut failures = Vec::new();
    for row in parse_rows(FIXTURE) {
        let Ok(pos) = Position::from_sfen(&row.sfen) else {
            continue; // reported by core_agrees_with_cshogi_fixture
        };
        for text in &row.moves {
            let Ok(mv) = Move::from_usi(text) else {
                continue;
            };
            let mut child = pos.clone();
            if let Err(e) = child.play(mv) {
                failures.push(format!("line {}: {} play({text}): {e}", row.line, row.sfen));
                continue;
            }
            let sfen = child.to_sfen();
            match Position::from_sfen(&sfen) {
                Ok(back) if back.hash() == child.hash() && back.same_position(&child) => {}
                Ok(_) => failures.push(format!(
                    "line {}: {} after {text}: hash or position differs from its SFEN {sfen}",
                    row.line, row.sfen
                )),
                Err(e) => failures.push(format!(
                    "line {}: {} after {text}: to_sfen gives {sfen}, which does not parse: {e}",
                    row.line, row.sfen
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures (first {}):\n{}",
        failures.len(),
        failures.len().min(SHOWN_FAILURES),
        failures
            .iter()
            .take(SHOWN_FAILURES)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn oracle_script() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tools/oracle/gen_legal.py"
    ))
}

/// Generates fresh positions with cshogi and compares them. A different seed each run widens the
/// search over time; set `SHOGI_ORACLE_SEED` to replay one, and `SHOGI_ORACLE_COUNT` for a longer
/// hunt by hand (300 by default, a second or two).
#[test]
fn live_oracle_agrees() {
    let import = Command::new("python3")
        .args(["-c", "import cshogi"])
        .output();
    match import {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "cshogi is not importable by python3, so the live differential test cannot run: \
             install it with `bash tools/oracle/install.sh` (= pip install -r \
             tools/oracle/requirements.txt, cshogi==1.1.0)\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!(
            "python3 cannot be started ({e}), so the live differential test cannot run: install \
             Python 3 and then `bash tools/oracle/install.sh`"
        ),
    }
    let seed: u64 = match std::env::var("SHOGI_ORACLE_SEED") {
        Ok(s) => s.parse().expect("SHOGI_ORACLE_SEED must be an integer"),
        Err(_) => {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .expect("clock after 1970")
                .as_secs()
                % 1_000_000_007
        }
    };
    let count: usize = match std::env::var("SHOGI_ORACLE_COUNT") {
        Ok(s) => s.parse().expect("SHOGI_ORACLE_COUNT must be an integer"),
        Err(_) => 300,
    };
    let out = std::env::temp_dir().join(format!("shogi-oracle-{}-{seed}.tsv", std::process::id()));
    let started = Instant::now();
    let run = Command::new("python3")
        .arg(oracle_script())
        .args([
            "--seed",
            &seed.to_string(),
            "--count",
            &count.to_string(),
            "--out",
        ])
        .arg(&out)
        .output()
        .expect("python3 starts");
    assert!(
        run.status.success(),
        "the oracle failed ({}):\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&out).expect("the oracle wrote its output");
    let _ = std::fs::remove_file(&out);
    let rows = parse_rows(&text);
    assert_eq!(
        rows.len(),
        count,
        "the oracle wrote {} rows, not {count}",
        rows.len()
    );
    println!(
        "live oracle: seed {seed}, {count} positions generated in {:.1?}; replay with \
         SHOGI_ORACLE_SEED={seed}",
        started.elapsed()
    );
    assert_rows_agree(
        &rows,
        &format!("live oracle, seed {seed} (replay: SHOGI_ORACLE_SEED={seed})"),
    );
}
