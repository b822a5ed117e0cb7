//! Rulesets: every option of docs/rules.md as a field, and the named presets.
//!
//! Where the authorities disagree, docs/rules.md makes the disagreement an option rather than a
//! hard-coded choice; this module is where those options live.
//!
//! Every option has a name ([`Ruleset::OPTIONS`], the field's name, which is also the field's
//! name in the proto's `RulesetOverrides`) and a text form: [`Ruleset::set`] parses one option by
//! name (the CLI's `--set KEY=VALUE`), [`Ruleset::options`] prints them all back in the same
//! text, and [`Ruleset::validate`] refuses values no authority means and options that
//! contradict each other, naming the option ([`RulesetError::field`]).

use crate::clock::{
    Allowance, ChargeRounding, ClockRules, MAX_BYOYOMI_PERIODS, MAX_CLOCK_GRACE_MS,
    MAX_CLOCK_TIME_MS, TimeControl,
};
use shogi_rules::Color;
use std::ops::RangeInclusive;

/// What happens to an illegal move (反則), docs/rules.md section 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IllegalMovePolicy {
    /// The move is refused with its reason and the game goes on (online platforms, Lishogi's
    /// API).
    Reject,
    /// The move is recorded and the mover loses at once (JSA over-the-board play; the CSA
    /// shogi-server writes `#ILLEGAL_MOVE`).
    Forfeit,
}

impl IllegalMovePolicy {
    /// Every policy, in the order of docs/rules.md.
    pub const ALL: [IllegalMovePolicy; 2] = [IllegalMovePolicy::Reject, IllegalMovePolicy::Forfeit];

    /// `reject` or `forfeit`, as docs/rules.md section 1 names them.
    pub const fn as_str(self) -> &'static str {
        match self {
            IllegalMovePolicy::Reject => "reject",
            IllegalMovePolicy::Forfeit => "forfeit",
        }
    }
}

/// The result of a game that ends without a winner: an ordinary fourfold repetition
/// (docs/rules.md section 3) or a jishogi (持将棋, section 4 and 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrdinaryResult {
    /// A draw (online services, the CSA shogi-server).
    Draw,
    /// No result: the game is replayed with colours swapped (指し直し, JSA).
    Replay,
}

impl OrdinaryResult {
    /// Both results.
    pub const ALL: [OrdinaryResult; 2] = [OrdinaryResult::Draw, OrdinaryResult::Replay];

    /// `draw` or `replay`.
    pub const fn as_str(self) -> &'static str {
        match self {
            OrdinaryResult::Draw => "draw",
            OrdinaryResult::Replay => "replay",
        }
    }
}

/// How the points of a declaration (入玉宣言) are judged, docs/rules.md section 4 point 6.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclarationRule {
    /// The 27-point rule (CSA/WCSC/floodgate, Shogi Wars, 81Dojo, JSA amateur events): Black
    /// needs 28 points, White 27; enough wins, otherwise the declarer loses.
    Points27,
    /// The JSA professional 24-point declaration (since 2013, amended 2019): 31 or more wins,
    /// 24..=30 is jishogi, under 24 the declarer loses.
    Jsa24,
}

impl DeclarationRule {
    /// Both rules.
    pub const ALL: [DeclarationRule; 2] = [DeclarationRule::Points27, DeclarationRule::Jsa24];

    /// `points27` or `jsa24`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeclarationRule::Points27 => "points27",
            DeclarationRule::Jsa24 => "jsa24",
        }
    }
}

/// When a declaration is judged, docs/rules.md section 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclarationTrigger {
    /// Only on request (CSA `%KACHI`, USI `bestmove win`, JSA).
    Explicit,
    /// The win is awarded as soon as the side to move meets the conditions, without a request
    /// (Shogi Wars, Lishogi).
    Automatic,
}

impl DeclarationTrigger {
    /// Both triggers.
    pub const ALL: [DeclarationTrigger; 2] =
        [DeclarationTrigger::Explicit, DeclarationTrigger::Automatic];

    /// `explicit` or `automatic`, as docs/rules.md section 4 names them.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeclarationTrigger::Explicit => "explicit",
            DeclarationTrigger::Automatic => "automatic",
        }
    }
}

/// What a declaration that does not qualify does, docs/rules.md section 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailedDeclaration {
    /// The declarer loses (JSA, CSA, 81Dojo, Shogi Wars).
    Loss,
    /// The declaration is refused and play goes on (some apps).
    Refuse,
}

impl FailedDeclaration {
    /// Both choices.
    pub const ALL: [FailedDeclaration; 2] = [FailedDeclaration::Loss, FailedDeclaration::Refuse];

    /// `loss` or `refuse`, as docs/rules.md section 4 names them.
    pub const fn as_str(self) -> &'static str {
        match self {
            FailedDeclaration::Loss => "loss",
            FailedDeclaration::Refuse => "refuse",
        }
    }
}

/// How a move cap ends the game, docs/rules.md section 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CapMode {
    /// The game is a draw (`#MAX_MOVES`) when ply N+1 would be due.
    Plain,
    /// The JSA 500-move rule: jishogi after ply N unless that ply gave check; while the checks go
    /// on play continues, and it ends as jishogi at the first ply p > N where neither ply p nor
    /// ply p-1 gave check.
    Jsa500,
}

impl CapMode {
    /// Both modes.
    pub const ALL: [CapMode; 2] = [CapMode::Plain, CapMode::Jsa500];

    /// `plain` or `jsa500`, as docs/rules.md section 5 names them.
    pub const fn as_str(self) -> &'static str {
        match self {
            CapMode::Plain => "plain",
            CapMode::Jsa500 => "jsa500",
        }
    }
}

/// Who wins an agreement count where both sides reach the threshold (docs/rules.md section 4,
/// agreement counting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgreementTie {
    /// Jishogi, with the ruleset's [`Ruleset::jishogi`] result (the JSA 24-point count).
    Jishogi,
    /// White wins (the common form of the amateur 27-point count at 27-27).
    WhiteWins,
    /// Black wins.
    BlackWins,
}

impl AgreementTie {
    /// Every tie result.
    pub const ALL: [AgreementTie; 3] = [
        AgreementTie::Jishogi,
        AgreementTie::WhiteWins,
        AgreementTie::BlackWins,
    ];

    /// `jishogi`, `white_wins` or `black_wins` (the proto's `AGREEMENT_TIE_*` names, lower case).
    pub const fn as_str(self) -> &'static str {
        match self {
            AgreementTie::Jishogi => "jishogi",
            AgreementTie::WhiteWins => "white_wins",
            AgreementTie::BlackWins => "black_wins",
        }
    }
}

/// The agreement-counting thresholds a ruleset may have: 24 to 27 points.
///
/// docs/rules.md section 4 knows two counts, the JSA's 24 and the amateur events' 27, and both count
/// the 54 points of all 38 non-king pieces (27 a side at the start; the handicap credit gives the
/// giver the missing pieces, so the total stays 54). Above 27 a count can leave both sides under
/// the threshold (27-27), so it would decide nothing: not a rule. Below 24 no authority counts,
/// and the lower the threshold the more counts end as ties, until the count stops deciding
/// anything: 5 would make nearly every impasse a tie. The range between the two counts docs/rules.md
/// knows is the meaningful one; it can be widened later without refusing any stored ruleset,
/// while narrowing it would.
pub const AGREEMENT_THRESHOLDS: RangeInclusive<u32> = 24..=27;

/// The longest move cap a ruleset may have, in plies.
///
/// The caps of docs/rules.md section 5 run from 256 (CSA) to 700 plies (Lishogi). Ten thousand is
/// more than fourteen times the longest of them, so any cap an organiser means fits, while a
/// typo (a cap of millions of plies) is refused rather than becoming a cap nobody reaches.
pub const MAX_MOVE_CAP: u32 = 10_000;

/// Why a [`Ruleset`] is refused ([`Ruleset::validate`]): a value no authority means, or two
/// options that contradict each other. Each names the option at fault ([`RulesetError::field`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum RulesetError {
    /// The agreement threshold is outside [`AGREEMENT_THRESHOLDS`].
    #[error(
        "agreement_threshold {threshold} is outside {lo}..={hi}: docs/rules.md counts at 24 (JSA) or \
         27 (amateur events) of 54 points",
        lo = AGREEMENT_THRESHOLDS.start(),
        hi = AGREEMENT_THRESHOLDS.end()
    )]
    AgreementThreshold {
        /// The refused threshold.
        threshold: u32,
    },
    /// A move cap of 0 plies: no cap is `None` (the proto's and the CLI's `0` mean none).
    #[error("move_cap 0 is not a cap: no cap is none")]
    MoveCapZero,
    /// A move cap above [`MAX_MOVE_CAP`].
    #[error("move_cap {cap} is longer than {MAX_MOVE_CAP} plies")]
    MoveCapTooLong {
        /// The refused cap.
        cap: u32,
    },
    /// The automatic trigger without a declaration rule: there is nothing to award.
    #[error("declaration_trigger automatic needs a declaration rule, and declaration is none")]
    AutomaticWithoutDeclaration,
    /// The CSA shogi-server's early cap with the JSA 500-move mode: the server's deviation is one
    /// of its plain cap (docs/rules.md section 5), and the JSA mode would silently ignore it.
    #[error("csa_server_cap reproduces the CSA shogi-server's plain cap, and cap_mode is jsa500")]
    CsaServerCapWithJsa500,
    /// An amount of time (main time, byoyomi, increment, least time per move) above
    /// [`MAX_CLOCK_TIME_MS`].
    #[error(
        "{option} {} s is longer than a day ({} s)",
        seconds_text(*ms),
        seconds_text(MAX_CLOCK_TIME_MS)
    )]
    ClockTimeTooLong {
        /// The option.
        option: &'static str,
        /// The refused amount, in milliseconds.
        ms: u64,
    },
    /// An amount of time that is not a whole number of the units the clock charges in: the
    /// clock would charge whole units against it.
    #[error(
        "{option} {} s is not a whole number of {}, and clock_rounding is {}",
        seconds_text(*ms),
        rounding.as_str(),
        rounding.as_str()
    )]
    ClockNotWholeUnits {
        /// The amount's option.
        option: &'static str,
        /// The amount, in milliseconds.
        ms: u64,
        /// The clock's rounding.
        rounding: ChargeRounding,
    },
    /// No byoyomi period: a byoyomi has one period or more, and no byoyomi is a byoyomi of 0.
    #[error("{option} 0 is no period: no byoyomi is time_byoyomi 0")]
    ByoyomiPeriodsZero {
        /// The option.
        option: &'static str,
    },
    /// More byoyomi periods than [`MAX_BYOYOMI_PERIODS`].
    #[error("{option} {periods} is more than {MAX_BYOYOMI_PERIODS} periods")]
    ByoyomiPeriodsTooMany {
        /// The option.
        option: &'static str,
        /// The refused count.
        periods: u32,
    },
    /// A grace above [`MAX_CLOCK_GRACE_MS`].
    #[error(
        "clock_grace {} s is longer than {} s",
        seconds_text(*ms),
        seconds_text(MAX_CLOCK_GRACE_MS)
    )]
    ClockGraceTooLong {
        /// The refused grace, in milliseconds.
        ms: u64,
    },
}

impl RulesetError {
    /// The option at fault, as [`Ruleset::OPTIONS`] names it: the field of the proto's
    /// `RulesetOverrides`, so that a gRPC layer reports `ruleset.overrides.<field>` in a
    /// `google.rpc.BadRequest` field violation. For a contradiction, the option that asks for
    /// what the other forbids; the message names both.
    pub const fn field(&self) -> &'static str {
        match self {
            RulesetError::AgreementThreshold { .. } => "agreement_threshold",
            RulesetError::MoveCapZero | RulesetError::MoveCapTooLong { .. } => "move_cap",
            RulesetError::AutomaticWithoutDeclaration => "declaration_trigger",
            RulesetError::CsaServerCapWithJsa500 => "csa_server_cap",
            RulesetError::ClockTimeTooLong { option, .. }
            | RulesetError::ClockNotWholeUnits { option, .. }
            | RulesetError::ByoyomiPeriodsZero { option }
            | RulesetError::ByoyomiPeriodsTooMany { option, .. } => option,
            RulesetError::ClockGraceTooLong { .. } => "clock_grace",
        }
    }
}

/// Why [`Ruleset::set`] refused an option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RulesetOptionError {
    /// No option has this name.
    #[error("unknown ruleset option {key:?} (known: {known})", known = Ruleset::OPTIONS.join(", "))]
    UnknownOption {
        /// The name given.
        key: String,
    },
    /// The value is not one the option takes.
    #[error("bad value {value:?} for {option}: expected {expected}")]
    BadValue {
        /// The option.
        option: &'static str,
        /// The value given.
        value: String,
        /// What the option takes.
        expected: String,
    },
    /// The value parses but is refused on its own (a threshold or cap out of range).
    #[error(transparent)]
    Refused(#[from] RulesetError),
}

impl RulesetOptionError {
    /// The option at fault ([`RulesetError::field`]), or `None` for an unknown name.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            RulesetOptionError::UnknownOption { .. } => None,
            RulesetOptionError::BadValue { option, .. } => Some(option),
            RulesetOptionError::Refused(e) => Some(e.field()),
        }
    }
}

/// Every option of docs/rules.md, as plain public fields: start from a preset and override any
/// field with struct update syntax (`Ruleset { move_cap: Some(320), ..Ruleset::csa() }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ruleset {
    /// Reject or forfeit an illegal move (docs/rules.md section 1).
    pub illegal_move: IllegalMovePolicy,
    /// The result of an ordinary fourfold repetition, and of a mutual perpetual check
    /// (docs/rules.md section 3).
    pub repetition: OrdinaryResult,
    /// Whether the game's start position counts as occurrence 1 (docs/rules.md section 2: JSA,
    /// Lishogi, YaneuraOu, tsshogi). `false` reproduces the CSA shogi-server, which does not
    /// count it and so can end a game four plies later.
    pub start_position_counted: bool,
    /// The declaration rule, or `None` when declarations are not allowed (docs/rules.md section 4).
    pub declaration: Option<DeclarationRule>,
    /// Whether a declaration needs a request (docs/rules.md section 4).
    pub declaration_trigger: DeclarationTrigger,
    /// Whether a declaration that does not qualify loses or is refused (docs/rules.md section 4).
    pub failed_declaration: FailedDeclaration,
    /// The result of a jishogi: a [`DeclarationRule::Jsa24`] declaration with 24..=30 points, a
    /// [`CapMode::Jsa500`] cap, and an agreement count that ends in [`AgreementTie::Jishogi`]
    /// (docs/rules.md sections 4 and 5; the JSA replays).
    pub jishogi: OrdinaryResult,
    /// Whether the handicap giver (White) is credited with the pieces missing at the start
    /// (docs/rules.md section 4: "the dropped pieces are assumed to be with uwate", JSA). Only a
    /// handicap start has a giver ([`crate::impasse::is_handicap_start`]).
    pub handicap_credit: bool,
    /// Whether the try rule (トライルール) is in force (docs/rules.md section 4).
    pub try_rule: bool,
    /// The move cap N in plies, or `None` (docs/rules.md section 5: CSA 256, 320 or 512; JSA 500;
    /// Lishogi 700). `Some(0)` is not a cap: no cap is `None` ([`RulesetError::MoveCapZero`]), and
    /// a cap above [`MAX_MOVE_CAP`] is refused.
    pub move_cap: Option<u32>,
    /// How the cap ends the game (docs/rules.md section 5).
    pub cap_mode: CapMode,
    /// Reproduce the CSA shogi-server's early cap (docs/rules.md section 5: the CSA shogi-server
    /// ends it earlier): the game ends with `#MAX_MOVES` as soon as ply N is played, even when
    /// ply N mated, instead of only when ply N+1 would be due. Only [`CapMode::Plain`] uses it.
    pub csa_server_cap: bool,
    /// The agreement-counting threshold: 24 (JSA) or 27 (amateur events), docs/rules.md section 4;
    /// within [`AGREEMENT_THRESHOLDS`].
    pub agreement_threshold: u32,
    /// The agreement-counting result when both sides reach the threshold, docs/rules.md section 4.
    pub agreement_tie: AgreementTie,
    /// The clock's bookkeeping (docs/rules.md section 9): how the time of a move is rounded, the
    /// least time per move, the grace. Set by every preset, used only with a time control.
    pub clock: ClockRules,
    /// The time control (docs/rules.md section 9), or `None`, as in every preset: a game
    /// without one has no clock, and its moves, declarations and resignations are judged
    /// without time, as a platform that keeps the clock itself reports a timeout.
    pub time_control: Option<TimeControl>,
}

impl Ruleset {
    /// The names [`Ruleset::preset`] accepts.
    pub const PRESETS: [&'static str; 5] = ["jsa", "amateur", "csa", "online", "floodgate"];

    /// The preset of a game or a command that names none: JSA professional play, the
    /// authority docs/rules.md defers to first ([`Ruleset::default`]).
    pub const DEFAULT_PRESET: &'static str = Ruleset::PRESETS[0];

    /// JSA professional play.
    ///
    /// Illegal moves forfeit (over-the-board 反則負け); repetition and jishogi are replayed
    /// (指し直し); the 24-point declaration on request (JSA rule since 2013, amended 2019),
    /// where a failed declaration loses; handicap credit for the giver; the 500-move cap with its
    /// check extension (docs/rules.md section 5, `jsa500`); agreement counting at 24 with jishogi
    /// when both sides reach it. The start position counts (docs/rules.md section 2). The clock
    /// runs as a chess clock does, in milliseconds (docs/rules.md section 9).
    pub const fn jsa() -> Ruleset {
        Ruleset {
            illegal_move: IllegalMovePolicy::Forfeit,
            repetition: OrdinaryResult::Replay,
            start_position_counted: true,
            declaration: Some(DeclarationRule::Jsa24),
            declaration_trigger: DeclarationTrigger::Explicit,
            failed_declaration: FailedDeclaration::Loss,
            jishogi: OrdinaryResult::Replay,
            handicap_credit: true,
            try_rule: false,
            move_cap: Some(500),
            cap_mode: CapMode::Jsa500,
            csa_server_cap: false,
            agreement_threshold: 24,
            agreement_tie: AgreementTie::Jishogi,
            clock: ClockRules::CHESS_CLOCK,
            time_control: None,
        }
    }

    /// JSA amateur events.
    ///
    /// Illegal moves forfeit as over the board; repetition is replayed; the 27-point
    /// declaration on request (docs/rules.md section 4 lists JSA amateur events under `points27`),
    /// losing when it fails; handicap credit; no move cap (amateur events play to a result on
    /// the clock); agreement counting at 27 with White winning a 27-27 tie, "the common form".
    /// The clock runs as a chess clock does, in milliseconds (docs/rules.md section 9).
    pub const fn amateur() -> Ruleset {
        Ruleset {
            illegal_move: IllegalMovePolicy::Forfeit,
            repetition: OrdinaryResult::Replay,
            start_position_counted: true,
            declaration: Some(DeclarationRule::Points27),
            declaration_trigger: DeclarationTrigger::Explicit,
            failed_declaration: FailedDeclaration::Loss,
            jishogi: OrdinaryResult::Replay,
            handicap_credit: true,
            try_rule: false,
            move_cap: None,
            cap_mode: CapMode::Plain,
            csa_server_cap: false,
            agreement_threshold: 27,
            agreement_tie: AgreementTie::WhiteWins,
            clock: ClockRules::CHESS_CLOCK,
            time_control: None,
        }
    }

    /// CSA computer-shogi tournaments (WCSC), as the CSA rules state them.
    ///
    /// Illegal moves forfeit (`#ILLEGAL_MOVE`); repetition is a draw (`#SENNICHITE`); the
    /// 27-point declaration by `%KACHI`, losing when it fails; a 256-ply plain cap that ends the
    /// game only when ply 257 would be due (CSA tournament rule 23-1). The start position counts:
    /// that is the rule; [`Ruleset::floodgate`] reproduces the server's own bookkeeping. The
    /// clock is the shogi-server's: whole seconds truncated, no least time (the CSA's rule since
    /// November 2014), no grace (docs/rules.md section 9).
    pub const fn csa() -> Ruleset {
        Ruleset {
            illegal_move: IllegalMovePolicy::Forfeit,
            repetition: OrdinaryResult::Draw,
            start_position_counted: true,
            declaration: Some(DeclarationRule::Points27),
            declaration_trigger: DeclarationTrigger::Explicit,
            failed_declaration: FailedDeclaration::Loss,
            jishogi: OrdinaryResult::Draw,
            handicap_credit: true,
            try_rule: false,
            move_cap: Some(256),
            cap_mode: CapMode::Plain,
            csa_server_cap: false,
            agreement_threshold: 27,
            agreement_tie: AgreementTie::WhiteWins,
            clock: ClockRules::CSA,
            time_control: None,
        }
    }

    /// Online play (Lishogi, Shogi Wars style).
    ///
    /// Illegal moves are rejected (Lishogi's API); repetition is a draw; the 27-point
    /// declaration is awarded automatically (Shogi Wars, Lishogi), and an explicit declaration
    /// that does not qualify is refused rather than lost, as apps do; no move cap. The clock
    /// runs in milliseconds, byoyomi periods as Lishogi has them (docs/rules.md section 9).
    pub const fn online() -> Ruleset {
        Ruleset {
            illegal_move: IllegalMovePolicy::Reject,
            repetition: OrdinaryResult::Draw,
            start_position_counted: true,
            declaration: Some(DeclarationRule::Points27),
            declaration_trigger: DeclarationTrigger::Automatic,
            failed_declaration: FailedDeclaration::Refuse,
            jishogi: OrdinaryResult::Draw,
            handicap_credit: true,
            try_rule: false,
            move_cap: None,
            cap_mode: CapMode::Plain,
            csa_server_cap: false,
            agreement_threshold: 27,
            agreement_tie: AgreementTie::WhiteWins,
            clock: ClockRules::CHESS_CLOCK,
            time_control: None,
        }
    }

    /// The CSA shogi-server as floodgate runs it: [`Ruleset::csa`] with the server's two
    /// deviations reproduced, for re-judging floodgate records exactly as they were judged
    /// (docs/rules.md sections 2 and 5): the start position is not counted, and the cap fires as
    /// soon as ply 256 is played. Its clock is [`Ruleset::csa`]'s, the server's own.
    pub const fn floodgate() -> Ruleset {
        Ruleset {
            start_position_counted: false,
            csa_server_cap: true,
            ..Ruleset::csa()
        }
    }

    /// The preset of this name (one of [`Ruleset::PRESETS`]), or `None`.
    pub fn preset(name: &str) -> Option<Ruleset> {
        match name {
            "jsa" => Some(Ruleset::jsa()),
            "amateur" => Some(Ruleset::amateur()),
            "csa" => Some(Ruleset::csa()),
            "online" => Some(Ruleset::online()),
            "floodgate" => Some(Ruleset::floodgate()),
            _ => None,
        }
    }
}

impl Ruleset {
    /// The name of every option, in field order: the keys [`Ruleset::set`] takes and
    /// [`Ruleset::options`] prints, and the field names of the proto's `RulesetOverrides` in
    /// field-number order (under test, since a gRPC layer names `ruleset.overrides.<field>`).
    pub const OPTIONS: [&'static str; 25] = [
        "illegal_move",
        "repetition",
        "start_position_counted",
        "declaration",
        "declaration_trigger",
        "failed_declaration",
        "jishogi",
        "handicap_credit",
        "try_rule",
        "move_cap",
        "cap_mode",
        "csa_server_cap",
        "agreement_threshold",
        "agreement_tie",
        "clock_rounding",
        "least_time_per_move",
        "clock_grace",
        "time_main",
        "time_main_white",
        "time_byoyomi",
        "time_byoyomi_white",
        "time_periods",
        "time_periods_white",
        "time_increment",
        "time_increment_white",
    ];

    /// The clock's options (docs/rules.md section 9), the last of [`Ruleset::OPTIONS`]: the
    /// proto's `RulesetOverrides` does not carry them yet.
    pub const CLOCK_OPTIONS: &'static [&'static str] = Ruleset::OPTIONS.as_slice().split_at(14).1;

    /// Sets one option by name from its text, the one parser of ruleset options (the CLI's
    /// `--set KEY=VALUE`).
    ///
    /// Values are the names docs/rules.md uses, and the proto's enum value names in lower case
    /// without their prefix where docs/rules.md has none ([`Ruleset::options`] prints them back):
    /// `reject` or
    /// `forfeit`; `draw` or `replay`; `points27`, `jsa24` or `none` for the declaration rule;
    /// `explicit` or `automatic`; `loss` or `refuse`; `plain` or `jsa500`; `jishogi`,
    /// `white_wins` or `black_wins`; `true`, `false` (or `on`/`off`, `yes`/`no`) for a switch;
    /// a number of plies for `move_cap`, where `0` and `none` mean no cap; a number of points
    /// for `agreement_threshold`.
    ///
    /// The clock's options (docs/rules.md section 9): `seconds`, `milliseconds` or `minutes` for
    /// `clock_rounding`; a time in seconds with up to three decimals (`30`, `0.5`) for
    /// `least_time_per_move`, `clock_grace` and the time control's amounts `time_main`,
    /// `time_byoyomi`, `time_increment`; a number of periods for `time_periods`. An amount is
    /// Black's, and White's too while White's is the same; its `_white` option is White's
    /// (time odds), or `same` for Black's. `none` on any `time_` option means no time control
    /// (and then all of them show `none`); a number on one when there is none starts from an
    /// unlimited control (all amounts 0, one period).
    ///
    /// A value that is refused on its own (a cap above [`MAX_MOVE_CAP`], a threshold outside
    /// [`AGREEMENT_THRESHOLDS`], a time above [`MAX_CLOCK_TIME_MS`] or a grace above
    /// [`MAX_CLOCK_GRACE_MS`], no period or more than [`MAX_BYOYOMI_PERIODS`]) is refused here. Contradictions between options are not, since
    /// they depend on the order options are set in: call [`Ruleset::validate`] once all are set.
    /// On an error the ruleset is unchanged.
    ///
    /// ```
    /// use shogi_adjudication::{AgreementTie, Ruleset};
    ///
    /// let mut rules = Ruleset::csa();
    /// rules.set("move_cap", "320").unwrap();
    /// rules.set("agreement_tie", "jishogi").unwrap();
    /// assert_eq!((rules.move_cap, rules.agreement_tie), (Some(320), AgreementTie::Jishogi));
    /// // Refused on its own, naming the option.
    /// let err = rules.set("agreement_threshold", "5").unwrap_err();
    /// assert_eq!(err.field(), Some("agreement_threshold"));
    /// // A contradiction shows once every option is set.
    /// rules.set("declaration", "none").unwrap();
    /// rules.set("declaration_trigger", "automatic").unwrap();
    /// assert_eq!(rules.validate().unwrap_err().field(), "declaration_trigger");
    /// ```
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), RulesetOptionError> {
        let Some(&option) = Ruleset::OPTIONS.iter().find(|o| **o == key) else {
            return Err(RulesetOptionError::UnknownOption {
                key: key.to_owned(),
            });
        };
        let mut next = *self;
        match option {
            "illegal_move" => assign(&mut next.illegal_move, value),
            "repetition" => assign(&mut next.repetition, value),
            "start_position_counted" => assign(&mut next.start_position_counted, value),
            "declaration" => assign(&mut next.declaration, value),
            "declaration_trigger" => assign(&mut next.declaration_trigger, value),
            "failed_declaration" => assign(&mut next.failed_declaration, value),
            "jishogi" => assign(&mut next.jishogi, value),
            "handicap_credit" => assign(&mut next.handicap_credit, value),
            "try_rule" => assign(&mut next.try_rule, value),
            "move_cap" => assign(&mut next.move_cap, value),
            "cap_mode" => assign(&mut next.cap_mode, value),
            "csa_server_cap" => assign(&mut next.csa_server_cap, value),
            "agreement_threshold" => assign(&mut next.agreement_threshold, value),
            "agreement_tie" => assign(&mut next.agreement_tie, value),
            "clock_rounding" => assign(&mut next.clock.rounding, value),
            "least_time_per_move" => assign_seconds(&mut next.clock.least_time_per_move_ms, value),
            "clock_grace" => assign_seconds(&mut next.clock.grace_ms, value),
            "time_main" => assign_time(&mut next.time_control, Amount::Main, Color::Black, value),
            "time_main_white" => {
                assign_time(&mut next.time_control, Amount::Main, Color::White, value)
            }
            "time_byoyomi" => {
                assign_time(&mut next.time_control, Amount::Byoyomi, Color::Black, value)
            }
            "time_byoyomi_white" => {
                assign_time(&mut next.time_control, Amount::Byoyomi, Color::White, value)
            }
            "time_periods" => {
                assign_time(&mut next.time_control, Amount::Periods, Color::Black, value)
            }
            "time_periods_white" => {
                assign_time(&mut next.time_control, Amount::Periods, Color::White, value)
            }
            "time_increment" => assign_time(
                &mut next.time_control,
                Amount::Increment,
                Color::Black,
                value,
            ),
            "time_increment_white" => assign_time(
                &mut next.time_control,
                Amount::Increment,
                Color::White,
                value,
            ),
            _ => unreachable!("every name in Ruleset::OPTIONS has its arm"),
        }
        .map_err(|expected| RulesetOptionError::BadValue {
            option,
            value: value.to_owned(),
            expected: expected.to_owned(),
        })?;
        match option {
            "move_cap" => check_move_cap(next.move_cap)?,
            "agreement_threshold" => check_agreement_threshold(next.agreement_threshold)?,
            _ => next.check_clock_option(option)?,
        }
        *self = next;
        Ok(())
    }

    /// Every option with its value, in the order and the text of [`Ruleset::OPTIONS`] and
    /// [`Ruleset::set`]: the effective ruleset, for the CLI and for `GetGame` to show. Setting
    /// each pair onto any ruleset gives this one back.
    pub fn options(&self) -> Vec<(&'static str, String)> {
        let values = [
            self.illegal_move.show(),
            self.repetition.show(),
            self.start_position_counted.show(),
            self.declaration.show(),
            self.declaration_trigger.show(),
            self.failed_declaration.show(),
            self.jishogi.show(),
            self.handicap_credit.show(),
            self.try_rule.show(),
            self.move_cap.show(),
            self.cap_mode.show(),
            self.csa_server_cap.show(),
            self.agreement_threshold.show(),
            self.agreement_tie.show(),
            self.clock.rounding.show(),
            seconds_text(self.clock.least_time_per_move_ms),
            seconds_text(self.clock.grace_ms),
            show_time(self.time_control, Amount::Main, Color::Black),
            show_time(self.time_control, Amount::Main, Color::White),
            show_time(self.time_control, Amount::Byoyomi, Color::Black),
            show_time(self.time_control, Amount::Byoyomi, Color::White),
            show_time(self.time_control, Amount::Periods, Color::Black),
            show_time(self.time_control, Amount::Periods, Color::White),
            show_time(self.time_control, Amount::Increment, Color::Black),
            show_time(self.time_control, Amount::Increment, Color::White),
        ];
        Ruleset::OPTIONS.into_iter().zip(values).collect()
    }

    /// Checks the ruleset: the first of its [`Ruleset::violations`], if any.
    ///
    /// A ruleset is refused when a value is one no authority means (a threshold outside
    /// [`AGREEMENT_THRESHOLDS`], a cap of `Some(0)` or above [`MAX_MOVE_CAP`]) or when two
    /// options contradict each other (the automatic trigger without a declaration rule; the CSA
    /// server's early cap with the JSA 500-move mode). Options that merely have no effect are
    /// allowed, so that one override never forces another: the cap mode and the CSA server's
    /// cap without a cap (`move_cap=none` on any preset), the failed-declaration choice and an
    /// explicit trigger without a declaration rule. The try rule goes with a declaration rule
    /// too: docs/rules.md section 6 orders both. The clock's amounts are refused beyond their
    /// bounds, and when the clock charges in whole seconds or minutes, an amount that is not a
    /// whole number of them is refused (docs/rules.md section 9), naming the amount. Every
    /// preset validates.
    pub fn validate(&self) -> Result<(), RulesetError> {
        self.violations().into_iter().next().map_or(Ok(()), Err)
    }

    /// Everything wrong with the ruleset, in the order of [`Ruleset::OPTIONS`] by
    /// [`RulesetError::field`] (empty when it is valid): for a `google.rpc.BadRequest` with one
    /// field violation each.
    pub fn violations(&self) -> Vec<RulesetError> {
        let mut out = Vec::new();
        if self.declaration.is_none() && self.declaration_trigger == DeclarationTrigger::Automatic {
            out.push(RulesetError::AutomaticWithoutDeclaration);
        }
        if let Err(e) = check_move_cap(self.move_cap) {
            out.push(e);
        }
        if self.csa_server_cap && self.cap_mode == CapMode::Jsa500 {
            out.push(RulesetError::CsaServerCapWithJsa500);
        }
        if let Err(e) = check_agreement_threshold(self.agreement_threshold) {
            out.push(e);
        }
        for &option in Ruleset::CLOCK_OPTIONS {
            if let Err(e) = self.check_clock_option(option) {
                out.push(e);
            } else if let Some(ms) = self.clock_time(option)
                && ms % self.clock.rounding.unit_ms() != 0
            {
                out.push(RulesetError::ClockNotWholeUnits {
                    option,
                    ms,
                    rounding: self.clock.rounding,
                });
            }
        }
        out
    }

    /// A clock option's value checked on its own: its bounds.
    fn check_clock_option(&self, option: &'static str) -> Result<(), RulesetError> {
        if option == "clock_grace" {
            let ms = self.clock.grace_ms;
            return match ms > MAX_CLOCK_GRACE_MS {
                true => Err(RulesetError::ClockGraceTooLong { ms }),
                false => Ok(()),
            };
        }
        if let Some(ms) = self.clock_time(option) {
            return match ms > MAX_CLOCK_TIME_MS {
                true => Err(RulesetError::ClockTimeTooLong { option, ms }),
                false => Ok(()),
            };
        }
        match (time_option(option), self.time_control) {
            (Some((Amount::Periods, side)), Some(control)) => match control.side(side).periods {
                0 => Err(RulesetError::ByoyomiPeriodsZero { option }),
                periods if periods > MAX_BYOYOMI_PERIODS => {
                    Err(RulesetError::ByoyomiPeriodsTooMany { option, periods })
                }
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// The amount of time a clock option gives, in milliseconds: the least time per move and
    /// the time control's main time, byoyomi and increment (not the grace, which is no charge).
    fn clock_time(&self, option: &str) -> Option<u64> {
        if option == "least_time_per_move" {
            return Some(self.clock.least_time_per_move_ms);
        }
        match time_option(option)? {
            (Amount::Periods, _) => None,
            (amount, side) => Some(amount.get(&self.time_control?.side(side))),
        }
    }
}

/// The text form of one option's value, as [`Ruleset::set`] reads it and [`Ruleset::options`]
/// writes it.
trait OptionValue: Sized {
    /// What the option takes, for the error when `value` is none of it.
    const EXPECTED: &'static str;
    /// The value this text names.
    fn parse(value: &str) -> Option<Self>;
    /// The text of this value.
    fn show(&self) -> String;
}

fn assign<T: OptionValue>(field: &mut T, value: &str) -> Result<(), &'static str> {
    *field = T::parse(value).ok_or(T::EXPECTED)?;
    Ok(())
}

/// The options whose values are names: each enum's `ALL` and `as_str`.
macro_rules! named_option_values {
    ($($ty:ident: $expected:literal,)*) => {$(
        impl OptionValue for $ty {
            const EXPECTED: &'static str = $expected;
            fn parse(value: &str) -> Option<Self> {
                value.parse().ok()
            }
            fn show(&self) -> String {
                self.as_str().to_owned()
            }
        }
    )*};
}

named_option_values! {
    IllegalMovePolicy: "reject or forfeit",
    OrdinaryResult: "draw or replay",
    DeclarationRule: "points27 or jsa24",
    DeclarationTrigger: "explicit or automatic",
    FailedDeclaration: "loss or refuse",
    CapMode: "plain or jsa500",
    AgreementTie: "jishogi, white_wins or black_wins",
    ChargeRounding: "seconds, milliseconds or minutes",
}

/// The declaration rule, or `none` for no declarations.
impl OptionValue for Option<DeclarationRule> {
    const EXPECTED: &'static str = "points27, jsa24 or none";
    fn parse(value: &str) -> Option<Self> {
        match value {
            "none" => Some(None),
            _ => DeclarationRule::parse(value).map(Some),
        }
    }
    fn show(&self) -> String {
        self.map_or("none", DeclarationRule::as_str).to_owned()
    }
}

/// A switch: `true`, `on`, `yes` or `false`, `off`, `no`.
impl OptionValue for bool {
    const EXPECTED: &'static str = "true or false";
    fn parse(value: &str) -> Option<Self> {
        match value {
            "true" | "on" | "yes" => Some(true),
            "false" | "off" | "no" => Some(false),
            _ => None,
        }
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

/// The agreement threshold, the one plain number; its range is checked apart.
impl OptionValue for u32 {
    const EXPECTED: &'static str = "a number of points from 24 to 27";
    fn parse(value: &str) -> Option<Self> {
        value.parse().ok()
    }
    fn show(&self) -> String {
        self.to_string()
    }
}

/// The move cap, the one optional number: `0` and `none` are no cap, and `none` is shown.
impl OptionValue for Option<u32> {
    const EXPECTED: &'static str = "a number of plies up to 10000, or 0 or none for no cap";
    fn parse(value: &str) -> Option<Self> {
        match value {
            "none" | "0" => Some(None),
            _ => value.parse().ok().map(Some),
        }
    }
    fn show(&self) -> String {
        self.map_or_else(|| "none".to_owned(), |n| n.to_string())
    }
}

/// What the time options take.
const SECONDS_EXPECTED: &str = "a time in seconds with up to 3 decimals";

/// A time in seconds with up to three decimals (`30`, `0.5`, `1.25`), in milliseconds.
fn parse_seconds(value: &str) -> Option<u64> {
    let (whole, fraction) = match value.split_once('.') {
        Some((whole, fraction)) if (1..=3).contains(&fraction.len()) => (whole, fraction),
        Some(_) => return None,
        None => (value, ""),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(fraction.is_empty() || digits(fraction)) {
        return None;
    }
    let millis = format!("{fraction:0<3}").parse::<u64>().ok()?;
    whole
        .parse::<u64>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(millis)
}

/// Milliseconds as [`parse_seconds`] reads them: `30`, `0.5`, `1.25`.
fn seconds_text(ms: u64) -> String {
    match ms % 1000 {
        0 => (ms / 1000).to_string(),
        millis => {
            let fraction = format!("{millis:03}");
            format!("{}.{}", ms / 1000, fraction.trim_end_matches('0'))
        }
    }
}

fn assign_seconds(field: &mut u64, value: &str) -> Result<(), &'static str> {
    *field = parse_seconds(value).ok_or(SECONDS_EXPECTED)?;
    Ok(())
}

/// One amount of an [`Allowance`], as the `time_` options name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Amount {
    Main,
    Byoyomi,
    Periods,
    Increment,
}

impl Amount {
    fn get(self, allowance: &Allowance) -> u64 {
        match self {
            Amount::Main => allowance.main_ms,
            Amount::Byoyomi => allowance.byoyomi_ms,
            Amount::Periods => u64::from(allowance.periods),
            Amount::Increment => allowance.increment_ms,
        }
    }

    /// Sets the amount; a count of periods parsed by [`Amount::parse`] fits a `u32`.
    fn set(self, allowance: &mut Allowance, value: u64) {
        match self {
            Amount::Main => allowance.main_ms = value,
            Amount::Byoyomi => allowance.byoyomi_ms = value,
            Amount::Periods => allowance.periods = u32::try_from(value).unwrap_or(u32::MAX),
            Amount::Increment => allowance.increment_ms = value,
        }
    }

    fn parse(self, value: &str) -> Option<u64> {
        match self {
            Amount::Periods => value.parse::<u32>().ok().map(u64::from),
            _ => parse_seconds(value),
        }
    }

    fn show(self, value: u64) -> String {
        match self {
            Amount::Periods => value.to_string(),
            _ => seconds_text(value),
        }
    }

    fn expected(self, side: Color) -> &'static str {
        match (self, side) {
            (Amount::Periods, Color::Black) => {
                "a number of byoyomi periods, or none for no time control"
            }
            (Amount::Periods, Color::White) => {
                "a number of byoyomi periods, same (as Black's), or none for no time control"
            }
            (_, Color::Black) => {
                "a time in seconds with up to 3 decimals, or none for no time control"
            }
            (_, Color::White) => {
                "a time in seconds with up to 3 decimals, same (as Black's), or none for no time \
                 control"
            }
        }
    }
}

/// The amount and side a `time_` option sets.
fn time_option(option: &str) -> Option<(Amount, Color)> {
    Some(match option {
        "time_main" => (Amount::Main, Color::Black),
        "time_main_white" => (Amount::Main, Color::White),
        "time_byoyomi" => (Amount::Byoyomi, Color::Black),
        "time_byoyomi_white" => (Amount::Byoyomi, Color::White),
        "time_periods" => (Amount::Periods, Color::Black),
        "time_periods_white" => (Amount::Periods, Color::White),
        "time_increment" => (Amount::Increment, Color::Black),
        "time_increment_white" => (Amount::Increment, Color::White),
        _ => return None,
    })
}

/// Sets one amount of the time control ([`Ruleset::set`]): `none` removes the control;
/// White's `same` copies Black's; a value for Black sets White's too while White's is the
/// same; a value on no control starts from an unlimited one.
fn assign_time(
    control: &mut Option<TimeControl>,
    amount: Amount,
    side: Color,
    value: &str,
) -> Result<(), &'static str> {
    match (value, side) {
        ("none", _) => *control = None,
        ("same", Color::White) => {
            if let Some(c) = control {
                amount.set(&mut c.white, amount.get(&c.black));
            }
        }
        _ => {
            let value = amount.parse(value).ok_or(amount.expected(side))?;
            let c = control.get_or_insert(TimeControl::UNLIMITED);
            if side == Color::Black && amount.get(&c.white) == amount.get(&c.black) {
                amount.set(&mut c.white, value);
            }
            amount.set(
                match side {
                    Color::Black => &mut c.black,
                    Color::White => &mut c.white,
                },
                value,
            );
        }
    }
    Ok(())
}

/// The text [`assign_time`] reads back: `none` without a control, `same` for White's amount
/// when it is Black's.
fn show_time(control: Option<TimeControl>, amount: Amount, side: Color) -> String {
    let Some(c) = control else {
        return "none".to_owned();
    };
    let black = amount.get(&c.black);
    match side {
        Color::Black => amount.show(black),
        Color::White if amount.get(&c.white) == black => "same".to_owned(),
        Color::White => amount.show(amount.get(&c.white)),
    }
}

fn check_move_cap(cap: Option<u32>) -> Result<(), RulesetError> {
    match cap {
        Some(0) => Err(RulesetError::MoveCapZero),
        Some(cap) if cap > MAX_MOVE_CAP => Err(RulesetError::MoveCapTooLong { cap }),
        _ => Ok(()),
    }
}

fn check_agreement_threshold(threshold: u32) -> Result<(), RulesetError> {
    if AGREEMENT_THRESHOLDS.contains(&threshold) {
        Ok(())
    } else {
        Err(RulesetError::AgreementThreshold { threshold })
    }
}

impl Default for Ruleset {
    /// The JSA professional rules ([`Ruleset::jsa`]), the authority docs/rules.md defers to first.
    fn default() -> Ruleset {
        Ruleset::jsa()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_values_name_the_ranges() {
        let (lo, hi) = (AGREEMENT_THRESHOLDS.start(), AGREEMENT_THRESHOLDS.end());
        assert!(<u32 as OptionValue>::EXPECTED.ends_with(&format!("from {lo} to {hi}")));
        let cap = <Option<u32> as OptionValue>::EXPECTED;
        assert!(cap.contains(&format!("up to {MAX_MOVE_CAP},")), "{cap}");
    }

    #[test]
    fn every_preset_name_resolves_and_unknown_names_do_not() {
        for name in Ruleset::PRESETS {
            assert!(Ruleset::preset(name).is_some(), "{name}");
        }
        assert_eq!(Ruleset::preset("JSA"), None);
        assert_eq!(Ruleset::preset(""), None);
    }

    #[test]
    fn presets_follow_rules_md() {
        let jsa = Ruleset::jsa();
        assert_eq!(jsa.illegal_move, IllegalMovePolicy::Forfeit);
        assert_eq!(jsa.repetition, OrdinaryResult::Replay);
        assert_eq!(jsa.declaration, Some(DeclarationRule::Jsa24));
        assert_eq!((jsa.move_cap, jsa.cap_mode), (Some(500), CapMode::Jsa500));
        let amateur = Ruleset::amateur();
        assert_eq!(amateur.declaration, Some(DeclarationRule::Points27));
        assert_eq!(amateur.repetition, OrdinaryResult::Replay);
        let csa = Ruleset::csa();
        assert_eq!(csa.illegal_move, IllegalMovePolicy::Forfeit);
        assert_eq!(csa.repetition, OrdinaryResult::Draw);
        assert_eq!((csa.move_cap, csa.cap_mode), (Some(256), CapMode::Plain));
        assert!(csa.start_position_counted);
        let online = Ruleset::online();
        assert_eq!(online.illegal_move, IllegalMovePolicy::Reject);
        assert_eq!(online.declaration_trigger, DeclarationTrigger::Automatic);
        assert_eq!(online.move_cap, None);
        let fg = Ruleset::floodgate();
        assert!(!fg.start_position_counted && fg.csa_server_cap);
        assert_eq!(
            Ruleset {
                start_position_counted: true,
                csa_server_cap: false,
                ..fg
            },
            csa
        );
    }
}
