//! Rulesets: every option of RULES.md as a field, and the named presets.
//!
//! Where the authorities disagree, RULES.md makes the disagreement an option rather than a
//! hard-coded choice; this module is where those options live.

/// What happens to an illegal move (反則), RULES.md section 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IllegalMovePolicy {
    /// The move is refused with its reason and the game goes on (online platforms, Lishogi's
    /// API).
    Reject,
    /// The move is recorded and the mover loses at once (JSA over-the-board play; the CSA
    /// shogi-server writes `#ILLEGAL_MOVE`).
    Forfeit,
}

/// The result of a game that ends without a winner: an ordinary fourfold repetition
/// (RULES.md section 3) or a jishogi (持将棋, section 4 and 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OrdinaryResult {
    /// A draw (online services, the CSA shogi-server).
    Draw,
    /// No result: the game is replayed with colours swapped (指し直し, JSA).
    Replay,
}

impl OrdinaryResult {
    /// `draw` or `replay`.
    pub const fn as_str(self) -> &'static str {
        match self {
            OrdinaryResult::Draw => "draw",
            OrdinaryResult::Replay => "replay",
        }
    }
}

/// How the points of a declaration (入玉宣言) are judged, RULES.md section 4 point 6.
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
    /// `points27` or `jsa24`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeclarationRule::Points27 => "points27",
            DeclarationRule::Jsa24 => "jsa24",
        }
    }
}

/// When a declaration is judged, RULES.md section 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclarationTrigger {
    /// Only on request (CSA `%KACHI`, USI `bestmove win`, JSA).
    Explicit,
    /// The win is awarded as soon as the side to move meets the conditions, without a request
    /// (Shogi Wars, Lishogi).
    Automatic,
}

/// What a declaration that does not qualify does, RULES.md section 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FailedDeclaration {
    /// The declarer loses (JSA, CSA, 81Dojo, Shogi Wars).
    Loss,
    /// The declaration is refused and play goes on (some apps).
    Refuse,
}

/// How a move cap ends the game, RULES.md section 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CapMode {
    /// The game is a draw (`#MAX_MOVES`) when ply N+1 would be due.
    Plain,
    /// The JSA 500-move rule: jishogi after ply N unless that ply gave check; while the checks go
    /// on play continues, and it ends as jishogi at the first ply p > N where neither ply p nor
    /// ply p-1 gave check.
    Jsa500,
}

/// Who wins an agreement count where both sides reach the threshold (RULES.md section 4,
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

/// Every option of RULES.md, as plain public fields: start from a preset and override any
/// field with struct update syntax (`Ruleset { move_cap: Some(320), ..Ruleset::csa() }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ruleset {
    /// Reject or forfeit an illegal move (RULES.md section 1).
    pub illegal_move: IllegalMovePolicy,
    /// The result of an ordinary fourfold repetition, and of a mutual perpetual check
    /// (RULES.md section 3).
    pub repetition: OrdinaryResult,
    /// Whether the game's start position counts as occurrence 1 (RULES.md section 2: JSA,
    /// Lishogi, YaneuraOu, tsshogi). `false` reproduces the CSA shogi-server, which does not
    /// count it and so can end a game four plies later.
    pub start_position_counted: bool,
    /// The declaration rule, or `None` when declarations are not allowed (RULES.md section 4).
    pub declaration: Option<DeclarationRule>,
    /// Whether a declaration needs a request (RULES.md section 4).
    pub declaration_trigger: DeclarationTrigger,
    /// Whether a declaration that does not qualify loses or is refused (RULES.md section 4).
    pub failed_declaration: FailedDeclaration,
    /// The result of a jishogi: a [`DeclarationRule::Jsa24`] declaration with 24..=30 points, a
    /// [`CapMode::Jsa500`] cap, and an agreement count that ends in [`AgreementTie::Jishogi`]
    /// (RULES.md sections 4 and 5; the JSA replays).
    pub jishogi: OrdinaryResult,
    /// Whether the handicap giver (White) is credited with the pieces missing at the start
    /// (RULES.md section 4: "the dropped pieces are assumed to be with uwate", JSA). Only a
    /// handicap start has a giver ([`crate::impasse::is_handicap_start`]).
    pub handicap_credit: bool,
    /// Whether the try rule (トライルール) is in force (RULES.md section 4).
    pub try_rule: bool,
    /// The move cap N in plies, or `None` (RULES.md section 5: CSA 256, 320 or 512; JSA 500;
    /// Lishogi 700).
    pub move_cap: Option<u32>,
    /// How the cap ends the game (RULES.md section 5).
    pub cap_mode: CapMode,
    /// Reproduce the CSA shogi-server's early cap (RULES.md section 5: "the CSA shogi-server
    /// gets this wrong"): the game ends with `#MAX_MOVES` as soon as ply N is played, even when
    /// ply N mated, instead of only when ply N+1 would be due. Only [`CapMode::Plain`] uses it.
    pub csa_server_cap: bool,
    /// The agreement-counting threshold: 24 (JSA) or 27 (amateur events), RULES.md section 4.
    pub agreement_threshold: u32,
    /// The agreement-counting result when both sides reach the threshold, RULES.md section 4.
    pub agreement_tie: AgreementTie,
}

impl Ruleset {
    /// The names [`Ruleset::preset`] accepts.
    pub const PRESETS: [&'static str; 5] = ["jsa", "amateur", "csa", "online", "floodgate"];

    /// JSA professional play.
    ///
    /// Illegal moves forfeit (over-the-board 反則負け); repetition and jishogi are replayed
    /// (指し直し); the 24-point declaration on request (JSA rule since 2013, amended 2019),
    /// where a failed declaration loses; handicap credit for the giver; the 500-move cap with its
    /// check extension (RULES.md section 5, `jsa500`); agreement counting at 24 with jishogi
    /// when both sides reach it. The start position counts (RULES.md section 2).
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
        }
    }

    /// JSA amateur events.
    ///
    /// Illegal moves forfeit as over the board; repetition is replayed; the 27-point
    /// declaration on request (RULES.md section 4 lists JSA amateur events under `points27`),
    /// losing when it fails; handicap credit; no move cap (amateur events play to a result on
    /// the clock); agreement counting at 27 with White winning a 27-27 tie, "the common form".
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
        }
    }

    /// CSA computer-shogi tournaments (WCSC), as the CSA rules state them.
    ///
    /// Illegal moves forfeit (`#ILLEGAL_MOVE`); repetition is a draw (`#SENNICHITE`); the
    /// 27-point declaration by `%KACHI`, losing when it fails; a 256-ply plain cap that ends the
    /// game only when ply 257 would be due (CSA tournament rule 23-1). The start position counts:
    /// that is the rule; [`Ruleset::floodgate`] reproduces the server's own bookkeeping.
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
        }
    }

    /// Online play (Lishogi, Shogi Wars style).
    ///
    /// Illegal moves are rejected (Lishogi's API); repetition is a draw; the 27-point
    /// declaration is awarded automatically (Shogi Wars, Lishogi), and an explicit declaration
    /// that does not qualify is refused rather than lost, as apps do; no move cap.
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
        }
    }

    /// The CSA shogi-server as floodgate runs it: [`Ruleset::csa`] with the server's two
    /// deviations reproduced, for re-judging floodgate records exactly as they were judged
    /// (RULES.md sections 2 and 5): the start position is not counted, and the cap fires as
    /// soon as ply 256 is played.
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

impl Default for Ruleset {
    /// The JSA professional rules ([`Ruleset::jsa`]), the authority RULES.md defers to first.
    fn default() -> Ruleset {
        Ruleset::jsa()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
