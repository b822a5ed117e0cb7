//! Impasse (入玉, 持将棋), docs/rules.md section 4: point counting, the declaration calculator, the
//! handicap credit, agreement counting and the try rule.

use crate::ruleset::{AgreementTie, DeclarationRule, FailedDeclaration};
use shogi_rules::{Color, Move, PieceKind, Position, Square};

/// Points of a full set of the 38 non-king pieces (27 a side at the start), docs/rules.md section 4.
pub const FULL_SET_POINTS: u32 = 54;

/// Pieces other than the king a declarer needs in the target camp (docs/rules.md section 4,
/// condition 3).
pub const MIN_PIECES_IN_CAMP: u32 = 10;

/// The least points for a jishogi under [`DeclarationRule::Jsa24`] (24..=30 is jishogi).
pub const JSA24_JISHOGI_POINTS: u32 = 24;

/// Impasse points of a piece kind: rook, bishop, dragon, horse 5; king 0; every other piece 1,
/// promoted or not (docs/rules.md section 4).
#[inline]
pub const fn piece_points(kind: PieceKind) -> u32 {
    kind.impasse_points()
}

/// Whether `sq` is in `color`'s target camp: ranks a..c for Black, g..i for White (docs/rules.md
/// section 4). It is the same set of squares as the promotion zone.
#[inline]
pub const fn in_camp(sq: Square, color: Color) -> bool {
    sq.in_zone(color)
}

/// Points to win a declaration under `rule` (docs/rules.md section 4): 28 for Black and 27 for White
/// under the 27-point rule ("27-point" does not mean 27 wins for Black), 31 under the JSA
/// 24-point rule.
pub const fn points_to_win(rule: DeclarationRule, declarer: Color) -> u32 {
    match (rule, declarer) {
        (DeclarationRule::Points27, Color::Black) => 28,
        (DeclarationRule::Points27, Color::White) => 27,
        (DeclarationRule::Jsa24, _) => 31,
    }
}

/// One side's impasse points, broken down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PointCount {
    /// Points of the side's non-king pieces in its target camp.
    pub board_in_camp: u32,
    /// Number of the side's non-king pieces in its target camp.
    pub pieces_in_camp: u32,
    /// Points of all the side's non-king pieces on the board.
    pub board: u32,
    /// Points of the side's pieces in hand.
    pub hand: u32,
}

impl PointCount {
    /// The points a declaration counts: pieces in the target camp plus all pieces in hand
    /// (docs/rules.md section 4, point 6).
    pub const fn declaration_points(&self) -> u32 {
        self.board_in_camp + self.hand
    }

    /// The points agreement counting counts: every piece on the board and in hand (docs/rules.md
    /// section 4, agreement counting).
    pub const fn total(&self) -> u32 {
        self.board + self.hand
    }
}

/// Counts `color`'s impasse points in `pos`.
pub fn count_points(pos: &Position, color: Color) -> PointCount {
    let mut c = PointCount::default();
    for (sq, piece) in pos.pieces() {
        if piece.color != color || piece.kind == PieceKind::King {
            continue;
        }
        let pts = piece_points(piece.kind);
        c.board += pts;
        if in_camp(sq, color) {
            c.board_in_camp += pts;
            c.pieces_in_camp += 1;
        }
    }
    let hand = pos.hand(color);
    c.hand = PieceKind::HAND
        .iter()
        .map(|&k| hand.count(k) as u32 * piece_points(k))
        .sum();
    c
}

/// The handicap credit of a game that started from `initial`: the points of the pieces missing
/// from the board and both hands there (docs/rules.md section 4: "the dropped pieces are assumed to be
/// with uwate", JSA; YaneuraOu CSARule27H, Lishogi and tsshogi agree). Pieces in a hand at the
/// start are not missing. It is credited to the giver, White.
///
/// Only a handicap game has a giver: a game that starts from some other position (a problem, a
/// study, a position set up for a test) gets no credit however many pieces it lacks, which is
/// also how the corpus's independent replay judges such records. See [`is_handicap_start`].
pub fn handicap_credit(initial: &Position) -> u32 {
    if !is_handicap_start(initial) {
        return 0;
    }
    let present: u32 = Color::ALL
        .iter()
        .map(|&c| count_points(initial, c).total())
        .sum();
    FULL_SET_POINTS.saturating_sub(present)
}

/// Whether `initial` is the start of a handicap game (駒落ち): White, the giver, to move, both
/// hands empty, and every piece on the square it has in the even-game start, with some of
/// White's pieces (never its king) removed. Every standard handicap is of this form.
pub fn is_handicap_start(initial: &Position) -> bool {
    if initial.side_to_move() != Color::White
        || !initial.hand(Color::Black).is_empty()
        || !initial.hand(Color::White).is_empty()
    {
        return false;
    }
    let even = Position::startpos();
    let mut removed = false;
    for sq in Square::all() {
        match (initial.piece_at(sq), even.piece_at(sq)) {
            (a, b) if a == b => {}
            (None, Some(p)) if p.color == Color::White && p.kind != PieceKind::King => {
                removed = true
            }
            _ => return false,
        }
    }
    removed
}

/// How a declaration is judged (docs/rules.md section 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclarationOutcome {
    /// The declarer wins.
    Win,
    /// Jishogi (持将棋): no winner; draw or replay per the ruleset. Only under
    /// [`DeclarationRule::Jsa24`] with 24..=30 points.
    Jishogi,
    /// The declarer loses (a failed declaration under [`FailedDeclaration::Loss`]).
    Loss,
    /// The declaration does not qualify and is refused; play goes on
    /// ([`FailedDeclaration::Refuse`]).
    Refused,
}

impl DeclarationOutcome {
    /// `win`, `jishogi`, `loss` or `refused`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DeclarationOutcome::Win => "win",
            DeclarationOutcome::Jishogi => "jishogi",
            DeclarationOutcome::Loss => "loss",
            DeclarationOutcome::Refused => "refused",
        }
    }
}

/// The conditions of a declaration (docs/rules.md section 4, conditions 1..6, and the JSA 500-move
/// rule's "declarations are allowed only before ply 500", section 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclarationCondition {
    /// 1: it is the declarer's turn.
    DeclarersTurn,
    /// 1: the game is not over.
    GameNotOver,
    /// 2: the declarer's king is in the target camp.
    KingInCamp,
    /// 3: at least 10 of the declarer's other pieces are in the target camp.
    PiecesInCamp,
    /// 4: the declarer's king is not in check.
    NotInCheck,
    /// 5: the declarer has time left (the platform supplies the clock state).
    HasTime,
    /// Section 5: under the JSA 500-move rule, the cap has not been reached.
    BeforeMoveCap,
    /// 6: enough points (under `jsa24`, enough for at least a jishogi).
    Points,
}

impl DeclarationCondition {
    /// Every condition, in the order of docs/rules.md.
    pub const ALL: [DeclarationCondition; 8] = [
        DeclarationCondition::DeclarersTurn,
        DeclarationCondition::GameNotOver,
        DeclarationCondition::KingInCamp,
        DeclarationCondition::PiecesInCamp,
        DeclarationCondition::NotInCheck,
        DeclarationCondition::HasTime,
        DeclarationCondition::BeforeMoveCap,
        DeclarationCondition::Points,
    ];

    /// A snake-case name (`declarers_turn`, `king_in_camp`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            DeclarationCondition::DeclarersTurn => "declarers_turn",
            DeclarationCondition::GameNotOver => "game_not_over",
            DeclarationCondition::KingInCamp => "king_in_camp",
            DeclarationCondition::PiecesInCamp => "pieces_in_camp",
            DeclarationCondition::NotInCheck => "not_in_check",
            DeclarationCondition::HasTime => "has_time",
            DeclarationCondition::BeforeMoveCap => "before_move_cap",
            DeclarationCondition::Points => "points",
        }
    }
}

/// Everything the position alone does not say about a declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeclarationContext {
    /// The side declaring.
    pub declarer: Color,
    /// Whether the declarer has time left (condition 5; the platform knows the clock).
    pub has_time: bool,
    /// Whether the game is already over (condition 1).
    pub game_over: bool,
    /// Whether a declaration is still allowed by the move cap (section 5, JSA 500-move rule).
    pub before_move_cap: bool,
    /// The handicap credit of the game ([`handicap_credit`]); it counts only for White, the
    /// giver.
    pub handicap_credit: u32,
    /// Whether a failed declaration loses or is refused.
    pub failed: FailedDeclaration,
}

/// The declaration calculator's report: the outcome and every condition with its value
/// (docs/rules.md section 4 and section 7: each condition and whether it held).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeclarationReport {
    /// The rule judged by.
    pub rule: DeclarationRule,
    /// The side declaring.
    pub declarer: Color,
    /// Win, jishogi, loss or refused.
    pub outcome: DeclarationOutcome,
    /// Condition 1: it was the declarer's turn.
    pub declarers_turn: bool,
    /// Condition 1: the game was already over.
    pub game_over: bool,
    /// Condition 2: the declarer's king is in the target camp.
    pub king_in_camp: bool,
    /// Condition 3: the declarer's non-king pieces in the target camp (10 needed).
    pub pieces_in_camp: u32,
    /// Condition 4: the declarer's king is in check.
    pub in_check: bool,
    /// Condition 5: the declarer has time left.
    pub has_time: bool,
    /// Section 5: the declaration came before the JSA 500-move cap.
    pub before_move_cap: bool,
    /// Points of the declarer's pieces in the target camp.
    pub points_in_camp: u32,
    /// Points of the declarer's pieces in hand.
    pub points_in_hand: u32,
    /// The handicap credit given to the declarer (0 unless White in a handicap game).
    pub credit: u32,
    /// Condition 6: the points counted, credit included.
    pub points: u32,
    /// The points needed to win under the rule.
    pub points_to_win: u32,
    /// How many points short of a win (0 when enough).
    pub points_missing: u32,
}

impl DeclarationReport {
    /// Whether `condition` holds.
    pub fn met(&self, condition: DeclarationCondition) -> bool {
        use DeclarationCondition as C;
        match condition {
            C::DeclarersTurn => self.declarers_turn,
            C::GameNotOver => !self.game_over,
            C::KingInCamp => self.king_in_camp,
            C::PiecesInCamp => self.pieces_in_camp >= MIN_PIECES_IN_CAMP,
            C::NotInCheck => !self.in_check,
            C::HasTime => self.has_time,
            C::BeforeMoveCap => self.before_move_cap,
            C::Points => match self.rule {
                DeclarationRule::Points27 => self.points >= self.points_to_win,
                DeclarationRule::Jsa24 => self.points >= JSA24_JISHOGI_POINTS,
            },
        }
    }

    /// Each condition with whether it holds, in the order of docs/rules.md.
    pub fn conditions(&self) -> [(DeclarationCondition, bool); 8] {
        DeclarationCondition::ALL.map(|c| (c, self.met(c)))
    }

    /// The conditions that do not hold.
    pub fn failed_conditions(&self) -> Vec<DeclarationCondition> {
        DeclarationCondition::ALL
            .into_iter()
            .filter(|&c| !self.met(c))
            .collect()
    }
}

/// Judges a declaration by `ctx.declarer` in `pos` under `rule` (docs/rules.md section 4). In a
/// problem position without the declarer's king, condition 2 fails.
pub fn judge_declaration(
    pos: &Position,
    rule: DeclarationRule,
    ctx: &DeclarationContext,
) -> DeclarationReport {
    let declarer = ctx.declarer;
    let count = count_points(pos, declarer);
    let king = pos.king_square(declarer);
    let credit = if declarer == Color::White {
        ctx.handicap_credit
    } else {
        0
    };
    let points = count.declaration_points() + credit;
    let to_win = points_to_win(rule, declarer);
    let mut report = DeclarationReport {
        rule,
        declarer,
        outcome: DeclarationOutcome::Loss,
        declarers_turn: pos.side_to_move() == declarer,
        game_over: ctx.game_over,
        king_in_camp: king.is_some_and(|k| in_camp(k, declarer)),
        pieces_in_camp: count.pieces_in_camp,
        in_check: king.is_some_and(|k| pos.is_attacked(k, !declarer)),
        has_time: ctx.has_time,
        before_move_cap: ctx.before_move_cap,
        points_in_camp: count.board_in_camp,
        points_in_hand: count.hand,
        credit,
        points,
        points_to_win: to_win,
        points_missing: to_win.saturating_sub(points),
    };
    let qualifies = DeclarationCondition::ALL.into_iter().all(|c| report.met(c));
    report.outcome = if !qualifies {
        match ctx.failed {
            FailedDeclaration::Loss => DeclarationOutcome::Loss,
            FailedDeclaration::Refuse => DeclarationOutcome::Refused,
        }
    } else if points >= to_win {
        DeclarationOutcome::Win
    } else {
        DeclarationOutcome::Jishogi
    };
    report
}

/// The declaration calculator: judges a declaration by the side to move in `pos` under `rule`,
/// crediting White with the pieces missing from `initial` when given (docs/rules.md section 4). It
/// assumes the declarer has time, the game is not over and no cap forbids it, and reports a
/// failed declaration as a loss.
pub fn evaluate_declaration(
    pos: &Position,
    initial: Option<&Position>,
    rule: DeclarationRule,
) -> DeclarationReport {
    let ctx = DeclarationContext {
        declarer: pos.side_to_move(),
        has_time: true,
        game_over: false,
        before_move_cap: true,
        handicap_credit: initial.map_or(0, handicap_credit),
        failed: FailedDeclaration::Loss,
    };
    judge_declaration(pos, rule, &ctx)
}

/// The result of an agreement count (docs/rules.md section 4, agreement counting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgreementReport {
    /// Black's points: every piece on the board and in hand.
    pub black: u32,
    /// White's points, handicap credit included.
    pub white: u32,
    /// The handicap credit included in `white`.
    pub credit: u32,
    /// The threshold counted against (24 or 27).
    pub threshold: u32,
    /// The winner, or `None` for a jishogi.
    pub winner: Option<Color>,
}

/// The agreement count: a side under `threshold` loses; when both reach it, `tie` decides (JSA
/// 24-point count: jishogi; amateur 27-point count: 27-27 is the organiser's call, commonly a
/// White win). White is credited with the pieces missing from `initial` when given.
pub fn agreement_count(
    pos: &Position,
    initial: Option<&Position>,
    threshold: u32,
    tie: AgreementTie,
) -> AgreementReport {
    let credit = initial.map_or(0, handicap_credit);
    let black = count_points(pos, Color::Black).total();
    let white = count_points(pos, Color::White).total() + credit;
    let winner = match (black >= threshold, white >= threshold) {
        (true, true) => match tie {
            AgreementTie::Jishogi => None,
            AgreementTie::WhiteWins => Some(Color::White),
            AgreementTie::BlackWins => Some(Color::Black),
        },
        (true, false) => Some(Color::Black),
        (false, true) => Some(Color::White),
        // Impossible with 54 points and a threshold of 27 or less; no one wins on a count
        // neither side meets.
        (false, false) => None,
    };
    AgreementReport {
        black,
        white,
        credit,
        threshold,
        winner,
    }
}

/// The try rule's target for `color`: the square where the opponent's king started, 5a for
/// Black and 5i for White (docs/rules.md section 4).
pub fn try_square(color: Color) -> Square {
    let rank = match color {
        Color::Black => 1,
        Color::White => 9,
    };
    Square::new(5, rank).expect("5a and 5i are squares")
}

/// Whether playing `mv` in `pos` wins by the try rule (トライルール, docs/rules.md section 4): a legal
/// king move of the side to move onto [`try_square`], which must not hold an own piece
/// (capturing an enemy piece there is allowed) and must not be attacked after the move, sliders
/// seeing through the king's old square.
pub fn is_try(pos: &Position, mv: Move) -> bool {
    if mv.to() != try_square(pos.side_to_move()) || pos.check_move(mv).is_err() {
        return false;
    }
    let mut after = pos.clone();
    after.play_unchecked(mv);
    try_reached(pos, mv, &after)
}

/// The try rule after the fact: `mv`, legal in `before`, produced `after`.
pub(crate) fn try_reached(before: &Position, mv: Move, after: &Position) -> bool {
    let mover = before.side_to_move();
    match mv {
        Move::Normal { from, to, .. } => {
            Some(from) == before.king_square(mover)
                && to == try_square(mover)
                && !after.is_attacked(to, !mover)
        }
        Move::Drop { .. } => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(sfen: &str) -> Position {
        Position::from_sfen(sfen).unwrap()
    }

    #[test]
    fn start_position_has_27_points_a_side() {
        let p = Position::startpos();
        for c in Color::ALL {
            let count = count_points(&p, c);
            assert_eq!(count.total(), 27);
            assert_eq!(count.pieces_in_camp, 0);
        }
        assert_eq!(handicap_credit(&p), 0);
    }

    #[test]
    fn thresholds() {
        assert_eq!(points_to_win(DeclarationRule::Points27, Color::Black), 28);
        assert_eq!(points_to_win(DeclarationRule::Points27, Color::White), 27);
        assert_eq!(points_to_win(DeclarationRule::Jsa24, Color::Black), 31);
        assert_eq!(try_square(Color::Black).to_string(), "5a");
        assert_eq!(try_square(Color::White).to_string(), "5i");
    }

    #[test]
    fn hand_pieces_at_the_start_are_not_missing() {
        let p = pos("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w RB 1");
        assert_eq!(handicap_credit(&p), 0);
        let p = pos("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1");
        assert_eq!(handicap_credit(&p), 10);
    }

    #[test]
    fn only_handicap_starts_have_a_giver() {
        for h in crate::Handicap::ALL {
            assert!(is_handicap_start(&h.start_position()), "{}", h.as_str());
        }
        assert!(!is_handicap_start(&Position::startpos()));
        // Black to move, a hand, a piece off its square, a Black piece missing: not handicaps.
        for sfen in [
            "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",
            "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w r 1",
            "lnsgkgsnl/9/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 1",
            "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B7/LNSGKGSNL w - 1",
        ] {
            assert!(!is_handicap_start(&pos(sfen)), "{sfen}");
        }
        // A study position lacking most pieces gets no credit.
        assert_eq!(handicap_credit(&pos("4k4/9/9/9/9/9/9/9/4K4 w - 1")), 0);
    }

    #[test]
    fn agreement_count_thresholds_and_tie() {
        let p = Position::startpos();
        let a = agreement_count(&p, None, 24, AgreementTie::Jishogi);
        assert_eq!((a.black, a.white, a.winner), (27, 27, None));
        let a = agreement_count(&p, None, 27, AgreementTie::WhiteWins);
        assert_eq!(a.winner, Some(Color::White));
        let a = agreement_count(&p, None, 27, AgreementTie::BlackWins);
        assert_eq!(a.winner, Some(Color::Black));
        // Black has lost a rook to White's hand: 22 against 32.
        let p = pos("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B7/LNSGKGSNL b r 1");
        let a = agreement_count(&p, None, 24, AgreementTie::Jishogi);
        assert_eq!((a.black, a.white, a.winner), (22, 32, Some(Color::White)));
        // Two-piece handicap: White is credited the missing rook and bishop.
        let start = pos("lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1");
        let a = agreement_count(&start, Some(&start), 24, AgreementTie::Jishogi);
        assert_eq!((a.black, a.white, a.credit, a.winner), (27, 27, 10, None));
    }
}
