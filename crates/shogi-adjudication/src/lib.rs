//! Shogi adjudication: rulesets, fourfold repetition and perpetual check, impasse, move caps and
//! verdicts, as docs/rules.md states them, above the rules core `shogi-rules`.
//!
//! Pure: no IO, no async runtime, no system clock (the game clock reads the times its caller
//! gives), no serde, no tracing. A verdict is a value
//! ([`Verdict`]), never an error; errors ([`GameError`]) are only for actions a game refuses.
//!
//! - [`Ruleset`]: every option of docs/rules.md as a field, with named presets
//!   ([`Ruleset::preset`]), one parser of options by name ([`Ruleset::set`]) and a check that
//!   names the option at fault ([`Ruleset::validate`]).
//! - [`clock`]: the arbiter's clock ([`Clock`]) from receipt times the caller gives: the
//!   time control, what each move is charged, and when a side is out of time (docs/rules.md
//!   section 9).
//! - [`Game`]: a start position, a ruleset and moves, judged after each ply in the order of
//!   docs/rules.md section 6; [`judge`] re-judges a whole record.
//! - [`repetition`]: the fourfold repetition and perpetual check algorithm over
//!   (hash, gave-check) pairs (docs/rules.md sections 2 and 3).
//! - [`impasse`]: point counting, the declaration calculator ([`evaluate_declaration`]), the
//!   handicap credit, agreement counting and the try rule (docs/rules.md section 4); [`Handicap`]
//!   lists the standard handicap start positions.
//!
//! Invariants: a [`Game`] keeps ten bytes a ply ([`repetition::History`]) plus one current
//! position; a repetition verdict is issued only after the full positions behind the hashes are
//! compared; every verdict carries its evidence ([`Evidence`]).
//!
//! ```
//! use shogi_adjudication::{ResultCode, Ruleset, judge};
//! use shogi_rules::{Color, Move, Position};
//!
//! // The rook checks on every move and the king shuttles: perpetual check on ply 12, counting
//! // the start position as the first occurrence (docs/rules.md sections 2 and 3).
//! let start = Position::from_sfen("k2K5/2R6/9/9/9/9/9/9/9 b - 1").unwrap();
//! let moves = "7b7a 9a9b 7a7b 9b9a ".repeat(3);
//! let moves = moves.split_whitespace().map(|m| Move::from_usi(m).unwrap());
//! let judgement = judge(start, moves, false, &Ruleset::csa());
//! let verdict = judgement.verdict.unwrap();
//! assert_eq!(verdict.code, ResultCode::PerpetualCheck);
//! assert_eq!((verdict.winner, verdict.ply), (Some(Color::White), 12));
//! assert_eq!(verdict.code.csa_server_result(), Some("#OUTE_SENNICHITE"));
//! ```

#![warn(missing_docs)]

pub mod clock;
mod game;
pub mod handicap;
pub mod impasse;
mod judge;
mod names;
pub mod repetition;
mod ruleset;
mod verdict;

pub use clock::{
    Allowance, Charge, ChargeRounding, Clock, ClockRules, MAX_BYOYOMI_PERIODS, MAX_CLOCK_GRACE_MS,
    MAX_CLOCK_TIME_MS, SideClock, TimeControl, TimeUp,
};
pub use game::{AbandonError, Declared, Game, GameError, PlyOutcome, Warning};
pub use handicap::Handicap;
pub use impasse::{
    AgreementReport, DeclarationCondition, DeclarationContext, DeclarationOutcome,
    DeclarationReport, PointCount, agreement_count, count_points, evaluate_declaration,
    handicap_credit, is_handicap_start, is_try, try_square,
};
pub use judge::{Judgement, judge, judge_prechecked, judge_replayed};
pub use names::UnknownName;
pub use ruleset::{AGREEMENT_THRESHOLDS, MAX_MOVE_CAP, RulesetError, RulesetOptionError};
pub use ruleset::{
    AgreementTie, CapMode, DeclarationRule, DeclarationTrigger, FailedDeclaration,
    IllegalMovePolicy, OrdinaryResult, Ruleset,
};
pub use verdict::{Abandoned, Announcer, Evidence, ResultCode, Verdict};
