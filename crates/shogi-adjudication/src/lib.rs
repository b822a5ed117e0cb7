//! Shogi adjudication: rulesets, fourfold repetition and perpetual check, impasse, move caps and
//! verdicts, as RULES.md states them, above the rules core `shogi-rules`.
//!
//! Pure: no IO, no async runtime, no clock, no serde, no tracing. A verdict is a value
//! ([`Verdict`]), never an error; errors ([`GameError`]) are only for actions a game refuses.
//!
//! - [`Ruleset`]: every option of RULES.md as a field, with named presets
//!   ([`Ruleset::preset`]).
//! - [`Game`]: a start position, a ruleset and moves, judged after each ply in the order of
//!   RULES.md section 6; [`judge`] re-judges a whole record.
//! - [`repetition`]: the fourfold repetition and perpetual check algorithm over
//!   (hash, gave-check) pairs (RULES.md sections 2 and 3).
//! - [`impasse`]: point counting, the declaration calculator ([`evaluate_declaration`]), the
//!   handicap credit, agreement counting and the try rule (RULES.md section 4).

#![warn(missing_docs)]

mod game;
pub mod handicap;
pub mod impasse;
mod judge;
pub mod repetition;
mod ruleset;
mod verdict;

pub use game::{Declared, Game, GameError, PlyOutcome, Warning};
pub use handicap::Handicap;
pub use impasse::{
    AgreementReport, DeclarationCondition, DeclarationContext, DeclarationOutcome,
    DeclarationReport, PointCount, agreement_count, count_points, evaluate_declaration,
    handicap_credit, is_try, try_square,
};
pub use judge::{Judgement, judge};
pub use ruleset::{
    AgreementTie, CapMode, DeclarationRule, DeclarationTrigger, FailedDeclaration,
    IllegalMovePolicy, OrdinaryResult, Ruleset,
};
pub use verdict::{Evidence, ResultCode, Verdict};
