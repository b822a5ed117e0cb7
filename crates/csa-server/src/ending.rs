//! A verdict of the arbiter as the CSA lines that end a game: the one place a [`pb::Verdict`]
//! becomes a [`GameEnd`], whoever caused it (a move, a resignation, a declaration, the clock's
//! flag of a silent side).

use csa_protocol::GameEnd;
use shogi_adjudication::ResultCode;
use shogi_proto::convert::{color_from_pb, result_code_from_pb};
use shogi_proto::v1 as pb;
use shogi_rules::Color;

/// How `verdict` ends a CSA game. `to_move` is the side to move when it came (the loser of an
/// ending that names none).
///
/// A checkmate (and a side left without a legal move) is the arbiter's improvement on
/// shogi-server, which never detects one and waits for the mated engine's `%TORYO`: the game ends
/// at the mating move, with the lines of that resignation (`%TORYO`, `#RESIGN`), which every
/// client already understands (docs/csa.md, "Where the front end differs").
pub fn game_end(verdict: &pb::Verdict, to_move: Color) -> GameEnd {
    let winner = color_from_pb(verdict.winner);
    let loser = winner.map_or(to_move, |w| !w);
    let Some(code) = result_code_from_pb(verdict.code) else {
        return GameEnd::Chudan;
    };
    match code {
        ResultCode::Checkmate | ResultCode::NoLegalMoves | ResultCode::TryRule => {
            GameEnd::Resign { loser }
        }
        ResultCode::Resignation => GameEnd::Resign { loser },
        ResultCode::IllegalMove => GameEnd::IllegalMove { loser },
        ResultCode::Repetition => GameEnd::Sennichite,
        ResultCode::PerpetualCheck => GameEnd::OuteSennichite { loser },
        ResultCode::Declaration => match (winner, &verdict.evidence) {
            (Some(w), Some(pb::verdict::Evidence::Declaration(r)))
                if color_from_pb(r.declarer) == Some(w) =>
            {
                GameEnd::Kachi { winner: w }
            }
            (Some(w), _) => GameEnd::IllegalKachi { loser: !w },
            (None, _) => GameEnd::Chudan,
        },
        ResultCode::MaxMoves => GameEnd::MaxMoves,
        ResultCode::Timeout => GameEnd::TimeUp { loser },
        ResultCode::Abort | ResultCode::Agreement => GameEnd::Chudan,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shogi_proto::convert::{color_pb, result_code_pb};

    fn verdict(code: ResultCode, winner: Option<Color>) -> pb::Verdict {
        pb::Verdict {
            code: result_code_pb(code),
            winner: winner.map_or(0, color_pb),
            ..Default::default()
        }
    }

    /// The `#` line of each ending is shogi-adjudication's `csa_server_result`, the one mapping
    /// of result codes to the CSA server's lines.
    #[test]
    fn the_lines_sent_are_the_codes_csa_server_result() {
        for code in ResultCode::ALL {
            let Some(line) = code.csa_server_result() else {
                continue;
            };
            if code == ResultCode::Declaration {
                continue;
            }
            let end = game_end(&verdict(code, Some(Color::Black)), Color::White);
            for me in Color::ALL {
                let text = end.render(me);
                assert!(
                    text.lines().any(|l| l == line),
                    "{code:?}: {text:?} has no {line}"
                );
            }
        }
    }

    #[test]
    fn a_declaration_wins_for_the_declarer_or_loses_as_an_illegal_kachi() {
        let mut v = verdict(ResultCode::Declaration, Some(Color::Black));
        v.evidence = Some(pb::verdict::Evidence::Declaration(pb::DeclarationReport {
            declarer: color_pb(Color::Black),
            ..Default::default()
        }));
        assert_eq!(
            game_end(&v, Color::Black),
            GameEnd::Kachi {
                winner: Color::Black
            }
        );
        v.winner = color_pb(Color::White);
        let end = game_end(&v, Color::Black);
        assert_eq!(
            end,
            GameEnd::IllegalKachi {
                loser: Color::Black
            }
        );
        assert!(end.render(Color::Black).contains("#ILLEGAL_MOVE\n#LOSE\n"));
    }

    #[test]
    fn a_checkmate_ends_as_the_mated_sides_resignation() {
        let end = game_end(
            &verdict(ResultCode::Checkmate, Some(Color::White)),
            Color::Black,
        );
        assert_eq!(end.render(Color::Black), "%TORYO\n#RESIGN\n#LOSE\n");
        assert_eq!(end.render(Color::White), "%TORYO\n#RESIGN\n#WIN\n");
    }

    #[test]
    fn a_time_up_without_a_winner_named_loses_for_the_side_to_move() {
        let end = game_end(&verdict(ResultCode::Timeout, None), Color::White);
        assert_eq!(end.render(Color::White), "#TIME_UP\n#LOSE\n");
    }
}
