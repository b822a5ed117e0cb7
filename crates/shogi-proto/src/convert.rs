//! Conversions between the cores' types and the `shogi.v1` messages, and the parsing of request
//! fields into validated types: every service writes the same messages for the same verdicts,
//! and every failure names its field ([`FieldError`]).

use crate::v1 as pb;
use shogi_adjudication::{
    Abandoned, AgreementTie, CapMode, ChargeRounding, DeclarationReport, DeclarationRule,
    DeclarationTrigger, Evidence, FailedDeclaration, Game, IllegalMovePolicy, OrdinaryResult,
    ResultCode, Ruleset, SideClock, TimeUp, Verdict, Warning,
};
use shogi_rules::{Color, IllegalKind, Move, Position};

/// A request field that is not valid: its path in the request, as `google.rpc.BadRequest`
/// names it (`start.sfen`, `ruleset.overrides.move_cap`), and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field}: {description}")]
pub struct FieldError {
    /// The field path.
    pub field: &'static str,
    /// What is wrong with it.
    pub description: String,
}

impl FieldError {
    /// A [`FieldError`].
    pub fn new(field: &'static str, description: impl Into<String>) -> FieldError {
        FieldError {
            field,
            description: description.into(),
        }
    }
}

type Error = FieldError;

/// The longest game id: one NATS subject token of at most 64 characters.
pub const MAX_GAME_ID_LEN: usize = 64;

/// Checks a game id: one NATS subject token of ASCII letters, digits, `-` and `_`, 1 to 64
/// characters, so that `shogi.game.<id>.move` is a plain subject without wildcards.
pub fn check_game_id(field: &'static str, id: &str) -> Result<(), Error> {
    if id.is_empty() {
        return Err(Error::new(field, "empty game id"));
    }
    if id.len() > MAX_GAME_ID_LEN {
        return Err(Error::new(
            field,
            format!("game id longer than {MAX_GAME_ID_LEN} characters"),
        ));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(Error::new(
            field,
            format!("game id has {c:?}; only letters, digits, '-' and '_' are allowed"),
        ));
    }
    Ok(())
}

/// Parses an SFEN field: both kings, no dead piece, no two pawns on a file. ValidateMove and
/// the impasse calculator take any such position, as test positions and problems are.
pub fn parse_sfen(field: &'static str, sfen: &str) -> Result<Position, Error> {
    Position::from_sfen(sfen).map_err(|e| Error::new(field, e.to_string()))
}

/// Parses the SFEN a game starts from: as [`parse_sfen`], and a position legal play can reach,
/// so the side not to move is not in check (the side that just moved would have left its king
/// in check).
pub fn parse_start_sfen(field: &'static str, sfen: &str) -> Result<Position, Error> {
    let pos = parse_sfen(field, sfen)?;
    if pos.opponent_in_check() {
        return Err(Error::new(
            field,
            "the side not to move is in check: no legal game reaches this position",
        ));
    }
    Ok(pos)
}

/// Parses a USI move field.
pub fn parse_usi(field: &'static str, usi: &str) -> Result<Move, Error> {
    Move::from_usi(usi).map_err(|e| Error::new(field, e.to_string()))
}

/// A side from its message value; `None` for unspecified or unknown values.
pub fn color_from_pb(value: i32) -> Option<Color> {
    match pb::Color::try_from(value).ok()? {
        pb::Color::Black => Some(Color::Black),
        pb::Color::White => Some(Color::White),
        pb::Color::Unspecified => None,
    }
}

/// A side as its message value.
pub fn color_pb(color: Color) -> i32 {
    match color {
        Color::Black => pb::Color::Black as i32,
        Color::White => pb::Color::White as i32,
    }
}

fn opt_color_pb(color: Option<Color>) -> i32 {
    color.map_or(pb::Color::Unspecified as i32, color_pb)
}

/// An illegal kind as its message value.
pub fn illegal_kind_pb(kind: IllegalKind) -> i32 {
    (match kind {
        IllegalKind::TwoPawns => pb::IllegalKind::TwoPawns,
        IllegalKind::PawnDropMate => pb::IllegalKind::PawnDropMate,
        IllegalKind::DeadPiece => pb::IllegalKind::DeadPiece,
        IllegalKind::LeavesKingInCheck => pb::IllegalKind::LeavesKingInCheck,
        IllegalKind::Impossible => pb::IllegalKind::Impossible,
        IllegalKind::WrongTurn => pb::IllegalKind::WrongTurn,
    }) as i32
}

/// The name ([`IllegalKind::as_str`]) of an illegal kind's message value, for metrics.
pub fn illegal_kind_name(value: i32) -> &'static str {
    [
        IllegalKind::TwoPawns,
        IllegalKind::PawnDropMate,
        IllegalKind::DeadPiece,
        IllegalKind::LeavesKingInCheck,
        IllegalKind::Impossible,
        IllegalKind::WrongTurn,
    ]
    .into_iter()
    .find(|k| illegal_kind_pb(*k) == value)
    .map_or("unspecified", IllegalKind::as_str)
}

/// A result code as its message value.
pub fn result_code_pb(code: ResultCode) -> i32 {
    (match code {
        ResultCode::Checkmate => pb::ResultCode::Checkmate,
        ResultCode::NoLegalMoves => pb::ResultCode::NoLegalMoves,
        ResultCode::IllegalMove => pb::ResultCode::IllegalMove,
        ResultCode::Repetition => pb::ResultCode::Repetition,
        ResultCode::PerpetualCheck => pb::ResultCode::PerpetualCheck,
        ResultCode::Declaration => pb::ResultCode::Declaration,
        ResultCode::TryRule => pb::ResultCode::TryRule,
        ResultCode::MaxMoves => pb::ResultCode::MaxMoves,
        ResultCode::Resignation => pb::ResultCode::Resignation,
        ResultCode::Timeout => pb::ResultCode::Timeout,
        ResultCode::Abort => pb::ResultCode::Abort,
        ResultCode::Agreement => pb::ResultCode::Agreement,
    }) as i32
}

/// A result code from its message value, for verdicts read back from the bus.
pub fn result_code_from_pb(value: i32) -> Option<ResultCode> {
    let code = pb::ResultCode::try_from(value).ok()?;
    ResultCode::ALL
        .into_iter()
        .find(|c| result_code_pb(*c) == code as i32)
}

/// An ordinary result as its message value (unspecified for none).
pub fn ordinary_pb(result: Option<OrdinaryResult>) -> i32 {
    (match result {
        None => pb::OrdinaryResult::Unspecified,
        Some(OrdinaryResult::Draw) => pb::OrdinaryResult::Draw,
        Some(OrdinaryResult::Replay) => pb::OrdinaryResult::Replay,
    }) as i32
}

/// An ordinary result from its message value.
pub fn ordinary_from_pb(value: i32) -> Option<OrdinaryResult> {
    match pb::OrdinaryResult::try_from(value).ok()? {
        pb::OrdinaryResult::Draw => Some(OrdinaryResult::Draw),
        pb::OrdinaryResult::Replay => Some(OrdinaryResult::Replay),
        pb::OrdinaryResult::Unspecified => None,
    }
}

/// A declaration report as its message.
pub fn report_pb(report: &DeclarationReport) -> pb::DeclarationReport {
    pb::DeclarationReport {
        rule: report.rule.as_str().to_owned(),
        declarer: color_pb(report.declarer),
        outcome: report.outcome.as_str().to_owned(),
        conditions: report
            .conditions()
            .into_iter()
            .map(|(c, met)| pb::DeclarationConditionResult {
                name: c.as_str().to_owned(),
                met,
            })
            .collect(),
        pieces_in_camp: report.pieces_in_camp,
        king_in_camp: report.king_in_camp,
        in_check: report.in_check,
        has_time: report.has_time,
        points_in_camp: report.points_in_camp,
        points_in_hand: report.points_in_hand,
        credit: report.credit,
        points: report.points,
        points_to_win: report.points_to_win,
        points_missing: report.points_missing,
    }
}

/// A verdict as its message, with its evidence.
pub fn verdict_pb(game_id: &str, verdict: &Verdict) -> pb::Verdict {
    use pb::verdict::Evidence as E;
    let evidence = match &verdict.evidence {
        Evidence::Checkmate {
            mating_ply,
            mating_move,
        } => Some(E::Checkmate(pb::CheckmateEvidence {
            mating_ply: *mating_ply,
            mating_move: mating_move.map(|m| m.to_string()).unwrap_or_default(),
        })),
        Evidence::NoLegalMoves => None,
        Evidence::IllegalMove { kind, mv } => Some(E::IllegalMove(pb::IllegalMoveEvidence {
            kind: illegal_kind_pb(*kind),
            usi: mv.to_string(),
        })),
        Evidence::Repetition {
            plies,
            mutual_check,
        } => Some(E::Repetition(pb::RepetitionEvidence {
            plies: plies.to_vec(),
            mutual_check: *mutual_check,
        })),
        Evidence::PerpetualCheck {
            plies,
            checker,
            check_plies,
        } => Some(E::PerpetualCheck(pb::PerpetualCheckEvidence {
            plies: plies.to_vec(),
            checker: color_pb(*checker),
            check_plies: check_plies.clone(),
        })),
        Evidence::Declaration(report) => Some(E::Declaration(report_pb(report))),
        Evidence::TryRule { mv } => Some(E::TryRule(pb::TryRuleEvidence {
            usi: mv.to_string(),
        })),
        Evidence::MaxMoves {
            cap,
            extended_by_checks,
        } => Some(E::MaxMoves(pb::MaxMovesEvidence {
            cap: *cap,
            extended_by_checks: *extended_by_checks,
        })),
        Evidence::Reported { note } => {
            Some(E::Reported(pb::ReportedEvidence { note: note.clone() }))
        }
        Evidence::TimeUp(up) => Some(E::TimeUp(time_up_pb(up))),
        Evidence::Abandoned(a) => Some(E::Abandoned(abandoned_pb(a))),
    };
    pb::Verdict {
        game_id: game_id.to_owned(),
        code: result_code_pb(verdict.code),
        winner: opt_color_pb(verdict.winner),
        ply: verdict.ply,
        ordinary_result: ordinary_pb(verdict.ordinary_result),
        evidence,
        code_name: verdict.code.as_str().to_owned(),
        received_unix_ms: 0,
    }
}

/// An abandonment's evidence as its message.
pub fn abandoned_pb(a: &Abandoned) -> pb::AbandonedEvidence {
    pb::AbandonedEvidence {
        last_activity_unix_ms: unix_ms(a.last_activity_ms),
        limit_ms: a.limit_ms,
        at_unix_ms: unix_ms(a.at_ms),
    }
}

/// An abandonment's evidence read from its message.
pub fn abandoned_from_pb(a: &pb::AbandonedEvidence) -> Abandoned {
    Abandoned {
        last_activity_ms: from_unix_ms(a.last_activity_unix_ms),
        limit_ms: a.limit_ms,
        at_ms: from_unix_ms(a.at_unix_ms),
    }
}

/// A time-up's evidence as its message.
pub fn time_up_pb(up: &TimeUp) -> pb::TimeUpEvidence {
    pb::TimeUpEvidence {
        side: color_pb(up.side),
        turn_started_unix_ms: unix_ms(up.turn_started_ms),
        deadline_unix_ms: unix_ms(up.deadline_ms),
        at_unix_ms: unix_ms(up.at_ms),
        elapsed_ms: up.elapsed_ms,
        charged_ms: up.charged_ms,
        before: Some(side_clock_pb(up.before)),
        available_ms: up.available_ms,
        grace_ms: up.grace_ms,
    }
}

/// One side's clock as its message.
pub fn side_clock_pb(side: SideClock) -> pb::SideClock {
    pb::SideClock {
        remaining_ms: side.remaining_ms,
        periods_left: side.periods_left,
    }
}

/// A game's clock as its message: `None` when it has none. Once the game is over, no side
/// runs and there is no deadline.
pub fn clock_pb(game: &Game) -> Option<pb::ClockState> {
    let clock = game.clock()?;
    let over = game.is_over();
    // Periods mean nothing without a byoyomi: shown as none.
    let side = |c: Color| {
        let mut s = side_clock_pb(clock.side(c));
        if clock.control().side(c).byoyomi_ms == 0 {
            s.periods_left = 0;
        }
        s
    };
    Some(pb::ClockState {
        black: Some(side(Color::Black)),
        white: Some(side(Color::White)),
        running: if over {
            pb::Color::Unspecified as i32
        } else {
            color_pb(clock.running())
        },
        turn_started_unix_ms: unix_ms(clock.turn_started_ms()),
        deadline_unix_ms: if over {
            0
        } else {
            clock.deadline_ms().map_or(0, unix_ms)
        },
    })
}

/// A time of the arbiter's clock (milliseconds since the Unix epoch) as the contract's
/// `int64` (a time past the year 292 million saturates).
pub fn unix_ms(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// A time read from the contract as the arbiter's clock: a negative one (before 1970) is 0.
pub fn from_unix_ms(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0)
}

/// A warning as its message.
pub fn warning_pb(game_id: &str, warning: &Warning) -> pb::Warning {
    use pb::warning::Kind;
    let (ply, kind) = match *warning {
        Warning::ThirdOccurrence { ply, plies } => (
            ply,
            Kind::ThirdOccurrence(pb::ThirdOccurrence {
                plies: plies.to_vec(),
            }),
        ),
        Warning::PerpetualCheckRisk {
            ply,
            checker,
            since_ply,
        } => (
            ply,
            Kind::PerpetualCheckRisk(pb::PerpetualCheckRisk {
                checker: color_pb(checker),
                since_ply,
            }),
        ),
    };
    pb::Warning {
        game_id: game_id.to_owned(),
        ply,
        kind: Some(kind),
    }
}

/// The preset a request names: [`Ruleset::DEFAULT_PRESET`] when it names none.
pub fn preset_of(requested: Option<&pb::Ruleset>) -> &str {
    requested
        .map(|s| s.preset.as_str())
        .filter(|p| !p.is_empty())
        .unwrap_or(Ruleset::DEFAULT_PRESET)
}

/// The ruleset a request names: its preset (`jsa` when empty or unset) with the overrides
/// applied. An unknown preset or enum value is an invalid argument naming its field.
pub fn ruleset_from_pb(ruleset: Option<&pb::Ruleset>) -> Result<Ruleset, Error> {
    let Some(spec) = ruleset else {
        return Ok(Ruleset::default());
    };
    let preset = preset_of(Some(spec));
    let mut r = Ruleset::preset(preset).ok_or_else(|| {
        Error::new(
            "ruleset.preset",
            format!(
                "unknown preset {preset:?}; known: {}",
                Ruleset::PRESETS.join(", ")
            ),
        )
    })?;
    let Some(o) = &spec.overrides else {
        return Ok(r);
    };
    fn bad(field: &'static str, value: i32) -> Error {
        Error::new(field, format!("unknown value {value}"))
    }
    match pb::IllegalMovePolicy::try_from(o.illegal_move) {
        Ok(pb::IllegalMovePolicy::Unspecified) => {}
        Ok(pb::IllegalMovePolicy::Reject) => r.illegal_move = IllegalMovePolicy::Reject,
        Ok(pb::IllegalMovePolicy::Forfeit) => r.illegal_move = IllegalMovePolicy::Forfeit,
        Err(_) => return Err(bad("ruleset.overrides.illegal_move", o.illegal_move)),
    }
    match pb::OrdinaryResult::try_from(o.repetition) {
        Ok(pb::OrdinaryResult::Unspecified) => {}
        Ok(pb::OrdinaryResult::Draw) => r.repetition = OrdinaryResult::Draw,
        Ok(pb::OrdinaryResult::Replay) => r.repetition = OrdinaryResult::Replay,
        Err(_) => return Err(bad("ruleset.overrides.repetition", o.repetition)),
    }
    if let Some(v) = o.start_position_counted {
        r.start_position_counted = v;
    }
    match pb::DeclarationRule::try_from(o.declaration) {
        Ok(pb::DeclarationRule::Unspecified) => {}
        Ok(pb::DeclarationRule::None) => r.declaration = None,
        Ok(pb::DeclarationRule::Points27) => r.declaration = Some(DeclarationRule::Points27),
        Ok(pb::DeclarationRule::Jsa24) => r.declaration = Some(DeclarationRule::Jsa24),
        Err(_) => return Err(bad("ruleset.overrides.declaration", o.declaration)),
    }
    match pb::DeclarationTrigger::try_from(o.declaration_trigger) {
        Ok(pb::DeclarationTrigger::Unspecified) => {}
        Ok(pb::DeclarationTrigger::Explicit) => {
            r.declaration_trigger = DeclarationTrigger::Explicit;
        }
        Ok(pb::DeclarationTrigger::Automatic) => {
            r.declaration_trigger = DeclarationTrigger::Automatic;
        }
        Err(_) => {
            return Err(bad(
                "ruleset.overrides.declaration_trigger",
                o.declaration_trigger,
            ));
        }
    }
    match pb::FailedDeclaration::try_from(o.failed_declaration) {
        Ok(pb::FailedDeclaration::Unspecified) => {}
        Ok(pb::FailedDeclaration::Loss) => r.failed_declaration = FailedDeclaration::Loss,
        Ok(pb::FailedDeclaration::Refuse) => r.failed_declaration = FailedDeclaration::Refuse,
        Err(_) => {
            return Err(bad(
                "ruleset.overrides.failed_declaration",
                o.failed_declaration,
            ));
        }
    }
    match pb::OrdinaryResult::try_from(o.jishogi) {
        Ok(pb::OrdinaryResult::Unspecified) => {}
        Ok(pb::OrdinaryResult::Draw) => r.jishogi = OrdinaryResult::Draw,
        Ok(pb::OrdinaryResult::Replay) => r.jishogi = OrdinaryResult::Replay,
        Err(_) => return Err(bad("ruleset.overrides.jishogi", o.jishogi)),
    }
    if let Some(v) = o.handicap_credit {
        r.handicap_credit = v;
    }
    if let Some(v) = o.try_rule {
        r.try_rule = v;
    }
    if let Some(v) = o.move_cap {
        r.move_cap = (v != 0).then_some(v);
    }
    match pb::CapMode::try_from(o.cap_mode) {
        Ok(pb::CapMode::Unspecified) => {}
        Ok(pb::CapMode::Plain) => r.cap_mode = CapMode::Plain,
        Ok(pb::CapMode::Jsa500) => r.cap_mode = CapMode::Jsa500,
        Err(_) => return Err(bad("ruleset.overrides.cap_mode", o.cap_mode)),
    }
    if let Some(v) = o.csa_server_cap {
        r.csa_server_cap = v;
    }
    if let Some(v) = o.agreement_threshold {
        r.agreement_threshold = v;
    }
    match pb::AgreementTie::try_from(o.agreement_tie) {
        Ok(pb::AgreementTie::Unspecified) => {}
        Ok(pb::AgreementTie::Jishogi) => r.agreement_tie = AgreementTie::Jishogi,
        Ok(pb::AgreementTie::WhiteWins) => r.agreement_tie = AgreementTie::WhiteWins,
        Ok(pb::AgreementTie::BlackWins) => r.agreement_tie = AgreementTie::BlackWins,
        Err(_) => return Err(bad("ruleset.overrides.agreement_tie", o.agreement_tie)),
    }
    clock_overrides(&mut r, o)?;
    Ok(r)
}

/// The clock's overrides (docs/rules.md section 9), each through [`Ruleset::set`], the one
/// parser of the options, in the order that gives `_white` its meaning (Black's amount first,
/// then White's own).
fn clock_overrides(r: &mut Ruleset, o: &pb::RulesetOverrides) -> Result<(), Error> {
    match pb::ClockRounding::try_from(o.clock_rounding) {
        Ok(pb::ClockRounding::Unspecified) => {}
        Ok(pb::ClockRounding::Seconds) => r.clock.rounding = ChargeRounding::Seconds,
        Ok(pb::ClockRounding::Milliseconds) => r.clock.rounding = ChargeRounding::Milliseconds,
        Ok(pb::ClockRounding::Minutes) => r.clock.rounding = ChargeRounding::Minutes,
        Err(_) => {
            return Err(Error::new(
                "ruleset.overrides.clock_rounding",
                format!("unknown value {}", o.clock_rounding),
            ));
        }
    }
    let durations = [
        ("least_time_per_move", &o.least_time_per_move),
        ("clock_grace", &o.clock_grace),
        ("time_main", &o.time_main),
        ("time_main_white", &o.time_main_white),
        ("time_byoyomi", &o.time_byoyomi),
        ("time_byoyomi_white", &o.time_byoyomi_white),
        ("time_increment", &o.time_increment),
        ("time_increment_white", &o.time_increment_white),
    ];
    for (option, value) in durations {
        if let Some(d) = value {
            let text = duration_text(d).map_err(|why| Error::new(override_field(option), why))?;
            set_option(r, option, &text)?;
        }
    }
    for (option, value) in [
        ("time_periods", o.time_periods),
        ("time_periods_white", o.time_periods_white),
    ] {
        if let Some(n) = value {
            set_option(r, option, &n.to_string())?;
        }
    }
    Ok(())
}

fn set_option(r: &mut Ruleset, option: &'static str, text: &str) -> Result<(), Error> {
    r.set(option, text)
        .map_err(|e| Error::new(override_field(option), e.to_string()))
}

/// A duration as the options' text, seconds with up to three decimals: refused when negative or
/// finer than a millisecond.
fn duration_text(d: &prost_types::Duration) -> Result<String, String> {
    if d.seconds < 0 || d.nanos < 0 {
        return Err(format!("a negative time ({}s {}ns)", d.seconds, d.nanos));
    }
    if d.nanos % 1_000_000 != 0 {
        return Err(format!(
            "{}s {}ns is finer than a millisecond",
            d.seconds, d.nanos
        ));
    }
    Ok(format!("{}.{:03}", d.seconds, d.nanos / 1_000_000))
}

/// Milliseconds as a duration message (the clock's options in `RulesetOverrides`).
pub fn duration_pb(ms: u64) -> prost_types::Duration {
    prost_types::Duration {
        seconds: i64::try_from(ms / 1000).unwrap_or(i64::MAX),
        nanos: i32::try_from(ms % 1000).unwrap_or(0) * 1_000_000,
    }
}

/// The ruleset a request names, checked: [`ruleset_from_pb`], then every option in range and
/// none contradicting another ([`Ruleset::validate`]), the refusal naming its field
/// (`ruleset.overrides.<option>`). Games are created with it; a stored game is replayed with
/// [`ruleset_from_pb`] alone, so a later, stricter check never makes it unreadable.
pub fn checked_ruleset_from_pb(ruleset: Option<&pb::Ruleset>) -> Result<Ruleset, Error> {
    let r = ruleset_from_pb(ruleset)?;
    r.validate()
        .map_err(|e| Error::new(override_field(e.field()), e.to_string()))?;
    Ok(r)
}

/// `ruleset.overrides.<option>` for an option's name.
fn override_field(option: &str) -> &'static str {
    const FIELDS: [(&str, &str); 25] = [
        ("illegal_move", "ruleset.overrides.illegal_move"),
        ("repetition", "ruleset.overrides.repetition"),
        (
            "start_position_counted",
            "ruleset.overrides.start_position_counted",
        ),
        ("declaration", "ruleset.overrides.declaration"),
        (
            "declaration_trigger",
            "ruleset.overrides.declaration_trigger",
        ),
        ("failed_declaration", "ruleset.overrides.failed_declaration"),
        ("jishogi", "ruleset.overrides.jishogi"),
        ("handicap_credit", "ruleset.overrides.handicap_credit"),
        ("try_rule", "ruleset.overrides.try_rule"),
        ("move_cap", "ruleset.overrides.move_cap"),
        ("cap_mode", "ruleset.overrides.cap_mode"),
        ("csa_server_cap", "ruleset.overrides.csa_server_cap"),
        (
            "agreement_threshold",
            "ruleset.overrides.agreement_threshold",
        ),
        ("agreement_tie", "ruleset.overrides.agreement_tie"),
        ("clock_rounding", "ruleset.overrides.clock_rounding"),
        (
            "least_time_per_move",
            "ruleset.overrides.least_time_per_move",
        ),
        ("clock_grace", "ruleset.overrides.clock_grace"),
        ("time_main", "ruleset.overrides.time_main"),
        ("time_main_white", "ruleset.overrides.time_main_white"),
        ("time_byoyomi", "ruleset.overrides.time_byoyomi"),
        ("time_byoyomi_white", "ruleset.overrides.time_byoyomi_white"),
        ("time_periods", "ruleset.overrides.time_periods"),
        ("time_periods_white", "ruleset.overrides.time_periods_white"),
        ("time_increment", "ruleset.overrides.time_increment"),
        (
            "time_increment_white",
            "ruleset.overrides.time_increment_white",
        ),
    ];
    FIELDS
        .iter()
        .find(|(name, _)| *name == option)
        .map_or("ruleset.overrides", |(_, field)| field)
}

/// The ruleset a game is judged by, as a message: the preset it was created with, and every
/// option spelled out in the overrides (what `GetGame` shows), so that a reader needs no
/// knowledge of the presets.
pub fn effective_ruleset_pb(requested: Option<&pb::Ruleset>, r: &Ruleset) -> pb::Ruleset {
    let preset = preset_of(requested).to_owned();
    let illegal_move = match r.illegal_move {
        IllegalMovePolicy::Reject => pb::IllegalMovePolicy::Reject,
        IllegalMovePolicy::Forfeit => pb::IllegalMovePolicy::Forfeit,
    };
    let declaration = match r.declaration {
        None => pb::DeclarationRule::None,
        Some(DeclarationRule::Points27) => pb::DeclarationRule::Points27,
        Some(DeclarationRule::Jsa24) => pb::DeclarationRule::Jsa24,
    };
    let declaration_trigger = match r.declaration_trigger {
        DeclarationTrigger::Explicit => pb::DeclarationTrigger::Explicit,
        DeclarationTrigger::Automatic => pb::DeclarationTrigger::Automatic,
    };
    let failed_declaration = match r.failed_declaration {
        FailedDeclaration::Loss => pb::FailedDeclaration::Loss,
        FailedDeclaration::Refuse => pb::FailedDeclaration::Refuse,
    };
    let cap_mode = match r.cap_mode {
        CapMode::Plain => pb::CapMode::Plain,
        CapMode::Jsa500 => pb::CapMode::Jsa500,
    };
    let agreement_tie = match r.agreement_tie {
        AgreementTie::Jishogi => pb::AgreementTie::Jishogi,
        AgreementTie::WhiteWins => pb::AgreementTie::WhiteWins,
        AgreementTie::BlackWins => pb::AgreementTie::BlackWins,
    };
    let tc = r.time_control;
    pb::Ruleset {
        preset,
        overrides: Some(pb::RulesetOverrides {
            illegal_move: illegal_move as i32,
            repetition: ordinary_pb(Some(r.repetition)),
            start_position_counted: Some(r.start_position_counted),
            declaration: declaration as i32,
            declaration_trigger: declaration_trigger as i32,
            failed_declaration: failed_declaration as i32,
            jishogi: ordinary_pb(Some(r.jishogi)),
            handicap_credit: Some(r.handicap_credit),
            try_rule: Some(r.try_rule),
            move_cap: Some(r.move_cap.unwrap_or(0)),
            cap_mode: cap_mode as i32,
            csa_server_cap: Some(r.csa_server_cap),
            agreement_threshold: Some(r.agreement_threshold),
            agreement_tie: agreement_tie as i32,
            clock_rounding: match r.clock.rounding {
                ChargeRounding::Seconds => pb::ClockRounding::Seconds,
                ChargeRounding::Milliseconds => pb::ClockRounding::Milliseconds,
                ChargeRounding::Minutes => pb::ClockRounding::Minutes,
            } as i32,
            least_time_per_move: Some(duration_pb(r.clock.least_time_per_move_ms)),
            clock_grace: Some(duration_pb(r.clock.grace_ms)),
            time_main: tc.map(|t| duration_pb(t.black.main_ms)),
            time_main_white: tc.map(|t| duration_pb(t.white.main_ms)),
            time_byoyomi: tc.map(|t| duration_pb(t.black.byoyomi_ms)),
            time_byoyomi_white: tc.map(|t| duration_pb(t.white.byoyomi_ms)),
            time_periods: tc.map(|t| t.black.periods),
            time_periods_white: tc.map(|t| t.white.periods),
            time_increment: tc.map(|t| duration_pb(t.black.increment_ms)),
            time_increment_white: tc.map(|t| duration_pb(t.white.increment_ms)),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_ids_are_one_subject_token() {
        for ok in ["g1", "a-b_C", &"x".repeat(64)] {
            assert!(check_game_id("game_id", ok).is_ok(), "{ok}");
        }
        for bad in ["", "a.b", "a*", "a>", "a b", &"x".repeat(65), "é"] {
            assert!(check_game_id("game_id", bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn presets_and_overrides() {
        assert_eq!(ruleset_from_pb(None).unwrap(), Ruleset::jsa());
        let spec = pb::Ruleset {
            preset: "csa".into(),
            overrides: Some(pb::RulesetOverrides {
                move_cap: Some(0),
                illegal_move: pb::IllegalMovePolicy::Reject as i32,
                ..Default::default()
            }),
        };
        let r = ruleset_from_pb(Some(&spec)).unwrap();
        assert_eq!(r.move_cap, None);
        assert_eq!(r.illegal_move, IllegalMovePolicy::Reject);
        let unknown = pb::Ruleset {
            preset: "blitz".into(),
            overrides: None,
        };
        assert_eq!(
            ruleset_from_pb(Some(&unknown)).map_err(|e| e.field),
            Err("ruleset.preset")
        );
    }

    #[test]
    fn the_effective_ruleset_reads_back_as_the_same_ruleset() {
        let seconds = |s: i64| {
            Some(prost_types::Duration {
                seconds: s,
                nanos: 0,
            })
        };
        // Without a clock, and with byoyomi periods and time odds.
        let clocks = [
            None,
            Some(pb::RulesetOverrides {
                time_main: seconds(600),
                time_main_white: seconds(300),
                time_byoyomi: seconds(30),
                time_periods: Some(3),
                time_increment: seconds(0),
                ..Default::default()
            }),
        ];
        for preset in Ruleset::PRESETS {
            for overrides in &clocks {
                let spec = pb::Ruleset {
                    preset: preset.into(),
                    overrides: *overrides,
                };
                let r = ruleset_from_pb(Some(&spec)).unwrap();
                assert_eq!(r.time_control.is_some(), overrides.is_some());
                let effective = effective_ruleset_pb(Some(&spec), &r);
                assert_eq!(ruleset_from_pb(Some(&effective)).unwrap(), r, "{preset}");
                // Every option is spelled out, the clock's too: under another preset the
                // ruleset is the same.
                let under_jsa = pb::Ruleset {
                    preset: "jsa".into(),
                    overrides: effective.overrides,
                };
                assert_eq!(
                    ruleset_from_pb(Some(&under_jsa)).unwrap(),
                    r,
                    "{preset} over jsa"
                );
            }
        }
    }

    #[test]
    fn a_time_finer_than_a_millisecond_or_negative_is_refused_naming_its_field() {
        for (d, field) in [
            (
                prost_types::Duration {
                    seconds: 1,
                    nanos: 500,
                },
                "ruleset.overrides.time_main",
            ),
            (
                prost_types::Duration {
                    seconds: -1,
                    nanos: 0,
                },
                "ruleset.overrides.time_main",
            ),
        ] {
            let spec = pb::Ruleset {
                preset: "online".into(),
                overrides: Some(pb::RulesetOverrides {
                    time_main: Some(d),
                    ..Default::default()
                }),
            };
            assert_eq!(
                ruleset_from_pb(Some(&spec)).map_err(|e| e.field),
                Err(field)
            );
        }
        // Under whole seconds, a main time of 1.5 s is refused by the check.
        let spec = pb::Ruleset {
            preset: "csa".into(),
            overrides: Some(pb::RulesetOverrides {
                time_main: Some(prost_types::Duration {
                    seconds: 1,
                    nanos: 500_000_000,
                }),
                ..Default::default()
            }),
        };
        assert_eq!(
            checked_ruleset_from_pb(Some(&spec)).map_err(|e| e.field),
            Err("ruleset.overrides.time_main")
        );
    }

    #[test]
    fn out_of_range_and_contradicting_options_name_their_field() {
        let cases = [
            (
                pb::RulesetOverrides {
                    agreement_threshold: Some(5),
                    ..Default::default()
                },
                "ruleset.overrides.agreement_threshold",
            ),
            (
                pb::RulesetOverrides {
                    agreement_threshold: Some(4_000_000_000),
                    ..Default::default()
                },
                "ruleset.overrides.agreement_threshold",
            ),
            (
                pb::RulesetOverrides {
                    declaration: pb::DeclarationRule::None as i32,
                    declaration_trigger: pb::DeclarationTrigger::Automatic as i32,
                    ..Default::default()
                },
                "ruleset.overrides.declaration_trigger",
            ),
        ];
        for (overrides, field) in cases {
            let spec = pb::Ruleset {
                preset: "online".into(),
                overrides: Some(overrides),
            };
            assert!(ruleset_from_pb(Some(&spec)).is_ok(), "read back as stored");
            assert_eq!(
                checked_ruleset_from_pb(Some(&spec)).map_err(|e| e.field),
                Err(field)
            );
        }
        for preset in Ruleset::PRESETS {
            let spec = pb::Ruleset {
                preset: preset.into(),
                overrides: None,
            };
            assert!(checked_ruleset_from_pb(Some(&spec)).is_ok(), "{preset}");
        }
    }

    #[test]
    fn every_result_code_round_trips() {
        for code in ResultCode::ALL {
            assert_eq!(result_code_from_pb(result_code_pb(code)), Some(code));
        }
    }
}
