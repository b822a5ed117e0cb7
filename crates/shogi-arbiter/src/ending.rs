//! How a record states a verdict: the one mapping from a verdict to a record's ending, which
//! `judge --csa-out`, `export` (and so `convert` of what they wrote) and the judge's JSON `csa`
//! name all use. The table is RULES.md section 7 of the shared fixtures ("What a record file
//! writes for each verdict", one mapping, used by every writer), which docs/rules.md section 7
//! summarises: the `#...` names there are a CSA server's result lines, which a record file does
//! not write.

use shogi_adjudication::{DeclarationOutcome, Evidence, ResultCode, Verdict};
use shogi_records::EndingKind;

/// Whether a forfeited illegal move is among the record's moves: `judge` writes the record it
/// read, the illegal move included; `export` writes the moves the game played, and a forfeited
/// move was not played.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Foul {
    /// The illegal move is the record's last move.
    Recorded,
    /// The illegal move is not in the record.
    NotRecorded,
}

/// The ending a record writes for `v` (RULES.md section 7):
///
/// - checkmate `%TSUMI`; repetition `%SENNICHITE`; the move cap `%MAX_MOVES`; resignation,
///   timeout, abort `%TORYO`, `%TIME_UP`, `%CHUDAN`; an agreed jishogi `%JISHOGI`;
/// - perpetual check: an illegal action by the checker (`%+ILLEGAL_ACTION` when Black gave
///   the checks), not `%OUTE_SENNICHITE`, which is the server's result line;
/// - an illegal move: `%ILLEGAL_MOVE` (the side to move fouled) when the move is not recorded,
///   an illegal action by its mover when it is;
/// - a declaration: `%KACHI` for a win, `%JISHOGI` for a 24-point draw, and `%KACHI` for a
///   failed one too ([`EndingKind::FailedKachi`]: KIF writes `反則負け`), the verdict in a
///   comment;
/// - no legal moves and the try rule have no special move: the verdict goes in a comment
///   ([`EndingKind::Other`], which CSA writes as a comment).
pub fn record_ending(v: &Verdict, foul: Foul) -> EndingKind {
    match (v.code, &v.evidence) {
        (ResultCode::Checkmate, _) => EndingKind::Tsumi,
        (ResultCode::Repetition, _) => EndingKind::Sennichite,
        (ResultCode::PerpetualCheck, Evidence::PerpetualCheck { checker, .. }) => {
            EndingKind::IllegalAction(*checker)
        }
        (ResultCode::PerpetualCheck, _) => match v.winner {
            Some(w) => EndingKind::IllegalAction(!w),
            None => EndingKind::OuteSennichite,
        },
        (ResultCode::MaxMoves, _) => EndingKind::MaxMoves,
        (ResultCode::Resignation, _) => EndingKind::Resign,
        (ResultCode::Timeout, _) => EndingKind::TimeUp,
        (ResultCode::Abort, _) => EndingKind::Chudan,
        (ResultCode::Agreement, _) => EndingKind::Jishogi,
        (ResultCode::IllegalMove, _) => match (foul, v.winner) {
            (Foul::Recorded, Some(w)) => EndingKind::IllegalAction(!w),
            _ => EndingKind::IllegalMove,
        },
        (ResultCode::Declaration, Evidence::Declaration(r)) => match r.outcome {
            DeclarationOutcome::Win => EndingKind::Kachi,
            DeclarationOutcome::Jishogi => EndingKind::Jishogi,
            DeclarationOutcome::Loss | DeclarationOutcome::Refused => EndingKind::FailedKachi,
        },
        (ResultCode::Declaration, _) => match v.winner {
            None => EndingKind::Jishogi,
            Some(_) => EndingKind::Kachi,
        },
        (ResultCode::TryRule, _) => EndingKind::Other("TRY".into()),
        (ResultCode::NoLegalMoves, _) => EndingKind::Other("NO_LEGAL_MOVES".into()),
    }
}

/// The CSA special move `v` ends a record with (`%TSUMI` ...), or `None` where CSA has none
/// (then a writer states the verdict in a comment).
pub fn csa_special(v: &Verdict, foul: Foul) -> Option<String> {
    record_ending(v, foul).csa_special()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shogi_adjudication::{DeclarationRule, evaluate_declaration};
    use shogi_records::{Ending, Format, Record, read_csa, write_csa, write_kif};
    use shogi_rules::{Color, IllegalKind, Move, Position};

    fn verdict(code: ResultCode, winner: Option<Color>, evidence: Evidence) -> Verdict {
        Verdict {
            code,
            winner,
            ply: 10,
            ordinary_result: None,
            evidence,
        }
    }

    fn declaration(outcome: DeclarationOutcome, winner: Option<Color>) -> Verdict {
        let mut report =
            evaluate_declaration(&Position::startpos(), None, DeclarationRule::Points27);
        report.declarer = Color::Black;
        report.outcome = outcome;
        verdict(
            ResultCode::Declaration,
            winner,
            Evidence::Declaration(Box::new(report)),
        )
    }

    /// What `export` writes: the moves played (here none), with the verdict's ending.
    fn exported(v: &Verdict) -> Record {
        let mut record = Record::from_moves(Format::Csa, Position::startpos(), &[]);
        record.ending = Some(Ending::new(record_ending(v, Foul::NotRecorded)));
        record
    }

    /// Each verdict as RULES.md section 7 writes it, the same in what `judge --csa-out`
    /// writes, in what `export` writes, and in what `convert` makes of the exported record
    /// (read back as CSA, written as KIF): the disagreements of issue 19 (a perpetual check,
    /// no legal moves, a failed declaration) among them.
    #[test]
    fn one_ending_for_judge_export_and_convert() {
        let mv = Move::from_usi("5i5h").unwrap();
        let perpetual = |checker| Evidence::PerpetualCheck {
            plies: [1, 5, 9, 13],
            checker,
            check_plies: vec![3, 5],
        };
        let illegal = Evidence::IllegalMove {
            kind: IllegalKind::TwoPawns,
            mv,
        };
        let mated = Evidence::Checkmate {
            mating_ply: 10,
            mating_move: Some(mv),
        };
        use ResultCode as C;
        // (verdict, the CSA line, what CSA reads back, the KIF word)
        let cases = [
            (
                verdict(C::Checkmate, Some(Color::Black), mated),
                "%TSUMI",
                Some(EndingKind::Tsumi),
                "詰み",
            ),
            (
                verdict(
                    C::PerpetualCheck,
                    Some(Color::White),
                    perpetual(Color::Black),
                ),
                "%+ILLEGAL_ACTION",
                Some(EndingKind::IllegalAction(Color::Black)),
                "反則",
            ),
            (
                verdict(
                    C::PerpetualCheck,
                    Some(Color::Black),
                    perpetual(Color::White),
                ),
                "%-ILLEGAL_ACTION",
                Some(EndingKind::IllegalAction(Color::White)),
                "反則",
            ),
            (
                declaration(DeclarationOutcome::Win, Some(Color::Black)),
                "%KACHI",
                Some(EndingKind::Kachi),
                "入玉勝ち",
            ),
            (
                declaration(DeclarationOutcome::Loss, Some(Color::White)),
                "%KACHI",
                Some(EndingKind::Kachi),
                "反則負け",
            ),
            (
                declaration(DeclarationOutcome::Jishogi, None),
                "%JISHOGI",
                Some(EndingKind::Jishogi),
                "持将棋",
            ),
            (
                verdict(C::NoLegalMoves, Some(Color::Black), Evidence::NoLegalMoves),
                "'ending: NO_LEGAL_MOVES",
                None,
                "",
            ),
            (
                verdict(C::TryRule, Some(Color::Black), Evidence::TryRule { mv }),
                "'ending: TRY",
                None,
                "",
            ),
            (
                verdict(C::IllegalMove, Some(Color::White), illegal.clone()),
                "%ILLEGAL_MOVE",
                Some(EndingKind::IllegalMove),
                "反則負け",
            ),
            (
                verdict(
                    C::Repetition,
                    None,
                    Evidence::Repetition {
                        plies: [1, 5, 9, 13],
                        mutual_check: false,
                    },
                ),
                "%SENNICHITE",
                Some(EndingKind::Sennichite),
                "千日手",
            ),
            (
                verdict(
                    C::Resignation,
                    Some(Color::White),
                    Evidence::Reported {
                        note: String::new(),
                    },
                ),
                "%TORYO",
                Some(EndingKind::Resign),
                "投了",
            ),
        ];
        for (v, csa, read_back, kif_word) in &cases {
            let name = format!("{} won by {:?}", v.code, v.winner);
            // The special move, or none where the verdict goes in a comment.
            let special = (!csa.starts_with('\'')).then_some(*csa);
            // judge --csa-out: the special move it appends.
            assert_eq!(
                csa_special(v, Foul::NotRecorded).as_deref(),
                special,
                "judge: {name}"
            );
            // export: the record's ending as the CSA writer writes it.
            let written = write_csa(&exported(v), None);
            assert_eq!(written.lines().last(), Some(*csa), "export: {name}");
            // convert: the exported file read back, and written as KIF.
            let back = read_csa(&written).unwrap();
            let kind = back.ending.map(|e| e.kind);
            assert_eq!(&kind, read_back, "convert (CSA read back): {name}");
            let kif = write_kif(&exported(v));
            assert!(kif.contains(kif_word), "convert (KIF): {name}: {kif}");
        }
        // A forfeited move the record holds (judge's input record) is its mover's foul.
        let forfeit = verdict(C::IllegalMove, Some(Color::White), illegal);
        assert_eq!(
            csa_special(&forfeit, Foul::Recorded).as_deref(),
            Some("%+ILLEGAL_ACTION")
        );
    }
}
