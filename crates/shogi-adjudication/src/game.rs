//! A game under a ruleset: the start position, the moves, and the judgement after each ply in
//! the order of docs/rules.md section 6.

use crate::clock::{Charge, Clock, TimeUp};
use crate::impasse::{AgreementReport, agreement_count, handicap_credit};
use crate::impasse::{
    DeclarationContext, DeclarationOutcome, DeclarationReport, judge_declaration, try_square,
};
use crate::repetition::{Fourfold, History, RepetitionKind};
use crate::ruleset::{CapMode, DeclarationTrigger, IllegalMovePolicy, OrdinaryResult, Ruleset};
use crate::verdict::{Abandoned, Evidence, ResultCode, Verdict};
use shogi_rules::{Color, IllegalMove, Move, PieceKind, Position, Square};

/// Why a game refused an action. A verdict is never an error: a forfeited illegal move or a lost
/// declaration comes back as `Ok` with its [`Verdict`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// Any move or declaration after the game has ended (`game_over`, docs/rules.md section 1).
    #[error("the game is over")]
    GameOver,
    /// An illegal move refused under [`IllegalMovePolicy::Reject`], with its kind
    /// (`wrong_turn` for a move by the side not to move).
    #[error("{0}")]
    Illegal(IllegalMove),
    /// A declaration under a ruleset that has no declaration rule.
    #[error("declarations are not allowed by this ruleset")]
    NoDeclarationRule,
}

/// Why a game cannot be ended as abandoned ([`Game::abandon`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AbandonError {
    /// It has ended already.
    #[error("the game is over")]
    GameOver,
    /// It has not gone its limit without an entry.
    #[error(
        "the game is not abandoned: {idle_ms} ms since its last entry, below the limit of {limit_ms} ms"
    )]
    TooSoon {
        /// The time since the last entry.
        idle_ms: u64,
        /// The limit.
        limit_ms: u64,
    },
}

/// Early warnings, issued after a ply that did not end the game. They are judged on the hashes
/// alone: only a verdict waits for the full positions to be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Warning {
    /// The position after `ply` occurred for the 3rd time; one more occurrence ends the game
    /// (docs/rules.md section 3). `plies` are the three occurrences.
    ThirdOccurrence {
        /// The ply just played.
        ply: u32,
        /// The plies of the three occurrences, ascending.
        plies: [u32; 3],
    },
    /// `checker` has checked on every one of its moves since the first of three occurrences of
    /// the current position, so if it occurs once more `checker` loses by perpetual check
    /// (docs/rules.md section 3).
    PerpetualCheckRisk {
        /// The ply just played.
        ply: u32,
        /// The side that would lose.
        checker: Color,
        /// The ply of the first occurrence (F).
        since_ply: u32,
    },
}

/// What a ply did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlyOutcome {
    /// The ply number (1 for the first move of the game).
    pub ply: u32,
    /// Whether the move gave check (`false` for a forfeited illegal move).
    pub gave_check: bool,
    /// The verdict, if the ply ended the game.
    pub verdict: Option<Verdict>,
    /// Early warnings (repetition), if the game goes on.
    pub warnings: Vec<Warning>,
    /// What the game's clock charged the move ([`Game::play_at`]); `None` without a clock, and
    /// for a move that was not played.
    pub charge: Option<Charge>,
}

/// What a declaration did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// The calculator's report: every condition with its value.
    pub report: DeclarationReport,
    /// The verdict, or `None` when the declaration was refused
    /// ([`crate::FailedDeclaration::Refuse`]) and play goes on.
    pub verdict: Option<Verdict>,
}

/// A game: its start position, its ruleset and its moves, judged ply by ply.
///
/// Per ply it keeps only what judgement needs ([`History`]: the 64-bit position hash, and the
/// move as [`Move::to_u16`] with the gave-check flag in its free bit, ten bytes), plus the
/// current [`Position`]. Earlier positions are rebuilt by replaying from the start only to
/// confirm a fourth occurrence the hashes announce (docs/rules.md section 2), which ends the game
/// unless the hashes collided, so it happens about once per game at most.
#[derive(Debug, Clone)]
pub struct Game {
    ruleset: Ruleset,
    /// The start position, kept only when it is not the even-game start: most games start there,
    /// and a second inline position would take a game past 2 KB at 100 plies.
    start: Option<Box<Position>>,
    position: Position,
    history: History,
    /// Which positions may have occurred already, by their hashes' top bits
    /// ([`SeenFilter`]): most plies reach a position that has not, and skip the repetition
    /// scan over the whole history.
    seen: SeenFilter,
    credit: u32,
    /// Boxed: a verdict comes once a game, and a live game should stay small.
    verdict: Option<Box<Verdict>>,
    /// The clock, once started ([`Game::start_clock`]); boxed as the verdict is, since most
    /// games judged (records, archives) have none.
    clock: Option<Box<Clock>>,
}

impl Game {
    /// A game from `start` under `ruleset`. A start position with no legal move is already
    /// decided (the side to move loses, at ply 0), and so is one where an automatic
    /// declaration applies.
    pub fn new(start: Position, ruleset: Ruleset) -> Game {
        let credit = if ruleset.handicap_credit {
            handicap_credit(&start)
        } else {
            0
        };
        let history = History::new(start.side_to_move(), start.hash(), start.in_check());
        let mut seen = SeenFilter::default();
        seen.insert(start.hash());
        let mut game = Game {
            ruleset,
            position: start.clone(),
            start: (start != *even_start()).then(|| Box::new(start)),
            history,
            seen,
            credit,
            verdict: None,
            clock: None,
        };
        let verdict = game
            .judge_no_legal_reply(None)
            .or_else(|| game.judge_automatic_declaration());
        game.verdict = verdict.map(Box::new);
        game
    }

    /// A game from the even-game start position.
    pub fn startpos(ruleset: Ruleset) -> Game {
        Game::new(Position::startpos(), ruleset)
    }

    /// Makes room in the history for `plies` more plies at once ([`History::reserve`]), for
    /// a caller that knows how many moves are coming.
    pub fn reserve(&mut self, plies: usize) {
        self.history.reserve(plies);
    }

    /// The ruleset.
    pub fn ruleset(&self) -> &Ruleset {
        &self.ruleset
    }

    /// The start position.
    pub fn start_position(&self) -> &Position {
        self.start.as_deref().unwrap_or_else(|| even_start())
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The side to move.
    pub fn side_to_move(&self) -> Color {
        self.position.side_to_move()
    }

    /// Plies played (legal moves; a forfeited illegal move is not played).
    pub fn plies(&self) -> u32 {
        self.history.plies()
    }

    /// The moves played, in order.
    pub fn moves(&self) -> impl ExactSizeIterator<Item = Move> + '_ {
        (1..self.plies() + 1).map(|p| self.history.move_at(p).expect("every ply has its move"))
    }

    /// Whether ply `ply` gave check (ply 0: whether the game started in check).
    pub fn gave_check(&self, ply: u32) -> Option<bool> {
        (ply <= self.plies()).then(|| self.history.gave_check(ply))
    }

    /// The compact history the repetition rule reads (docs/rules.md sections 2 and 3).
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The handicap credit given to White (docs/rules.md section 4): 0 when the ruleset has it off
    /// or the start is not a handicap start ([`crate::impasse::is_handicap_start`]).
    pub fn handicap_credit(&self) -> u32 {
        self.credit
    }

    /// The verdict, once the game has ended.
    pub fn verdict(&self) -> Option<&Verdict> {
        self.verdict.as_deref()
    }

    /// Whether the game has ended.
    pub fn is_over(&self) -> bool {
        self.verdict.is_some()
    }

    /// The position after `ply`, replayed from the start.
    pub fn position_at(&self, ply: u32) -> Option<Position> {
        if ply > self.plies() {
            return None;
        }
        let mut pos = self.start_position().clone();
        for mv in self.moves().take(ply as usize) {
            pos.play_unchecked(mv);
        }
        Some(pos)
    }

    /// Plays `mv` for the side to move and judges the result (docs/rules.md section 6).
    pub fn play(&mut self, mv: Move) -> Result<PlyOutcome, GameError> {
        self.play_as(self.position.side_to_move(), mv)
    }

    /// Plays `mv` as `mover`; a move by the side not to move is illegal (`wrong_turn`).
    ///
    /// In the order of docs/rules.md section 6: legality (an illegal move is refused under
    /// [`IllegalMovePolicy::Reject`], and loses under [`IllegalMovePolicy::Forfeit`]); the try
    /// rule; no legal reply (the mover wins: checkmate if in check, `no_legal_moves`
    /// otherwise); fourfold repetition and perpetual check; the move cap; an automatic
    /// declaration for the side now to move.
    pub fn play_as(&mut self, mover: Color, mv: Move) -> Result<PlyOutcome, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        let ply = self.plies() + 1;
        if let Err(illegal) = self.position.check_move_as(mover, mv) {
            return match self.ruleset.illegal_move {
                IllegalMovePolicy::Reject => Err(GameError::Illegal(illegal)),
                IllegalMovePolicy::Forfeit => {
                    let verdict = Verdict {
                        code: ResultCode::IllegalMove,
                        winner: Some(!mover),
                        ply,
                        ordinary_result: None,
                        evidence: Evidence::IllegalMove {
                            kind: illegal.kind,
                            mv,
                        },
                    };
                    self.verdict = Some(Box::new(verdict.clone()));
                    Ok(PlyOutcome {
                        ply,
                        gave_check: false,
                        verdict: Some(verdict),
                        warnings: Vec::new(),
                        charge: None,
                    })
                }
            };
        }
        Ok(self.play_legal(mover, mv, None))
    }

    /// Plays `mv`, which the caller has already found legal for the side to move with
    /// [`Position::check_move`] in [`Game::position`] (a record reader that replays every move
    /// as it reads it), without checking it again; otherwise as [`Game::play`]. An illegal move
    /// here leaves the game in an unspecified (but memory-safe) state; debug builds panic.
    pub fn play_checked(&mut self, mv: Move) -> Result<PlyOutcome, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        debug_assert_eq!(
            self.position.check_move(mv),
            Ok(()),
            "play_checked with a move that is not legal"
        );
        Ok(self.play_legal(self.position.side_to_move(), mv, None))
    }

    /// [`Game::play_checked`] for a caller that also knows `reply` to be legal for the side to
    /// move in the position `mv` leads to (a record reader has checked the record's next move
    /// there too): that side has a legal move, so the no-legal-reply test (docs/rules.md
    /// section 1), which was a third of judging an archive, is skipped. The outcome is
    /// [`Game::play_checked`]'s whenever the caller's claims hold (debug builds check both).
    pub fn play_checked_with_reply(
        &mut self,
        mv: Move,
        reply: Move,
    ) -> Result<PlyOutcome, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        debug_assert_eq!(
            self.position.check_move(mv),
            Ok(()),
            "play_checked_with_reply with a move that is not legal"
        );
        Ok(self.play_legal(self.position.side_to_move(), mv, Some(reply)))
    }

    /// Plays the legal move `mv` by `mover` and judges the position it leads to; `reply`, when
    /// given, is a move known to be legal there.
    fn play_legal(&mut self, mover: Color, mv: Move, reply: Option<Move>) -> PlyOutcome {
        let king_move = mv.from().is_some() && mv.from() == self.position.king_square(mover);
        self.position.play_unchecked(mv);
        let gave_check = self.position.in_check();
        let hash = self.position.hash();
        let judged = Judged {
            king_move,
            reply,
            lagging: false,
        };
        let mut warnings = Vec::new();
        let verdict = self
            .record_ply(mover, mv, hash, gave_check, judged, &mut warnings)
            .then(|| self.verdict.as_deref().cloned())
            .flatten();
        PlyOutcome {
            ply: self.plies(),
            gave_check,
            verdict,
            warnings,
            charge: None,
        }
    }

    /// For [`crate::judge_replayed`]: plays `mv`, which the caller has played already from this
    /// game's position, reaching a position of hash `hash` where the side to move is in check
    /// exactly when `gave_check`, and judges that position, without playing the move on the
    /// game's own position. Either `reply` is a move the caller has found legal in the position
    /// reached (its next one), or `end` is that position (for the caller's last such move):
    /// until `end` the game's position stays behind the history, and the caller must not read
    /// it; so that nothing needs it, the ruleset has neither the try rule nor automatic
    /// declarations, and the reply spares the no-legal-reply test. Debug builds play every
    /// move and check all of this.
    ///
    /// The ply's warnings are appended to `warnings`; `Ok(true)` when the ply ended the game.
    /// Judging a whole record, this spares a [`PlyOutcome`] a ply.
    pub(crate) fn play_replayed(
        &mut self,
        mv: Move,
        hash: u64,
        gave_check: bool,
        reply: Option<Move>,
        end: Option<&Position>,
        warnings: &mut Vec<Warning>,
    ) -> Result<bool, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        debug_assert!(reply.is_some() != end.is_some(), "a reply or the end");
        debug_assert!(
            !self.ruleset.try_rule
                && self.ruleset.declaration_trigger != DeclarationTrigger::Automatic,
            "play_replayed under a ruleset that reads the position after every ply"
        );
        let mover = self.history.mover_of_ply(self.plies() + 1);
        if cfg!(debug_assertions) {
            // Checked on a position replayed from the start, so that the game's own position
            // lags behind as it does in a release build (quadratic, in debug builds only).
            let mut pos = self.position_at(self.plies()).expect("the current ply");
            assert_eq!(
                pos.side_to_move(),
                mover,
                "a replayed move by the side to move"
            );
            assert_eq!(pos.check_move(mv), Ok(()), "a replayed move is legal");
            pos.play_unchecked(mv);
            assert_eq!((pos.hash(), pos.in_check()), (hash, gave_check), "{mv}");
            if let Some(end) = end {
                assert!(pos.same_position(end), "the end is the position reached");
            }
            if let Some(reply) = reply {
                assert_eq!(
                    pos.check_move(reply),
                    Ok(()),
                    "a reply said to be legal is not"
                );
            }
        }
        if let Some(end) = end {
            self.position = end.clone();
        }
        let judged = Judged {
            king_move: false,
            reply,
            lagging: end.is_none(),
        };
        Ok(self.record_ply(mover, mv, hash, gave_check, judged, warnings))
    }

    /// Records a ply played, reaching a position of hash `hash`, and judges that position:
    /// its warnings are appended to `warnings` unless it ends the game, which the answer says.
    fn record_ply(
        &mut self,
        mover: Color,
        mv: Move,
        hash: u64,
        gave_check: bool,
        judged: Judged,
        warnings: &mut Vec<Warning>,
    ) -> bool {
        self.history.push(mv, hash, gave_check);
        let maybe_seen = self.seen.insert(hash);
        let before = warnings.len();
        let verdict = self.judge_after(mover, mv, maybe_seen, judged, warnings);
        if verdict.is_some() {
            warnings.truncate(before);
        }
        self.verdict = verdict.map(Box::new);
        self.verdict.is_some()
    }

    fn judge_after(
        &mut self,
        mover: Color,
        mv: Move,
        maybe_seen: bool,
        judged: Judged,
        warnings: &mut Vec<Warning>,
    ) -> Option<Verdict> {
        let Judged {
            king_move,
            reply,
            lagging,
        } = judged;
        let ply = self.plies();
        // 2. The try rule. Legality already keeps an own piece off the square and the king
        // out of check there; the attack test after the move repeats the rule's own words.
        if self.ruleset.try_rule
            && king_move
            && mv.to() == try_square(mover)
            && !self.position.is_attacked(mv.to(), !mover)
        {
            return Some(Verdict {
                code: ResultCode::TryRule,
                winner: Some(mover),
                ply,
                ordinary_result: None,
                evidence: Evidence::TryRule { mv },
            });
        }
        // 4 before 3: a position with no legal move ends the game at its first occurrence, so
        // it is never a 4th occurrence, and the repetition scan is the cheaper test.
        if maybe_seen && let Some(v) = self.judge_repetition(warnings, lagging) {
            return Some(v);
        }
        // The CSA shogi-server's early cap fires before it would see a mate.
        if self.ruleset.csa_server_cap
            && self.ruleset.cap_mode == CapMode::Plain
            && self.ruleset.move_cap.is_some_and(|n| ply >= n)
        {
            return self.judge_cap();
        }
        // 3. No legal reply, unless the caller knows one.
        match reply {
            // A lagging position is not the one the reply is for (`play_replayed` checks it).
            Some(reply) => debug_assert!(
                lagging || self.position.check_move(reply).is_ok(),
                "a reply said to be legal is not"
            ),
            None => {
                if let Some(v) = self.judge_no_legal_reply(Some(mv)) {
                    return Some(v);
                }
            }
        }
        // 5. The move cap.
        if let Some(v) = self.judge_cap() {
            return Some(v);
        }
        // 6. Automatic declaration.
        self.judge_automatic_declaration()
    }

    /// docs/rules.md section 1: a position with no legal move loses for the side to move.
    fn judge_no_legal_reply(&self, mv: Option<Move>) -> Option<Verdict> {
        let ply = self.plies();
        // The history holds whether the side to move is in check: the position works it out
        // from the last move again at each call, and this runs after every ply.
        let in_check = self.history.gave_check(ply);
        debug_assert_eq!(in_check, self.position.in_check());
        if has_legal_move(&self.position, in_check) {
            return None;
        }
        let (code, evidence) = if in_check {
            (
                ResultCode::Checkmate,
                Evidence::Checkmate {
                    mating_ply: ply,
                    mating_move: mv,
                },
            )
        } else {
            (ResultCode::NoLegalMoves, Evidence::NoLegalMoves)
        };
        Some(Verdict {
            code,
            winner: Some(!self.position.side_to_move()),
            ply,
            ordinary_result: None,
            evidence,
        })
    }

    /// docs/rules.md section 3, with the exact confirmation of section 2. `lagging`: the game's
    /// position is behind its history ([`Game::play_replayed`]).
    fn judge_repetition(&self, warnings: &mut Vec<Warning>, lagging: bool) -> Option<Verdict> {
        let counted = self.ruleset.start_position_counted;
        let mut earlier = self.history.earlier_occurrences(counted);
        if earlier.len() < 2 {
            return None;
        }
        let ply = self.plies();
        if earlier.len() >= 3 {
            earlier = self.exact_matches(&earlier, lagging);
        }
        if earlier.len() >= 3 {
            let plies = [earlier[0], earlier[1], earlier[2], ply];
            let kind = self.history.classify(plies[0], ply);
            return Some(Fourfold { plies, kind }.verdict(&self.history, self.ruleset.repetition));
        }
        if earlier.len() == 2 {
            let plies = [earlier[0], earlier[1], ply];
            warnings.push(Warning::ThirdOccurrence { ply, plies });
            if let RepetitionKind::Perpetual { checker } = self.history.classify(plies[0], ply) {
                warnings.push(Warning::PerpetualCheckRisk {
                    ply,
                    checker,
                    since_ply: plies[0],
                });
            }
        }
        None
    }

    /// The candidate plies whose position is exactly the current one (docs/rules.md section 2: a
    /// match is confirmed by comparing the full positions before any verdict). `lagging`: the
    /// game's position is behind its history, and the current one is replayed from the start
    /// (a fourth occurrence announced by the hashes ends the game, so this is rare).
    fn exact_matches(&self, candidates: &[u32], lagging: bool) -> Vec<u32> {
        let replayed;
        let current = if lagging {
            replayed = self.position_at(self.plies()).expect("the current ply");
            &replayed
        } else {
            &self.position
        };
        let mut out = Vec::with_capacity(candidates.len());
        let mut pos = self.start_position().clone();
        let mut ply = 0u32;
        for &c in candidates {
            while ply < c {
                ply += 1;
                pos.play_unchecked(self.history.move_at(ply).expect("every ply has its move"));
            }
            if pos.same_position(current) {
                out.push(c);
            }
        }
        out
    }

    /// docs/rules.md section 5.
    fn judge_cap(&self) -> Option<Verdict> {
        let cap = self.ruleset.move_cap?;
        let ply = self.plies();
        let extended_by_checks = match self.ruleset.cap_mode {
            CapMode::Plain if ply >= cap => false,
            CapMode::Plain => return None,
            CapMode::Jsa500 if ply < cap => return None,
            CapMode::Jsa500 => {
                let this = self.history.gave_check(ply);
                let previous = ply > cap && self.history.gave_check(ply - 1);
                if this || previous {
                    return None;
                }
                ply > cap
            }
        };
        let ordinary = match self.ruleset.cap_mode {
            CapMode::Plain => OrdinaryResult::Draw,
            CapMode::Jsa500 => self.ruleset.jishogi,
        };
        Some(Verdict {
            code: ResultCode::MaxMoves,
            winner: None,
            ply,
            ordinary_result: Some(ordinary),
            evidence: Evidence::MaxMoves {
                cap,
                extended_by_checks,
            },
        })
    }

    /// docs/rules.md section 4, the `automatic` trigger: only a win is awarded, and the clock is
    /// assumed to have time (the platform ends a game on time itself).
    #[inline]
    fn judge_automatic_declaration(&self) -> Option<Verdict> {
        if self.ruleset.declaration_trigger != DeclarationTrigger::Automatic {
            return None;
        }
        self.judge_automatic_declaration_now()
    }

    #[inline(never)]
    fn judge_automatic_declaration_now(&self) -> Option<Verdict> {
        let side = self.position.side_to_move();
        // Most positions fail here; the full count is for the few that do not.
        match self.position.king_square(side) {
            Some(king) if crate::impasse::in_camp(king, side) => {}
            _ => return None,
        }
        let report = self.declaration_report(side, true)?;
        (report.outcome == DeclarationOutcome::Win).then(|| self.declaration_verdict(report))
    }

    fn before_move_cap(&self) -> bool {
        match (self.ruleset.move_cap, self.ruleset.cap_mode) {
            (Some(cap), CapMode::Jsa500) => self.plies() < cap,
            _ => true,
        }
    }

    /// The declaration calculator in this game's context, without declaring: `None` when the
    /// ruleset has no declaration rule (docs/rules.md section 4).
    pub fn declaration_report(&self, declarer: Color, has_time: bool) -> Option<DeclarationReport> {
        let rule = self.ruleset.declaration?;
        let ctx = DeclarationContext {
            declarer,
            has_time,
            game_over: self.verdict.is_some(),
            before_move_cap: self.before_move_cap(),
            handicap_credit: self.credit,
            failed: self.ruleset.failed_declaration,
        };
        Some(judge_declaration(&self.position, rule, &ctx))
    }

    fn declaration_verdict(&self, report: DeclarationReport) -> Verdict {
        let (winner, ordinary_result) = match report.outcome {
            DeclarationOutcome::Win => (Some(report.declarer), None),
            DeclarationOutcome::Loss | DeclarationOutcome::Refused => {
                (Some(!report.declarer), None)
            }
            DeclarationOutcome::Jishogi => (None, Some(self.ruleset.jishogi)),
        };
        Verdict {
            code: ResultCode::Declaration,
            winner,
            ply: self.plies(),
            ordinary_result,
            evidence: Evidence::Declaration(Box::new(report)),
        }
    }

    /// `declarer` declares impasse (入玉宣言) with `has_time` saying whether its clock has time
    /// left (docs/rules.md section 4). A declaration that fails a condition, including one made on
    /// the opponent's turn, loses or is refused per [`Ruleset::failed_declaration`].
    pub fn declare(&mut self, declarer: Color, has_time: bool) -> Result<Declared, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        let report = self
            .declaration_report(declarer, has_time)
            .ok_or(GameError::NoDeclarationRule)?;
        let verdict = (report.outcome != DeclarationOutcome::Refused)
            .then(|| self.declaration_verdict(report));
        self.verdict = verdict.clone().map(Box::new);
        Ok(Declared { report, verdict })
    }

    /// The agreement count of the current position under the ruleset's threshold and tie rule,
    /// White credited per [`Ruleset::handicap_credit`] (docs/rules.md section 4). The arbiter only
    /// offers the count; agreement comes from the players ([`Game::record_result`]).
    pub fn agreement_count(&self) -> AgreementReport {
        let initial = self.ruleset.handicap_credit.then(|| self.start_position());
        agreement_count(
            &self.position,
            initial,
            self.ruleset.agreement_threshold,
            self.ruleset.agreement_tie,
        )
    }

    /// Ends the game with a result the platform reports (resignation, timeout, abort,
    /// agreement), at the current ply.
    pub fn record_result(
        &mut self,
        code: ResultCode,
        winner: Option<Color>,
        ordinary_result: Option<OrdinaryResult>,
    ) -> Result<&Verdict, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        Ok(self.verdict.insert(Box::new(Verdict::reported(
            code,
            winner,
            self.plies(),
            ordinary_result,
        ))))
    }

    /// Ends the game as abandoned (`abort`, no winner, docs/rules.md section 10): nobody played
    /// it for `evidence.limit_ms`, as its evidence shows; refused when it did not go that long.
    pub fn abandon(&mut self, evidence: Abandoned) -> Result<&Verdict, AbandonError> {
        if self.verdict.is_some() {
            return Err(AbandonError::GameOver);
        }
        if !evidence.holds() {
            return Err(AbandonError::TooSoon {
                idle_ms: evidence.at_ms.saturating_sub(evidence.last_activity_ms),
                limit_ms: evidence.limit_ms,
            });
        }
        Ok(self.verdict.insert(Box::new(Verdict {
            code: ResultCode::Abort,
            winner: None,
            ply: self.plies(),
            ordinary_result: None,
            evidence: Evidence::Abandoned(evidence),
        })))
    }
}

/// The clock (docs/rules.md section 9): the same actions with the time each call was received,
/// so that a late call ends the game by time for the late side, instead of by the call.
///
/// Every time is a `u64` of milliseconds on the arbiter's clock, given by the caller (the
/// receipt times the game log records); the game reads no system time. Each timed call first
/// asks whether the side to move was out of time when it came: if so the game ends on time
/// (`timeout`, the late side loses, [`Evidence::TimeUp`]) whoever made the call, since that
/// side's time ran out before it. Without a started clock each behaves as its untimed form.
impl Game {
    /// Starts the clock at `started_ms`, for the side to move, from the ruleset's time control
    /// and clock rules. `None`, and nothing changes, when the ruleset has no time control, the
    /// clock has started already or the game is over.
    pub fn start_clock(&mut self, started_ms: u64) -> Option<&Clock> {
        let control = self.ruleset.time_control?;
        if self.clock.is_some() || self.verdict.is_some() {
            return None;
        }
        let clock = Clock::new(self.ruleset.clock, control, self.side_to_move(), started_ms);
        Some(self.clock.insert(Box::new(clock)))
    }

    /// The clock, once started.
    pub fn clock(&self) -> Option<&Clock> {
        self.clock.as_deref()
    }

    /// [`Game::play`] for a move received at `received_ms`.
    pub fn play_at(&mut self, mv: Move, received_ms: u64) -> Result<PlyOutcome, GameError> {
        self.play_as_at(self.position.side_to_move(), mv, received_ms)
    }

    /// [`Game::play_as`] for a move received at `received_ms`.
    ///
    /// A move received at or after the side to move's deadline is not played: the game ends on
    /// time, with that side losing, at the plies played ([`Game::plies`], as a reported
    /// timeout), and the outcome is for the ply the move was meant for, with no check and no
    /// charge. A move in time that is played is charged ([`PlyOutcome::charge`]) and starts
    /// the opponent's turn; an illegal one is refused or forfeited as [`Game::play_as`] does,
    /// and charges nothing, so a refused move's time runs on.
    pub fn play_as_at(
        &mut self,
        mover: Color,
        mv: Move,
        received_ms: u64,
    ) -> Result<PlyOutcome, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        if let Some(verdict) = self.time_up_at(received_ms) {
            return Ok(self.late_ply(verdict));
        }
        if self.clock.is_none() || self.position.check_move_as(mover, mv).is_err() {
            return self.play_as(mover, mv);
        }
        let charged = self.clock.as_deref_mut().map(|c| c.charge(received_ms));
        let charge = match charged.transpose() {
            Ok(charge) => charge,
            Err(up) => {
                let verdict = self.end_by_time(up);
                return Ok(self.late_ply(verdict));
            }
        };
        let mut outcome = self.play_legal(mover, mv, None);
        outcome.charge = charge;
        Ok(outcome)
    }

    /// [`Game::declare`] for a declaration received at `received_ms`, condition 5 (time left,
    /// docs/rules.md section 4) decided by the clock: the declarer has time unless the
    /// declaration is late, and a late declaration ends the game on time, the report showing
    /// condition 5 failed. Without a clock the declarer has time.
    pub fn declare_at(&mut self, declarer: Color, received_ms: u64) -> Result<Declared, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        let Some(up) = self.clock.as_deref().and_then(|c| c.flag(received_ms)) else {
            return self.declare(declarer, true);
        };
        let report = self
            .declaration_report(declarer, up.side != declarer)
            .ok_or(GameError::NoDeclarationRule)?;
        let verdict = self.end_by_time(up);
        Ok(Declared {
            report,
            verdict: Some(verdict),
        })
    }

    /// `loser` resigns (投了) at `received_ms`: a resignation (`resignation`), unless the side to
    /// move was out of time by then, which ends the game on time instead.
    pub fn resign_at(&mut self, loser: Color, received_ms: u64) -> Result<&Verdict, GameError> {
        self.report_loss_at(ResultCode::Resignation, loser, "", received_ms)
    }

    /// `loser` loses at `received_ms` by an ending the platform reports against it, with its
    /// `note`: a resignation (`resignation`), or an illegal move by the platform's protocol that
    /// is no move of the board (`illegal_move`, a CSA `%CHUDAN`), recorded at the ply it was
    /// meant for as a forfeit is. Unless the side to move was out of time by then, which ends
    /// the game on time instead. Without a clock, the reported ending.
    pub fn report_loss_at(
        &mut self,
        code: ResultCode,
        loser: Color,
        note: &str,
        received_ms: u64,
    ) -> Result<&Verdict, GameError> {
        if self.verdict.is_some() {
            return Err(GameError::GameOver);
        }
        let verdict = self.time_up_at(received_ms).unwrap_or_else(|| Verdict {
            code,
            winner: Some(!loser),
            ply: self.plies() + u32::from(code == ResultCode::IllegalMove),
            ordinary_result: None,
            evidence: Evidence::Reported {
                note: note.to_owned(),
            },
        });
        Ok(self.verdict.insert(Box::new(verdict)))
    }

    /// Whether the side to move, silent, is out of time at `now_ms` (its flag has fallen):
    /// then the game ends on time and the verdict is returned. `None` while it has time, and
    /// without a clock or a game to judge.
    pub fn flag(&mut self, now_ms: u64) -> Option<Verdict> {
        if self.verdict.is_some() {
            return None;
        }
        self.time_up_at(now_ms)
    }

    /// Ends the game on time if the side to move is out of time at `at_ms`.
    fn time_up_at(&mut self, at_ms: u64) -> Option<Verdict> {
        let up = self.clock.as_deref()?.flag(at_ms)?;
        Some(self.end_by_time(up))
    }

    /// Ends the game on time: the late side loses at the plies played.
    fn end_by_time(&mut self, up: TimeUp) -> Verdict {
        let verdict = Verdict {
            code: ResultCode::Timeout,
            winner: Some(!up.side),
            ply: self.plies(),
            ordinary_result: None,
            evidence: Evidence::TimeUp(Box::new(up)),
        };
        self.verdict = Some(Box::new(verdict.clone()));
        verdict
    }

    /// The outcome of a move that came too late: not played, the game over on time.
    fn late_ply(&self, verdict: Verdict) -> PlyOutcome {
        PlyOutcome {
            ply: self.plies() + 1,
            gave_check: false,
            verdict: Some(verdict),
            warnings: Vec::new(),
            charge: None,
        }
    }
}

/// What the judgement of a ply may assume, besides the ruleset.
#[derive(Debug, Clone, Copy)]
struct Judged {
    /// The move was the mover's king's (for the try rule).
    king_move: bool,
    /// A move known to be legal for the side to move now, if the caller knows one: then the
    /// no-legal-reply test is skipped.
    reply: Option<Move>,
    /// The game's position is behind its history ([`Game::play_replayed`]): only the history
    /// may be read.
    lagging: bool,
}

/// A set of 64-bit position hashes that may answer "maybe" for a hash it does not hold but
/// never answers "no" for one it holds: 512 bits, one for each value of a hash's top nine bits
/// (64 bytes a game). A position whose bit is clear has not occurred before, so the repetition
/// scan over the whole history, which was a twentieth of re-judging an archive, is skipped:
/// over the shared corpus, one ply in seven finds its bit set and scans.
#[derive(Debug, Clone, Default)]
struct SeenFilter([u64; 8]);

impl SeenFilter {
    /// Adds `hash`; returns whether its bit was already set (it may have occurred before).
    fn insert(&mut self, hash: u64) -> bool {
        let bit = (hash >> 55) as usize;
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        let was = self.0[word] & mask != 0;
        self.0[word] |= mask;
        was
    }
}

/// Whether the side to move has a legal move, trying the king's steps first: most positions
/// have one, and checking eight moves is much cheaper than generating all of them.
fn has_legal_move(pos: &Position, in_check: bool) -> bool {
    // Not in check, a gold, silver, bishop or rook in hand can be dropped on any empty square:
    // only pawn drops have rules of their own (two pawns, pawn-drop mate), the dead-piece rule
    // spares these four, and a drop cannot expose a king that is not in check. This answers
    // most middle-game and endgame plies without an attack test (the archive benchmark's
    // profile had this function at a tenth of re-judging).
    let side = pos.side_to_move();
    let hand = pos.hand(side);
    let empty = 81 - pos.occupied().count();
    if !in_check
        && empty > 0
        && [
            PieceKind::Gold,
            PieceKind::Silver,
            PieceKind::Bishop,
            PieceKind::Rook,
        ]
        .into_iter()
        .any(|k| hand.has(k))
    {
        debug_assert!(pos.has_legal_move(), "a drop is legal here");
        return true;
    }
    // A lance or a knight may be dropped anywhere but on the last two ranks, eighteen squares
    // (the dead-piece rule): with more than eighteen empty squares, one is outside them.
    if !in_check && empty > 18 && (hand.has(PieceKind::Lance) || hand.has(PieceKind::Knight)) {
        debug_assert!(pos.has_legal_move(), "a drop is legal here");
        return true;
    }
    // Not in check, a king's step to an empty square is legal exactly when no enemy piece
    // attacks that square: no enemy slider attacks the king's square, so none sees through it
    // once the king has left. An attack test is a fraction of a full legality check.
    if !in_check && let Some(from) = pos.king_square(side) {
        for to in shogi_rules::attacks::king(from) & !pos.occupied() {
            if !pos.is_attacked(to, !side) {
                debug_assert_eq!(
                    pos.check_move(Move::Normal {
                        from,
                        to,
                        promote: false
                    }),
                    Ok(()),
                    "a king's step to an unattacked empty square is legal"
                );
                return true;
            }
        }
    }
    let Some(from) = pos.king_square(pos.side_to_move()) else {
        return pos.has_legal_move();
    };
    let (file, rank) = (from.file() as i8, from.rank() as i8);
    for (df, dr) in [
        (-1, -1),
        (-1, 0),
        (-1, 1),
        (0, -1),
        (0, 1),
        (1, -1),
        (1, 0),
        (1, 1),
    ] {
        let (f, r) = (file + df, rank + dr);
        if !(1..=9).contains(&f) || !(1..=9).contains(&r) {
            continue;
        }
        let to = Square::new(f as u8, r as u8).expect("in range");
        if pos
            .check_move(Move::Normal {
                from,
                to,
                promote: false,
            })
            .is_ok()
        {
            return true;
        }
    }
    pos.has_legal_move()
}

/// The even-game start position, built once.
fn even_start() -> &'static Position {
    static EVEN: std::sync::OnceLock<Position> = std::sync::OnceLock::new();
    EVEN.get_or_init(Position::startpos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(usi: &str) -> Move {
        Move::from_usi(usi).unwrap()
    }

    fn strict() -> Ruleset {
        Ruleset {
            illegal_move: IllegalMovePolicy::Reject,
            move_cap: None,
            ..Ruleset::jsa()
        }
    }

    /// Colliding hashes are not a repetition: the verdict waits for the full positions to match
    /// (docs/rules.md section 2: a 24-bit hash elsewhere produced repetitions that did not happen).
    #[test]
    fn a_hash_collision_is_not_a_repetition() {
        let mut game = Game::startpos(strict());
        for m in ["7g7f", "3c3d", "2g2f", "4c4d", "2f2e", "4d4e"] {
            game.play(mv(m)).unwrap();
        }
        let next = mv("2e2d");
        let mut after = game.position().clone();
        after.play_unchecked(next);
        // Plies 1, 3 and 5 (White to move, as after ply 7) now claim the same hash.
        for ply in [1, 3, 5] {
            game.history.set_hash(ply, after.hash());
        }
        // The filter of seen positions is fooled as well, so that the scan runs.
        game.seen.insert(after.hash());
        let out = game.play(next).unwrap();
        assert_eq!((out.verdict, out.warnings), (None, vec![]));

        // Two real earlier occurrences and one colliding one: a third occurrence, with the
        // real plies, and no verdict.
        let mut game = Game::startpos(strict());
        for m in [
            "5i5h", "5a5b", "5h5i", "5b5a", "5i5h", "5a5b", "5h5i", "5b5a",
        ] {
            game.play(mv(m)).unwrap();
        }
        let h = game.history.hashes()[1];
        game.history.set_hash(3, h);
        let out = game.play(mv("5i5h")).unwrap();
        assert_eq!(out.verdict, None);
        assert_eq!(
            out.warnings,
            vec![Warning::ThirdOccurrence {
                ply: 9,
                plies: [1, 5, 9]
            }]
        );
    }

    /// With real repetitions behind colliding hashes, the verdict names the real plies.
    #[test]
    fn exact_confirmation_keeps_only_real_occurrences() {
        let mut game = Game::startpos(strict());
        let cycle = ["5i5h", "5a5b", "5h5i", "5b5a"];
        for m in cycle.iter().cycle().take(8) {
            game.play(mv(m)).unwrap();
        }
        // The start position occurred at 0, 4 and 8. Make ply 2 collide with it as well.
        let h = game.history.hashes()[0];
        game.history.set_hash(2, h);
        for m in cycle.iter().take(3) {
            assert_eq!(game.play(mv(m)).unwrap().verdict, None);
        }
        let v = game
            .play(mv(cycle[3]))
            .unwrap()
            .verdict
            .expect("the real 4th occurrence");
        assert_eq!(
            v.evidence,
            Evidence::Repetition {
                plies: [0, 4, 8, 12],
                mutual_check: false
            }
        );
    }
}
