//! The impasse-judge: consumes the games' move events from the bus and announces the endings
//! of move caps (plain, and the JSA 500-move rule with its check extension) and automatic
//! impasse declarations (入玉宣言), with their evidence.
//!
//! It is the pipeline worker of `repetition-watcher` in the [`Role::Judge`] role: the same
//! in-order, once-each consumption and the same guarded announcement, with the judge's share of
//! the endings. It also announces, from the game's log, every ending the validator decides
//! (checkmate, try rule, a forfeit, a platform's report, an explicit declaration), so that an
//! ending is announced even when the validator dies between storing and announcing it; in a
//! pipeline the validator's `Declare` answers only once the judge has announced the
//! declaration's verdict. The rules are `shogi_adjudication::Game`'s.

pub use repetition_watcher::{Role, ServiceConfig, WorkerConfig, run_service};

/// The judge's worker settings with the defaults.
pub fn worker_config() -> WorkerConfig {
    WorkerConfig::new(Role::Judge)
}
