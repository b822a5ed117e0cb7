//! Verdicts: how a game ended, as a value (never an error), docs/rules.md section 7.

use crate::clock::TimeUp;
use crate::impasse::DeclarationReport;
use crate::ruleset::OrdinaryResult;
use shogi_rules::{Color, IllegalKind, Move};
use std::fmt;

/// The result code of a verdict, with the names docs/rules.md section 7 gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultCode {
    /// 詰み: the side to move is in check with no legal move; the mover wins.
    Checkmate,
    /// The side to move has no legal move but is not in check; it loses all the same
    /// (docs/rules.md section 1).
    NoLegalMoves,
    /// An illegal move under the forfeit policy (反則負け).
    IllegalMove,
    /// An ordinary fourfold repetition (千日手).
    Repetition,
    /// Perpetual check (連続王手の千日手): the checker loses.
    PerpetualCheck,
    /// An impasse declaration (入玉宣言) judged: win, jishogi or loss.
    Declaration,
    /// The try rule (トライルール): a king reached the opponent king's start square.
    TryRule,
    /// The move cap ended the game.
    MaxMoves,
    /// Reported by the platform: a side resigned (投了).
    Resignation,
    /// A side ran out of time (切れ負け): found by the game's clock (docs/rules.md section 9), or
    /// reported by a platform that keeps the clock itself.
    Timeout,
    /// Reported by the platform: the game was aborted (中断) without a result.
    Abort,
    /// Reported by the platform: the players agreed (for instance to a jishogi after an
    /// agreement count).
    Agreement,
}

impl ResultCode {
    /// Every code, in the order of docs/rules.md section 7 and then the platform-reported ones.
    pub const ALL: [ResultCode; 12] = [
        ResultCode::Checkmate,
        ResultCode::NoLegalMoves,
        ResultCode::IllegalMove,
        ResultCode::Repetition,
        ResultCode::PerpetualCheck,
        ResultCode::Declaration,
        ResultCode::TryRule,
        ResultCode::MaxMoves,
        ResultCode::Resignation,
        ResultCode::Timeout,
        ResultCode::Abort,
        ResultCode::Agreement,
    ];

    /// The code string of docs/rules.md section 7 (`checkmate`, `no_legal_moves`, `illegal_move`,
    /// `repetition`, `perpetual_check`, `declaration`, `try_rule`, `max_moves`), and
    /// `resignation`, `timeout`, `abort`, `agreement` for platform reports.
    pub const fn as_str(self) -> &'static str {
        match self {
            ResultCode::Checkmate => "checkmate",
            ResultCode::NoLegalMoves => "no_legal_moves",
            ResultCode::IllegalMove => "illegal_move",
            ResultCode::Repetition => "repetition",
            ResultCode::PerpetualCheck => "perpetual_check",
            ResultCode::Declaration => "declaration",
            ResultCode::TryRule => "try_rule",
            ResultCode::MaxMoves => "max_moves",
            ResultCode::Resignation => "resignation",
            ResultCode::Timeout => "timeout",
            ResultCode::Abort => "abort",
            ResultCode::Agreement => "agreement",
        }
    }

    /// Parses a code written by [`ResultCode::as_str`] (its `FromStr`).
    pub fn from_code(code: &str) -> Option<ResultCode> {
        code.parse().ok()
    }

    /// The result line the CSA shogi-server sends for this ending: `#SENNICHITE`,
    /// `#OUTE_SENNICHITE`, `#JISHOGI`, `#MAX_MOVES`, `#ILLEGAL_MOVE`, `#RESIGN`, `#TIME_UP`,
    /// `#CHUDAN` (docs/rules.md section 7, CSA server protocol). `None` where the server has none:
    /// it does not detect checkmate itself (the mated side resigns). A record file writes a
    /// special move instead, which depends on more than the code (who gave the checks, how a
    /// declaration ended): `shogi-arbiter`'s `ending::record_ending`, the one mapping.
    pub const fn csa_server_result(self) -> Option<&'static str> {
        match self {
            ResultCode::Repetition => Some("#SENNICHITE"),
            ResultCode::PerpetualCheck => Some("#OUTE_SENNICHITE"),
            ResultCode::Declaration => Some("#JISHOGI"),
            ResultCode::MaxMoves => Some("#MAX_MOVES"),
            ResultCode::IllegalMove => Some("#ILLEGAL_MOVE"),
            ResultCode::Resignation => Some("#RESIGN"),
            ResultCode::Timeout => Some("#TIME_UP"),
            ResultCode::Abort => Some("#CHUDAN"),
            _ => None,
        }
    }

    /// The Lishogi game status name (docs/rules.md section 7): `mate`, `stalemate`, `repetition`,
    /// `perpetualCheck`, `impasse27`, `tryRule`, `draw`, `resign`, `outoftime`, `aborted`.
    /// `None` for an illegal move, which Lishogi rejects instead of ending the game.
    pub const fn lishogi_status(self) -> Option<&'static str> {
        match self {
            ResultCode::Checkmate => Some("mate"),
            ResultCode::NoLegalMoves => Some("stalemate"),
            ResultCode::IllegalMove => None,
            ResultCode::Repetition => Some("repetition"),
            ResultCode::PerpetualCheck => Some("perpetualCheck"),
            ResultCode::Declaration => Some("impasse27"),
            ResultCode::TryRule => Some("tryRule"),
            ResultCode::MaxMoves | ResultCode::Agreement => Some("draw"),
            ResultCode::Resignation => Some("resign"),
            ResultCode::Timeout => Some("outoftime"),
            ResultCode::Abort => Some("aborted"),
        }
    }
}

/// Which part of a pipelined arbiter announces an ending. Every ending is decided by whoever
/// judges the game (the move validator judges every ply with the whole adjudication layer, so
/// it never accepts a move after an ending); the announcement, one per game, belongs to one
/// party, so that a platform hears each ending once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Announcer {
    /// The repetition watcher: fourfold repetition and perpetual check.
    RepetitionWatcher,
    /// The impasse judge: move caps, declarations (explicit and automatic), and every ending
    /// the validator decides from the moves or the platform reports (checkmate, no legal
    /// moves, the try rule, a forfeited illegal move, resignation, timeout, abort, agreement),
    /// which it announces from the game's log, so that an ending is announced even when the
    /// validator dies between storing and announcing it.
    ImpasseJudge,
}

impl ResultCode {
    /// The party that announces this ending in a pipelined arbiter: the one exhaustive match
    /// every service reads, so that adding a result code is a compile error here first.
    pub const fn announcer(self) -> Announcer {
        match self {
            ResultCode::Repetition | ResultCode::PerpetualCheck => Announcer::RepetitionWatcher,
            ResultCode::Checkmate
            | ResultCode::NoLegalMoves
            | ResultCode::IllegalMove
            | ResultCode::Declaration
            | ResultCode::TryRule
            | ResultCode::MaxMoves
            | ResultCode::Resignation
            | ResultCode::Timeout
            | ResultCode::Abort
            | ResultCode::Agreement => Announcer::ImpasseJudge,
        }
    }
}

impl fmt::Display for ResultCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The evidence behind a verdict, one shape per result code (docs/rules.md section 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// The mating ply and move (`None` for a game that starts mated).
    Checkmate {
        /// The ply that mated.
        mating_ply: u32,
        /// The mating move.
        mating_move: Option<Move>,
    },
    /// The side to move had no legal move and was not in check.
    NoLegalMoves,
    /// The illegal move and why (docs/rules.md section 1).
    IllegalMove {
        /// One kind per rule.
        kind: IllegalKind,
        /// The move as played.
        mv: Move,
    },
    /// An ordinary repetition: the four plies (F first, N last) and whether both sides checked
    /// on every move in F+1..N (a mutual perpetual check, judged as ordinary).
    Repetition {
        /// The plies of the four occurrences.
        plies: [u32; 4],
        /// Both sides checked on every move in F+1..N.
        mutual_check: bool,
    },
    /// Perpetual check: the four plies, the checker and its check plies in F+1..N.
    PerpetualCheck {
        /// The plies of the four occurrences.
        plies: [u32; 4],
        /// The side that checked on every move, and so loses.
        checker: Color,
        /// Every ply of the checker in F+1..N (each gave check).
        check_plies: Vec<u32>,
    },
    /// The declaration calculator's full report (rule, points, each condition with its value).
    Declaration(Box<DeclarationReport>),
    /// The king move that reached the target square.
    TryRule {
        /// The king move.
        mv: Move,
    },
    /// The cap, and whether play went past it because the checks went on (JSA 500-move rule).
    MaxMoves {
        /// The cap N in plies.
        cap: u32,
        /// Whether the game went past ply N on checks.
        extended_by_checks: bool,
    },
    /// The clock's evidence of a time-up (docs/rules.md section 9): when the side's turn
    /// started, its deadline, when the late call came (or the flag was looked at), what it was
    /// charged and what it had.
    TimeUp(Box<TimeUp>),
    /// Reported by the platform (resignation, timeout, abort, agreement, an illegal move by its
    /// protocol that is no move of the board): what it said, if anything; no evidence of the
    /// arbiter's own.
    Reported {
        /// The platform's words (for an illegal move, the line the player sent).
        note: String,
    },
    /// An `abort` the arbiter decided: nobody played the game for longer than the abandon
    /// limit (docs/rules.md section 10).
    Abandoned(Abandoned),
}

/// The evidence of an abandoned game (docs/rules.md section 10): times in milliseconds on the
/// arbiter's clock, given by the caller (the adjudication layer reads no clock).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Abandoned {
    /// When the game's last entry (its creation, or its last move) was stored.
    pub last_activity_ms: u64,
    /// How long a game may go without an entry.
    pub limit_ms: u64,
    /// When the arbiter found the game abandoned: at least `limit_ms` after the last entry.
    pub at_ms: u64,
}

impl Abandoned {
    /// Whether the game had gone `limit_ms` without an entry at `at_ms`.
    pub fn holds(&self) -> bool {
        self.at_ms.saturating_sub(self.last_activity_ms) >= self.limit_ms
    }
}

/// How a game ended: a value, never an error (docs/rules.md section 7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The result code.
    pub code: ResultCode,
    /// The winner, or `None` (a draw, a replay, an abort).
    pub winner: Option<Color>,
    /// The ply of the move that ended the game; for a declaration, the plies played before it.
    pub ply: u32,
    /// For a result with no winner: draw or replay. `None` where a side won.
    pub ordinary_result: Option<OrdinaryResult>,
    /// What the verdict rests on.
    pub evidence: Evidence,
}

impl Verdict {
    /// A verdict the platform reports (resignation, timeout, abort, agreement), with no
    /// evidence of its own.
    pub fn reported(
        code: ResultCode,
        winner: Option<Color>,
        ply: u32,
        ordinary_result: Option<OrdinaryResult>,
    ) -> Verdict {
        Verdict {
            code,
            winner,
            ply,
            ordinary_result,
            evidence: Evidence::Reported {
                note: String::new(),
            },
        }
    }

    /// The loser, when there is a winner.
    pub fn loser(&self) -> Option<Color> {
        self.winner.map(|c| !c)
    }
}

impl fmt::Display for Verdict {
    /// `perpetual_check white wins at ply 21`, `repetition replay at ply 12`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.code)?;
        match (self.winner, self.ordinary_result) {
            (Some(w), _) => write!(f, " {w} wins")?,
            (None, Some(r)) => write!(f, " {}", r.as_str())?,
            (None, None) => {}
        }
        write!(f, " at ply {}", self.ply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_match_rules_md() {
        for c in ResultCode::ALL {
            assert_eq!(ResultCode::from_code(c.as_str()), Some(c));
        }
        assert_eq!(ResultCode::PerpetualCheck.as_str(), "perpetual_check");
        assert_eq!(
            ResultCode::PerpetualCheck.csa_server_result(),
            Some("#OUTE_SENNICHITE")
        );
        assert_eq!(ResultCode::Declaration.lishogi_status(), Some("impasse27"));
        assert_eq!(ResultCode::MaxMoves.csa_server_result(), Some("#MAX_MOVES"));
        assert_eq!(ResultCode::from_code("mate"), None);
    }

    #[test]
    fn display_names_winner_or_result() {
        let v = Verdict::reported(ResultCode::Resignation, Some(Color::White), 40, None);
        assert_eq!(v.to_string(), "resignation white wins at ply 40");
        assert_eq!(v.loser(), Some(Color::Black));
        let v = Verdict::reported(ResultCode::Abort, None, 3, Some(OrdinaryResult::Replay));
        assert_eq!(v.to_string(), "abort replay at ply 3");
    }
}
