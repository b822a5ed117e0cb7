//! Every row of the shared rule fixtures (`../shared/rules/repetition.tsv` and
//! `declaration.tsv`), judged through the library, one `check` helper per file.

use shogi_adjudication::{
    DeclarationOutcome, DeclarationRule, DeclarationTrigger, Evidence, FailedDeclaration, Game,
    IllegalMovePolicy, ResultCode, Ruleset, evaluate_declaration, judge,
};
use shogi_rules::{Color, Move, Position};

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared");

/// The rows of a shared fixture file, header excluded, each split on tabs. Fails (never skips)
/// when the shared directory is missing.
fn rows(name: &str) -> Vec<Vec<String>> {
    let path = format!("{SHARED}/rules/{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read the shared fixture {path}: {e}; the shared directory must sit next to the repository")
    });
    let rows: Vec<Vec<String>> = text
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect();
    assert!(!rows.is_empty(), "{path} has no rows");
    rows
}

fn color(name: &str) -> Option<Color> {
    match name {
        "black" => Some(Color::Black),
        "white" => Some(Color::White),
        "-" => None,
        other => panic!("not a colour: {other}"),
    }
}

/// Repetitions are judged with nothing else in the way: illegal moves rejected (so a bad
/// fixture move fails loudly), no cap, no automatic declaration.
fn repetition_ruleset(start_position_counted: bool) -> Ruleset {
    Ruleset {
        illegal_move: IllegalMovePolicy::Reject,
        move_cap: None,
        declaration_trigger: DeclarationTrigger::Explicit,
        start_position_counted,
        ..Ruleset::jsa()
    }
}

fn parse_moves(text: &str) -> Vec<Move> {
    text.split_whitespace()
        .map(|m| Move::from_usi(m).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// One repetition row: `id start_sfen moves result winner ply occurrence_plies source`.
fn check_repetition(row: &[String]) {
    let [id, sfen, moves, result, winner, ply, occurrences, _source] = row else {
        panic!("repetition.tsv row has {} columns: {row:?}", row.len());
    };
    let start = Position::from_sfen(sfen).unwrap_or_else(|e| panic!("{id}: {e}"));
    let j = judge(start, parse_moves(moves), false, &repetition_ruleset(true));
    assert_eq!(j.rejected, None, "{id}: a fixture move was rejected");
    let ply: u32 = ply.parse().unwrap();
    assert_eq!(j.plies, ply, "{id}: plies played");
    assert_eq!(
        j.moves_after_end, 0,
        "{id}: the game ended before the last move"
    );
    if result == "none" {
        assert_eq!(j.verdict, None, "{id}");
        return;
    }
    let v = j
        .verdict
        .unwrap_or_else(|| panic!("{id}: no verdict, expected {result}"));
    assert_eq!(v.code.as_str(), result, "{id}: {v}");
    assert_eq!(v.winner, color(winner), "{id}: {v}");
    assert_eq!(v.ply, ply, "{id}: {v}");
    let want: Vec<u32> = occurrences
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    let got = match &v.evidence {
        Evidence::Repetition {
            plies,
            mutual_check,
        } => {
            assert!(!mutual_check, "{id}");
            assert_eq!(
                v.ordinary_result,
                Some(shogi_adjudication::OrdinaryResult::Replay)
            );
            plies
        }
        Evidence::PerpetualCheck {
            plies,
            checker,
            check_plies,
        } => {
            assert_eq!(Some(!*checker), v.winner, "{id}");
            assert!(
                check_plies.iter().all(|&p| p > plies[0] && p <= plies[3]),
                "{id}"
            );
            plies
        }
        other => panic!("{id}: unexpected evidence {other:?}"),
    };
    assert_eq!(got.to_vec(), want, "{id}: occurrence plies");
}

#[test]
fn every_repetition_row() {
    let rows = rows("repetition.tsv");
    for row in &rows {
        check_repetition(row);
    }
    assert!(
        rows.len() >= 14,
        "expected the full repetition fixture, got {} rows",
        rows.len()
    );
}

fn outcome_letter(o: DeclarationOutcome) -> &'static str {
    match o {
        DeclarationOutcome::Win => "W",
        DeclarationOutcome::Jishogi => "D",
        DeclarationOutcome::Loss => "L",
        DeclarationOutcome::Refused => "R",
    }
}

/// One declaration row: `id sfen initial_sfen declarer points_with_credit pieces_in_camp
/// in_check points27 jsa24 source`.
fn check_declaration(row: &[String]) {
    let [
        id,
        sfen,
        initial,
        declarer,
        points,
        pieces,
        in_check,
        p27,
        j24,
        _source,
    ] = row
    else {
        panic!("declaration.tsv row has {} columns: {row:?}", row.len());
    };
    let pos = Position::from_sfen(sfen).unwrap_or_else(|e| panic!("{id}: {e}"));
    let initial = (initial != "-")
        .then(|| Position::from_sfen(initial).unwrap_or_else(|e| panic!("{id}: initial: {e}")));
    assert_eq!(
        Some(pos.side_to_move()),
        color(declarer),
        "{id}: the declarer is the side to move"
    );
    for (rule, want) in [
        (DeclarationRule::Points27, p27),
        (DeclarationRule::Jsa24, j24),
    ] {
        let r = evaluate_declaration(&pos, initial.as_ref(), rule);
        let what = format!("{id} under {}: {r:?}", rule.as_str());
        assert_eq!(r.points.to_string(), *points, "{what}");
        assert_eq!(r.pieces_in_camp.to_string(), *pieces, "{what}");
        assert_eq!(r.in_check.to_string(), *in_check, "{what}");
        assert_eq!(outcome_letter(r.outcome), want, "{what}");
        assert_eq!(
            r.points,
            r.points_in_camp + r.points_in_hand + r.credit,
            "{what}"
        );

        // The same through a game that starts here (only without an initial position), and
        // with a refusing ruleset a loss becomes a refusal. These positions lack pieces; with
        // the credit off, what counts as a handicap start plays no part.
        if initial.is_none() {
            for failed in [FailedDeclaration::Loss, FailedDeclaration::Refuse] {
                let rs = Ruleset {
                    declaration: Some(rule),
                    failed_declaration: failed,
                    handicap_credit: false,
                    ..Ruleset::jsa()
                };
                let mut game = Game::new(pos.clone(), rs);
                let d = game.declare(pos.side_to_move(), true).unwrap();
                let want_outcome = match (want.as_str(), failed) {
                    ("L", FailedDeclaration::Refuse) => "R",
                    (w, _) => w,
                };
                assert_eq!(outcome_letter(d.report.outcome), want_outcome, "{what}");
                assert_eq!(d.verdict.is_some(), want_outcome != "R", "{what}");
                if let Some(v) = d.verdict {
                    assert_eq!(v.code, ResultCode::Declaration);
                    assert_eq!(v.ply, 0);
                    let winner = match want_outcome {
                        "W" => Some(pos.side_to_move()),
                        "L" => Some(!pos.side_to_move()),
                        _ => None,
                    };
                    assert_eq!(v.winner, winner, "{what}");
                }
            }
        }
    }
}

#[test]
fn every_declaration_row() {
    let rows = rows("declaration.tsv");
    for row in &rows {
        check_declaration(row);
    }
    assert!(
        rows.len() >= 26,
        "expected the full declaration fixture, got {} rows",
        rows.len()
    );
}
