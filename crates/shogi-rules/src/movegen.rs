//! Legal move generation and single-move legality.
//!
//! One generator serves both listing and counting: it hands each piece's legal target set to a
//! [`Sink`], which either lists the moves or only counts them with popcounts (perft's bulk mode).

use crate::attacks::{self, dead_zone, zone};
use crate::position::IllegalKind;
use crate::{Bitboard, Color, Move, PieceKind, Position, Square};
use std::ops::Deref;

/// Receives the legal target sets found by the generator.
pub(crate) trait Sink {
    /// A non-king piece of `kind` on `from` may go to each square of `targets` (promotion options
    /// are the sink's to expand).
    fn piece(&mut self, us: Color, kind: PieceKind, from: Square, targets: Bitboard);
    /// Pawns (not pinned, not on their last ranks) move one square forward onto `targets`.
    fn pawns(&mut self, us: Color, targets: Bitboard);
    /// The king on `from` may go to each square of `targets`.
    fn king(&mut self, from: Square, targets: Bitboard);
    /// A piece of `kind` may be dropped on each square of `targets`.
    fn drops(&mut self, kind: PieceKind, targets: Bitboard);
}

/// The squares on which a board move to `to` may promote / must not stay unpromoted.
#[inline]
fn promotion_sets(
    us: Color,
    kind: PieceKind,
    from: Square,
    targets: Bitboard,
) -> (Bitboard, Bitboard) {
    if !kind.can_promote() {
        return (Bitboard::EMPTY, targets);
    }
    let z = zone(us);
    let promo = if z.contains(from) {
        targets
    } else {
        targets & z
    };
    let plain = targets & !dead_zone(us, kind);
    (promo, plain)
}

/// Counts moves (perft's bulk mode).
pub(crate) struct Counter(pub u64);

impl Sink for Counter {
    #[inline]
    fn piece(&mut self, us: Color, kind: PieceKind, from: Square, targets: Bitboard) {
        let (promo, plain) = promotion_sets(us, kind, from, targets);
        self.0 += (promo.count() + plain.count()) as u64;
    }
    #[inline]
    fn pawns(&mut self, us: Color, targets: Bitboard) {
        let promo = targets & zone(us);
        let plain = targets & !dead_zone(us, PieceKind::Pawn);
        self.0 += (promo.count() + plain.count()) as u64;
    }
    #[inline]
    fn king(&mut self, _from: Square, targets: Bitboard) {
        self.0 += targets.count() as u64;
    }
    #[inline]
    fn drops(&mut self, _kind: PieceKind, targets: Bitboard) {
        self.0 += targets.count() as u64;
    }
}

/// The most legal moves any shogi position has is 593; this leaves room.
const MAX_MOVES: usize = 600;

/// A list of moves on the stack.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

const PLACEHOLDER: Move = Move::Drop {
    kind: PieceKind::Pawn,
    to: Square::from_index_unchecked(0),
};

impl MoveList {
    pub(crate) fn new() -> MoveList {
        MoveList {
            moves: [PLACEHOLDER; MAX_MOVES],
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, mv: Move) {
        debug_assert!(self.len < MAX_MOVES);
        if self.len < MAX_MOVES {
            self.moves[self.len] = mv;
            self.len += 1;
        }
    }
}

impl Deref for MoveList {
    type Target = [Move];
    #[inline]
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len]
    }
}

impl std::fmt::Debug for MoveList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|m| m.to_string()))
            .finish()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for MoveList {
    type Item = Move;
    type IntoIter = std::iter::Take<std::array::IntoIter<Move, MAX_MOVES>>;
    fn into_iter(self) -> Self::IntoIter {
        self.moves.into_iter().take(self.len)
    }
}

/// A list that moves can be pushed onto: the stack [`MoveList`] of the public API, or a
/// reusable vector (perft keeps one per depth, so that no list is initialised per node).
pub(crate) trait PushMove {
    fn push_move(&mut self, mv: Move);
}

impl PushMove for Vec<Move> {
    #[inline]
    fn push_move(&mut self, mv: Move) {
        self.push(mv);
    }
}

impl PushMove for MoveList {
    #[inline]
    fn push_move(&mut self, mv: Move) {
        self.push(mv);
    }
}

/// Every list expands the target sets into moves the same way.
impl<L: PushMove> Sink for L {
    #[inline]
    fn piece(&mut self, us: Color, kind: PieceKind, from: Square, targets: Bitboard) {
        let (promo, plain) = promotion_sets(us, kind, from, targets);
        for to in promo {
            self.push_move(Move::Normal {
                from,
                to,
                promote: true,
            });
        }
        for to in plain {
            self.push_move(Move::Normal {
                from,
                to,
                promote: false,
            });
        }
    }
    #[inline]
    fn pawns(&mut self, us: Color, targets: Bitboard) {
        let back: i32 = if us == Color::Black { 1 } else { -1 };
        for to in targets {
            let from = Square::from_index_unchecked((to.index() as i32 + back) as u8);
            if zone(us).contains(to) {
                self.push_move(Move::Normal {
                    from,
                    to,
                    promote: true,
                });
            }
            if !dead_zone(us, PieceKind::Pawn).contains(to) {
                self.push_move(Move::Normal {
                    from,
                    to,
                    promote: false,
                });
            }
        }
    }
    #[inline]
    fn king(&mut self, from: Square, targets: Bitboard) {
        for to in targets {
            self.push_move(Move::Normal {
                from,
                to,
                promote: false,
            });
        }
    }
    #[inline]
    fn drops(&mut self, kind: PieceKind, targets: Bitboard) {
        for to in targets {
            self.push_move(Move::Drop { kind, to });
        }
    }
}

/// Files holding an unpromoted pawn of `color`, as full-file masks, without a loop: a file is
/// nine bits, and adding `0xff` to its low eight carries into its ninth exactly when one of them
/// is set (the sum stays within the file); the ninth bits, brought down to each file's first
/// square and multiplied by `0x1ff`, fill their files.
#[inline]
fn pawn_files(pos: &Position, color: Color) -> Bitboard {
    const LOW: u128 = spread(0x0ff);
    const HIGH: u128 = spread(0x100);
    const fn spread(pattern: u128) -> u128 {
        let mut out = 0;
        let mut f = 0;
        while f < 9 {
            out |= pattern << (9 * f);
            f += 1;
        }
        out
    }
    let pawns = pos.pieces_of(color, PieceKind::Pawn).bits();
    let nonempty = (pawns | ((pawns & LOW) + LOW)) & HIGH;
    Bitboard((nonempty >> 8) * 0x1ff)
}

/// Whether dropping a pawn of the side to move on `to`, which gives check, is checkmate
/// (打ち歩詰め). The pawn stands next to the king, so the check cannot be blocked: it is mate
/// when the king has no safe square (taking the pawn included) and no defender may capture the
/// pawn (a pinned one may not). The king's squares are tried first, the pawn's own first of all:
/// a dropped pawn is most often undefended, and then the king takes it.
#[inline(always)]
fn pawn_drop_mates(pos: &Position, to: Square) -> bool {
    // No piece of ours on a line or a knight's jump from the pawn: it is undefended and the king
    // takes it. One table lookup, where the full test is a call.
    if (attacks::attack_sources(to) & pos.pieces_by_color(pos.side_to_move())).is_empty() {
        return false;
    }
    pawn_drop_mates_full(pos, to)
}

#[inline(never)]
fn pawn_drop_mates_full(pos: &Position, to: Square) -> bool {
    let us = pos.side_to_move();
    let them = !us;
    let occ = pos.occupied().with(to);
    let Some(their_king) = pos.king_square(them) else {
        return false;
    };
    // The dropped pawn is not in the bitboards; it matters only as a blocker and as a piece the
    // king may capture, and the attack tests see it as a blocker through `occ`.
    let occ_without_king = occ.without(their_king);
    let ours = pos.pieces_by_color(us);
    if !pos.attacked_among(to, them, ours, occ_without_king) {
        return false;
    }
    let escapes = attacks::king(their_king) & !pos.pieces_by_color(them) & !Bitboard::bit(to);
    for sq in escapes {
        if !pos.attacked_among(sq, them, ours, occ_without_king) {
            return false;
        }
    }
    let capturers = pos.attackers_to_occ(to, them, occ).without(their_king);
    !(capturers.any() && (capturers & !pos.pinned(them, occ)).any())
}

/// Hands every legal move of the side to move to `sink`.
pub(crate) fn generate<S: Sink>(pos: &Position, sink: &mut S) {
    generate_inline(pos, sink);
}

/// The body of [`generate`], inlined where a caller compiles it with more CPU features (see
/// [`crate::cpu`]).
#[inline(always)]
pub(crate) fn generate_inline<S: Sink>(pos: &Position, sink: &mut S) {
    let us = pos.side_to_move();
    let them = !us;
    let occ = pos.occupied();
    // The enemy king is never a target (see `Position`): treat it like an own piece.
    let mut ours = pos.pieces_by_color(us);
    if let Some(k) = pos.king_square(them) {
        ours = ours.with(k);
    }
    let (target, drop_target, pinned, ksq) = match pos.king_square(us) {
        Some(ksq) => {
            let checkers = pos.checkers();
            // King moves: the king itself must not block the slider it steps away from.
            let occ_without_king = occ.without(ksq);
            let theirs = pos.pieces_by_color(them);
            let attacked = pos.attacked_around(ksq, us, theirs, occ_without_king);
            sink.king(ksq, attacks::king(ksq) & !ours & !attacked);
            if checkers.has_more_than_one() {
                return;
            }
            let (target, drop_target) = match checkers.first() {
                // Capturing the checker is allowed unless the checker is the enemy king itself
                // (adjacent kings, a problem position): `!ours` keeps that square out.
                Some(c) => {
                    let b = attacks::between(ksq, c);
                    (b.with(c) & !ours, b)
                }
                None => (!ours, !occ),
            };
            (target, drop_target, pos.pinned(us, occ), ksq)
        }
        // A problem position without this side's king: nothing is pinned, nothing is check, and
        // `ksq` is never used because `pinned` is empty.
        None => (
            !ours,
            !occ,
            Bitboard::EMPTY,
            Square::from_index_unchecked(0),
        ),
    };

    // Pawns, all at once where not pinned. Pawns on the last rank occur only in problem
    // positions; they cannot move.
    let pawns = pos.pieces_of(us, PieceKind::Pawn);
    let free_pawns = (pawns & !pinned & !dead_zone(us, PieceKind::Pawn)).bits();
    let pushed = match us {
        Color::Black => free_pawns >> 1,
        Color::White => free_pawns << 1,
    };
    sink.pawns(us, Bitboard(pushed) & target);
    for from in pawns & pinned {
        let t = attacks::pawn(us, from) & target & attacks::line(ksq, from);
        sink.piece(us, PieceKind::Pawn, from, t);
    }

    // One loop a kind, each with its own attack function, so that nothing dispatches per piece.
    // Gold and the four promoted minor pieces move alike and none can promote: one loop.
    let each =
        |sink: &mut S, kind: PieceKind, pieces: Bitboard, attack: &dyn Fn(Square) -> Bitboard| {
            for from in pieces {
                let mut t = attack(from) & target;
                if pinned.contains(from) {
                    t &= attacks::line(ksq, from);
                }
                sink.piece(us, kind, from, t);
            }
        };
    let mine = |kind: PieceKind| pos.kind_bb(kind) & ours;
    each(sink, PieceKind::Lance, mine(PieceKind::Lance), &|f| {
        attacks::lance(us, f, occ)
    });
    each(sink, PieceKind::Knight, mine(PieceKind::Knight), &|f| {
        attacks::knight(us, f)
    });
    each(sink, PieceKind::Silver, mine(PieceKind::Silver), &|f| {
        attacks::silver(us, f)
    });
    each(sink, PieceKind::Gold, pos.gold_movers() & ours, &|f| {
        attacks::gold(us, f)
    });
    each(sink, PieceKind::Bishop, mine(PieceKind::Bishop), &|f| {
        attacks::bishop(f, occ)
    });
    each(sink, PieceKind::Rook, mine(PieceKind::Rook), &|f| {
        attacks::rook(f, occ)
    });
    each(sink, PieceKind::Horse, mine(PieceKind::Horse), &|f| {
        attacks::bishop(f, occ) | attacks::king(f)
    });
    each(sink, PieceKind::Dragon, mine(PieceKind::Dragon), &|f| {
        attacks::rook(f, occ) | attacks::king(f)
    });

    let hand = pos.hand(us);
    if hand.is_empty() || drop_target.is_empty() {
        return;
    }
    for kind in PieceKind::HAND {
        if !hand.has(kind) {
            continue;
        }
        let mut t = drop_target & !dead_zone(us, kind);
        if kind == PieceKind::Pawn {
            t &= !pawn_files(pos, us);
            // Only a pawn dropped right in front of the enemy king gives check.
            if let Some(k) = pos.king_square(them)
                && let Some(sq) = (attacks::pawn(them, k) & t).first()
                && pawn_drop_mates(pos, sq)
            {
                t = t.without(sq);
            }
        }
        sink.drops(kind, t);
    }
}

/// Whether a piece of `kind` on `from` reaches `to` over the board as it stands (`to` may hold
/// an enemy piece): on an empty board (one table bit), and with nothing in between (empty for a
/// step, so one rule serves every kind).
#[inline(always)]
fn reaches(us: Color, kind: PieceKind, from: Square, to: Square, occ: Bitboard) -> bool {
    attacks::reaches_on_empty_board(us, kind, from, to)
        && (attacks::between(from, to) & occ).is_empty()
}

/// Why `mv` is illegal for the side to move, if it is. Inlined into
/// [`Position::check_move`]; the cheap rejections and the common legal case are decided here,
/// with few registers, and the rest (attack tests, pawn-drop mate) in functions kept out of line,
/// so that the common paths do not pay for the rare ones' code.
#[inline(always)]
pub(crate) fn check(pos: &Position, mv: Move) -> Result<(), IllegalKind> {
    check_with(pos, mv, None)
}

/// [`check`], told by the caller whether the side to move is in check (`Some`, which must be
/// [`Position::in_check`]'s answer) instead of finding it out: a record reader knows it from
/// the move before, whose check it found as it played it.
#[inline(always)]
pub(crate) fn check_with(
    pos: &Position,
    mv: Move,
    in_check: Option<bool>,
) -> Result<(), IllegalKind> {
    use IllegalKind as I;
    let in_check_now = || in_check.unwrap_or_else(|| pos.checkers_out_of_line().any());
    let us = pos.side_to_move();
    match mv {
        Move::Normal { from, to, promote } => {
            // The cheap rejections first: an own piece on the origin, none on the destination
            // (nor the enemy king), from the colour boards.
            let ours = pos.pieces_by_color(us);
            let Some(kind) = pos.kind_at(from).filter(|_| ours.contains(from)) else {
                return Err(I::Impossible);
            };
            if ours.contains(to) || pos.king_square(!us) == Some(to) {
                return Err(I::Impossible);
            }
            if !reaches(us, kind, from, to, pos.occupied()) {
                return Err(I::Impossible);
            }
            if promote {
                if !kind.can_promote() || !(zone(us).contains(from) || zone(us).contains(to)) {
                    return Err(I::Impossible);
                }
            } else if dead_zone(us, kind).contains(to) {
                return Err(I::DeadPiece);
            }
            let Some(k) = pos.king_square(us) else {
                return Ok(());
            };
            // Not in check, a piece off every line through its king, or one that stays on that
            // line, cannot expose the king: the common case needs no attack test at all. Nor can
            // one whose line holds no enemy piece that slides along it (the back rank's pieces
            // beside their king, in the opening).
            if kind != PieceKind::King
                && (!attacks::aligned(k, from)
                    || attacks::line(k, from).contains(to)
                    || !enemy_slider_on_line(pos, us, k, from))
                && !in_check_now()
            {
                return Ok(());
            }
            check_king_safety(pos, from, to, kind, k, in_check == Some(false))
        }
        Move::Drop { kind, to } => {
            if !kind.is_hand_kind()
                || pos.hand(us).count_of(kind) == 0
                || pos.occupied().contains(to)
            {
                return Err(I::Impossible);
            }
            if dead_zone(us, kind).contains(to) {
                return Err(I::DeadPiece);
            }
            if kind == PieceKind::Pawn
                && (pos.pieces_of(us, PieceKind::Pawn) & attacks::file_of(to)).any()
            {
                return Err(I::TwoPawns);
            }
            // Only a pawn dropped right in front of the enemy king can be pawn-drop mate.
            let mate_candidate = kind == PieceKind::Pawn
                && pos
                    .king_square(!us)
                    .is_some_and(|k| attacks::pawn(us, to).contains(k));
            if !mate_candidate && !in_check_now() {
                return Ok(());
            }
            check_drop_rest(pos, to, mate_candidate)
        }
    }
}

/// Whether the line through `k` and `from` (which share one) holds an enemy piece that may
/// slide along it: a rook, dragon or lance (any, promoted or not, on a rank or file), or a
/// bishop or horse on a diagonal. When it holds none, moving the piece on `from` off the line
/// exposes nothing.
#[inline(always)]
fn enemy_slider_on_line(pos: &Position, us: Color, k: Square, from: Square) -> bool {
    let sliders = if attacks::rook_pseudo(k).contains(from) {
        pos.base_bb(PieceKind::Rook) | pos.base_bb(PieceKind::Lance)
    } else {
        pos.base_bb(PieceKind::Bishop)
    };
    (attacks::line(k, from) & sliders & pos.pieces_by_color(!us)).any()
}

/// The end of [`check`] for a board move that may expose its king, or a king's move;
/// `not_in_check`: the caller knows the side to move is not in check.
#[inline(never)]
fn check_king_safety(
    pos: &Position,
    from: Square,
    to: Square,
    kind: PieceKind,
    k: Square,
    not_in_check: bool,
) -> Result<(), IllegalKind> {
    let us = pos.side_to_move();
    if kind != PieceKind::King && !not_in_check {
        // In check, a move that neither captures the only checker nor blocks it leaves the king
        // in check, with no attack test; one that does is illegal only if its piece is pinned.
        let checkers = pos.checkers();
        if let Some(c) = checkers.first() {
            if checkers.has_more_than_one() || !attacks::between(k, c).with(c).contains(to) {
                return Err(IllegalKind::LeavesKingInCheck);
            }
            if !attacks::aligned(k, from) || attacks::line(k, from).contains(to) {
                return Ok(());
            }
        }
    }
    let occ = pos.occupied();
    // A captured piece no longer attacks: it is masked out of the attackers.
    let theirs_after = pos.pieces_by_color(!us).without(to);
    let attacked = match kind {
        PieceKind::King => pos.attacked_among(to, us, theirs_after, occ.without(from)),
        _ => pos.attacked_among(k, us, theirs_after, occ.without(from).with(to)),
    };
    match attacked {
        true => Err(IllegalKind::LeavesKingInCheck),
        false => Ok(()),
    }
}

/// The end of [`check`] for a drop while in check, or of a pawn in front of the enemy king.
#[inline(never)]
fn check_drop_rest(pos: &Position, to: Square, mate_candidate: bool) -> Result<(), IllegalKind> {
    if let Some(k) = pos.king_square(pos.side_to_move()) {
        // A drop cannot expose the king; in check it must block the only checker.
        let checkers = pos.checkers();
        if let Some(c) = checkers.first()
            && (checkers.has_more_than_one() || !attacks::between(k, c).contains(to))
        {
            return Err(IllegalKind::LeavesKingInCheck);
        }
    }
    if mate_candidate && pawn_drop_mates(pos, to) {
        return Err(IllegalKind::PawnDropMate);
    }
    Ok(())
}
