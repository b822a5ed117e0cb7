//! A position without history: board, hands, side to move, move number, hash.

use crate::attacks;
use crate::movegen::{self, MoveList};
use crate::{Bitboard, Color, Hand, Move, ParseUsiError, Piece, PieceKind, Square, sfen, zobrist};
use std::fmt;

/// Why a move cannot be played (反則), one kind per rule of docs/rules.md section 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IllegalKind {
    /// 二歩 (nifu): dropping an unpromoted pawn on a file that already holds an unpromoted pawn
    /// of the same side; a tokin does not count.
    TwoPawns,
    /// 打ち歩詰め (uchifuzume): dropping a pawn that gives checkmate. A defender that could
    /// capture the pawn only by exposing its own king does not save it.
    PawnDropMate,
    /// 行き所のない駒: a pawn or lance on the last rank, or a knight on the last two ranks, by drop
    /// or by declining promotion.
    DeadPiece,
    /// 王手放置 / 自殺手: the mover's king is attacked after the move.
    LeavesKingInCheck,
    /// No such piece, a move the piece cannot make, a blocked path, a capture of one's own piece,
    /// a drop of a piece not in hand or on an occupied square, an impossible promotion.
    Impossible,
    /// A move by the side not to move.
    WrongTurn,
}

impl IllegalKind {
    /// The reason code of docs/rules.md section 1 (`two_pawns`, `pawn_drop_mate`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            IllegalKind::TwoPawns => "two_pawns",
            IllegalKind::PawnDropMate => "pawn_drop_mate",
            IllegalKind::DeadPiece => "dead_piece",
            IllegalKind::LeavesKingInCheck => "leaves_king_in_check",
            IllegalKind::Impossible => "impossible",
            IllegalKind::WrongTurn => "wrong_turn",
        }
    }

    /// Parses a reason code written by [`IllegalKind::as_str`].
    pub fn from_code(code: &str) -> Option<IllegalKind> {
        [
            IllegalKind::TwoPawns,
            IllegalKind::PawnDropMate,
            IllegalKind::DeadPiece,
            IllegalKind::LeavesKingInCheck,
            IllegalKind::Impossible,
            IllegalKind::WrongTurn,
        ]
        .into_iter()
        .find(|k| k.as_str() == code)
    }
}

impl fmt::Display for IllegalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A move that cannot be played in a position, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("illegal move {mv}: {kind}")]
pub struct IllegalMove {
    /// The move.
    pub mv: Move,
    /// Why it is illegal.
    pub kind: IllegalKind,
}

/// A shogi position: pieces on the board, both hands, the side to move and the move number.
///
/// It keeps no history, so repetition is decided a layer above (in the adjudication crate). The
/// only way to build one is from a checked SFEN ([`Position::from_sfen`]) or the start position,
/// and moves change it only through [`Position::play`] (checked) or
/// [`Position::play_unchecked`] (for moves known to be legal), so every `Position` is a legal
/// position: each side has one king, piece counts fit a set, no dead pieces and no two pawns.
/// Problem positions ([`Position::from_sfen_problem`]) relax the first and the last two.
///
/// The side not to move may be in check (problem positions, and the pawn-drop-mate example of
/// docs/rules.md section 1, are written that way). A king is never captured: no move onto the enemy
/// king's square is generated or accepted (`impossible`); see [`Position::opponent_in_check`].
#[derive(Clone)]
pub struct Position {
    /// The squares of each unpromoted kind, pawn to king; a promoted piece stands in the board of
    /// its unpromoted kind and in `promoted`. Nine boards instead of fourteen keep the position
    /// within 256 bytes, which is what a copy costs in perft's full mode (a `memcpy` of up to
    /// 256 bytes is straight-line code, beyond that a loop).
    by_kind: [Bitboard; 8],
    promoted: Bitboard,
    by_color: [Bitboard; 2],
    hash: u64,
    hands: [Hand; 2],
    /// The kind on each square as a nibble (kind + 1, 0 for an empty square), two squares a byte;
    /// the colour is read from `by_color`.
    kinds: [u8; 41],
    kings: [Option<Square>; 2],
    /// The pieces checking the side to move of a position built from SFEN, packed (see
    /// [`SfenCheckers`]); after a move, `last` tells how to find them (see
    /// [`Position::checkers`]).
    sfen_checkers: SfenCheckers,
    /// The last move played here: origin (none for a drop), destination and the kind standing
    /// there now. Recording it is all `play_unchecked` does about checks, so that a leaf nobody
    /// asks about costs nothing.
    last: Option<LastMove>,
    side: Color,
    move_number: u32,
}

/// Up to two checkers' squares (`NONE` where absent); a position built from SFEN with more (a
/// problem position) has them recomputed on demand. Three bytes instead of a 16-byte board.
#[derive(Clone, Copy)]
struct SfenCheckers {
    squares: [u8; 2],
    more: bool,
}

impl SfenCheckers {
    const NONE: u8 = u8::MAX;
}

/// The kind of a nibble of [`Position::kinds`] (not 0): a table of sixteen, so that no bounds
/// check or arithmetic is needed.
#[inline(always)]
fn kind_of_code(code: u8) -> PieceKind {
    debug_assert!((1..=14).contains(&code));
    const KINDS: [PieceKind; 16] = {
        let mut t = [PieceKind::Pawn; 16];
        let mut i = 0;
        while i < 14 {
            t[i + 1] = PieceKind::ALL[i];
            i += 1;
        }
        t
    };
    KINDS[code as usize & 15]
}

/// The last move played on a position, enough to find the checks it gave.
#[derive(Clone, Copy)]
struct LastMove {
    from: Option<Square>,
    to: Square,
    kind: PieceKind,
}

impl Position {
    /// The start position of an even game (平手).
    pub fn startpos() -> Position {
        // Parsed once and copied: a record reader, a game and the handicap test each ask for it
        // once a record (some 5,000 instructions a parse, the archive benchmark's profile).
        static START: std::sync::OnceLock<Position> = std::sync::OnceLock::new();
        START
            .get_or_init(|| {
                Position::from_sfen(sfen::STARTPOS).expect("the start position is valid")
            })
            .clone()
    }

    /// Parses an SFEN strictly: `board side hand move_number`. Both kings must be on the board,
    /// no piece may be dead and no file may hold two unpromoted pawns of a side.
    pub fn from_sfen(text: &str) -> Result<Position, crate::SfenError> {
        sfen::parse(text, false)
    }

    /// Parses the SFEN of a problem position (詰将棋 and the like), which real records start
    /// from: a side may have no king (the attacker usually has none), and, as in joke problems
    /// such as 九歩, pieces that can never move and two pawns on a file are accepted. Everything
    /// else is checked as in [`Position::from_sfen`]. A side without a king is never in check,
    /// and the other side may not capture what is not there.
    pub fn from_sfen_problem(text: &str) -> Result<Position, crate::SfenError> {
        sfen::parse(text, true)
    }

    /// Formats the position as SFEN.
    pub fn to_sfen(&self) -> String {
        sfen::format(self)
    }

    /// Builds a position from checked parts (used by the SFEN parser).
    pub(crate) fn from_parts(
        squares: &[Option<Piece>; 81],
        hands: [Hand; 2],
        side: Color,
        move_number: u32,
    ) -> Position {
        let mut pos = Position::empty(hands, side, move_number);
        for (i, slot) in squares.iter().enumerate() {
            if let Some(p) = *slot {
                pos.put(p, Square::from_index_unchecked(i as u8));
            }
        }
        pos.finish();
        pos
    }

    /// A board without pieces (the SFEN parser puts them, then calls [`Position::finish`]).
    #[inline]
    pub(crate) fn empty(hands: [Hand; 2], side: Color, move_number: u32) -> Position {
        Position {
            by_kind: [Bitboard::EMPTY; 8],
            promoted: Bitboard::EMPTY,
            by_color: [Bitboard::EMPTY; 2],
            hash: 0,
            hands,
            kinds: [0; 41],
            kings: [None; 2],
            sfen_checkers: SfenCheckers {
                squares: [SfenCheckers::NONE; 2],
                more: false,
            },
            last: None,
            side,
            move_number,
        }
    }

    /// Sets what the SFEN parser reads after the board.
    #[inline]
    pub(crate) fn set_state(&mut self, hands: [Hand; 2], side: Color, move_number: u32) {
        self.hands = hands;
        self.side = side;
        self.move_number = move_number;
    }

    /// Completes a position whose pieces were put: hands and side in the hash, the checkers.
    #[inline]
    pub(crate) fn finish(&mut self) {
        for color in Color::ALL {
            let hand = self.hands[color.index()];
            if !hand.is_empty() {
                for kind in PieceKind::HAND {
                    self.hash ^= zobrist::hand(color, kind, hand.count(kind));
                }
            }
        }
        if self.side == Color::White {
            self.hash ^= zobrist::side();
        }
        let checkers = self.compute_checkers();
        let mut it = checkers;
        self.sfen_checkers = SfenCheckers {
            squares: [
                it.next().map_or(SfenCheckers::NONE, |s| s.index() as u8),
                it.next().map_or(SfenCheckers::NONE, |s| s.index() as u8),
            ],
            more: it.next().is_some(),
        };
    }

    /// The pieces checking the side to move, computed from scratch.
    fn compute_checkers(&self) -> Bitboard {
        match self.kings[self.side.index()] {
            Some(k) => self.attackers_to(k, !self.side),
            None => Bitboard::EMPTY,
        }
    }

    /// Puts `p` on the empty square `sq`.
    #[inline]
    pub(crate) fn put(&mut self, p: Piece, sq: Square) {
        let b = Bitboard::bit(sq);
        self.by_kind[p.kind.unpromote().index()] |= b;
        if p.kind.is_promoted() {
            self.promoted |= b;
        }
        self.by_color[p.color.index()] |= b;
        self.set_kind_code(sq, p.kind as u8 + 1);
        self.hash ^= zobrist::piece_square(p, sq);
        if p.kind == PieceKind::King {
            self.kings[p.color.index()] = Some(sq);
        }
    }

    /// The kind on `sq` plus one, 0 for an empty square.
    #[inline(always)]
    fn kind_code(&self, sq: Square) -> u8 {
        let i = sq.index();
        self.kinds[i >> 1] >> ((i & 1) << 2) & 15
    }

    #[inline(always)]
    fn set_kind_code(&mut self, sq: Square, code: u8) {
        let i = sq.index();
        let shift = (i & 1) << 2;
        let byte = &mut self.kinds[i >> 1];
        *byte = *byte & !(15 << shift) | code << shift;
    }

    /// The kind on `sq`, if any (the colour is the caller's to read from the colour boards).
    #[inline(always)]
    pub(crate) fn kind_at(&self, sq: Square) -> Option<PieceKind> {
        match self.kind_code(sq) {
            0 => None,
            c => Some(kind_of_code(c)),
        }
    }

    /// The colour of the piece on the occupied square `sq`.
    #[inline(always)]
    fn color_at(&self, sq: Square) -> Color {
        if self.by_color[1].contains(sq) {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The side to move.
    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// The move number of SFEN's fourth field; each ply played adds one.
    #[inline]
    pub fn move_number(&self) -> u32 {
        self.move_number
    }

    /// The piece on `sq`, if any.
    #[inline]
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.kind_at(sq)
            .map(|kind| Piece::new(self.color_at(sq), kind))
    }

    /// The hand of `color`.
    #[inline]
    pub fn hand(&self, color: Color) -> Hand {
        self.hands[color.index()]
    }

    /// Where the king of `color` stands; `None` only in a problem position without that king
    /// (see [`Position::from_sfen_problem`]).
    #[inline]
    pub fn king_square(&self, color: Color) -> Option<Square> {
        self.kings[color.index()]
    }

    /// Every piece on the board with its square, in square index order.
    pub fn pieces(&self) -> impl Iterator<Item = (Square, Piece)> + '_ {
        self.occupied()
            .map(move |sq| (sq, self.piece_at(sq).expect("occupied")))
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// The squares holding pieces of `color`.
    #[inline]
    pub fn pieces_by_color(&self, color: Color) -> Bitboard {
        self.by_color[color.index()]
    }

    /// The squares holding pieces of `color` and `kind`.
    #[inline]
    pub fn pieces_of(&self, color: Color, kind: PieceKind) -> Bitboard {
        self.kind_bb(kind) & self.by_color[color.index()]
    }

    /// The squares holding pieces of `kind`, either colour.
    #[inline]
    pub(crate) fn kind_bb(&self, kind: PieceKind) -> Bitboard {
        let base = self.by_kind[kind.unpromote().index()];
        if kind.is_promoted() {
            base & self.promoted
        } else if kind.can_promote() {
            base & !self.promoted
        } else {
            base
        }
    }

    /// The board of an unpromoted kind with its promoted pieces (a rook's board holds dragons).
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) fn base_bb(&self, kind: PieceKind) -> Bitboard {
        self.by_kind[kind.index()]
    }

    /// The promoted pieces.
    #[inline(always)]
    #[allow(dead_code)]
    pub(crate) fn promoted_bb(&self) -> Bitboard {
        self.promoted
    }

    /// Pieces that move like a gold: gold and the four promoted minor pieces.
    #[inline]
    pub(crate) fn gold_movers(&self) -> Bitboard {
        use PieceKind as K;
        let b = &self.by_kind;
        b[K::Gold.index()] | (self.promoted & !(b[K::Bishop.index()] | b[K::Rook.index()]))
    }

    /// The 64-bit Zobrist hash of board, hands and side to move (see [`crate::zobrist`]); the
    /// move number is not part of it.
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Whether both are the same position in the sense of docs/rules.md section 2 (同一局面): the same
    /// pieces on the same squares, the same hands, the same side to move; the move number does
    /// not count.
    pub fn same_position(&self, other: &Position) -> bool {
        self.hash == other.hash
            && self.kinds == other.kinds
            && self.by_color == other.by_color
            && self.hands == other.hands
            && self.side == other.side
    }

    /// The pieces of `by` that attack `sq`, with `occupied` as the blockers.
    #[inline]
    pub(crate) fn attackers_to_occ(&self, sq: Square, by: Color, occupied: Bitboard) -> Bitboard {
        self.attackers_among(sq, !by, self.by_color[by.index()], occupied)
    }

    /// The pieces of `theirs` (pieces of the side opposing `me`) that attack `sq`, with
    /// `occupied` as the blockers. Sliders are traced only when one stands on a line through
    /// `sq`, which is rare, so most calls are a few table lookups.
    #[inline]
    pub(crate) fn attackers_among(
        &self,
        sq: Square,
        me: Color,
        theirs: Bitboard,
        occupied: Bitboard,
    ) -> Bitboard {
        use PieceKind as K;
        let b = &self.by_kind;
        let mut a = self.step_attackers(sq, me) & theirs;
        let rooks = b[K::Rook.index()] & theirs;
        if (attacks::rook_pseudo(sq) & rooks).any() {
            a |= attacks::rook(sq, occupied) & rooks;
        }
        let bishops = b[K::Bishop.index()] & theirs;
        if (attacks::bishop_pseudo(sq) & bishops).any() {
            a |= attacks::bishop(sq, occupied) & bishops;
        }
        let lances = b[K::Lance.index()] & !self.promoted & theirs;
        if (attacks::lance_pseudo(me, sq) & lances).any() {
            a |= attacks::lance(me, sq, occupied) & lances;
        }
        a
    }

    /// The pieces of either colour that would attack `sq` by a step if they were the enemies of
    /// `me`: pawns, knights, silvers, gold movers, kings and the king steps of horse and dragon.
    #[inline(always)]
    fn step_attackers(&self, sq: Square, me: Color) -> Bitboard {
        use PieceKind as K;
        let b = &self.by_kind;
        let big = b[K::Bishop.index()] | b[K::Rook.index()];
        let unpromoted = ((attacks::pawn(me, sq) & b[K::Pawn.index()])
            | (attacks::knight(me, sq) & b[K::Knight.index()])
            | (attacks::silver(me, sq) & b[K::Silver.index()]))
            & !self.promoted;
        let golds = b[K::Gold.index()] | (self.promoted & !big);
        let kingly = b[K::King.index()] | (self.promoted & big);
        unpromoted | (attacks::gold(me, sq) & golds) | (attacks::king(sq) & kingly)
    }

    /// Whether a piece of `theirs` attacks `sq` (see [`Position::attackers_among`]); stops at
    /// the first attacker found, step pieces first. Kept out of line: its callers (a king's
    /// move in `check_move`, pawn-drop mate) are rare paths, and inlined it made the common ones
    /// dearer (measured with callgrind).
    #[inline(never)]
    pub(crate) fn attacked_among(
        &self,
        sq: Square,
        me: Color,
        theirs: Bitboard,
        occupied: Bitboard,
    ) -> bool {
        use PieceKind as K;
        // Attackers stand on a line through `sq` or a knight's jump from it: often none do.
        if (attacks::attack_sources(sq) & theirs).is_empty() {
            return false;
        }
        let b = &self.by_kind;
        if (self.step_attackers(sq, me) & theirs).any() {
            return true;
        }
        let rooks = b[K::Rook.index()] & theirs;
        if (attacks::rook_pseudo(sq) & rooks).any() && (attacks::rook(sq, occupied) & rooks).any() {
            return true;
        }
        let bishops = b[K::Bishop.index()] & theirs;
        if (attacks::bishop_pseudo(sq) & bishops).any()
            && (attacks::bishop(sq, occupied) & bishops).any()
        {
            return true;
        }
        let lances = b[K::Lance.index()] & !self.promoted & theirs;
        (attacks::lance_pseudo(me, sq) & lances).any()
            && (attacks::lance(me, sq, occupied) & lances).any()
    }

    /// The squares next to `sq` that a piece of `theirs` (pieces of the side opposing `me`)
    /// attacks, with `occupied` as the blockers: all of a king's moves tested at once. Only the
    /// step pieces within reach of those squares are looked at, and the sliders whose empty-board
    /// reach crosses them, which is few pieces even in a crowded position.
    #[inline]
    pub(crate) fn attacked_around(
        &self,
        sq: Square,
        me: Color,
        theirs: Bitboard,
        occupied: Bitboard,
    ) -> Bitboard {
        use PieceKind as K;
        let them = !me;
        let zone = attacks::king(sq);
        let b = &self.by_kind;
        let rooks = b[K::Rook.index()] & theirs;
        let bishops = b[K::Bishop.index()] & theirs;
        let lances = b[K::Lance.index()] & !self.promoted & theirs;
        let mut attacked = Bitboard::EMPTY;
        for s in attacks::step_reach(sq) & theirs & !(rooks | bishops | lances) {
            let kind = kind_of_code(self.kind_code(s));
            attacked |= attacks::piece(them, kind, s, occupied);
        }
        // A slider reaches a square of the zone on its line when nothing stands between: a
        // lookup per square it could reach, instead of tracing its rays.
        let mut reach = |s: Square, line: Bitboard| {
            for z in line & zone {
                if (attacks::between(s, z) & occupied).is_empty() {
                    attacked |= Bitboard::bit(z);
                }
            }
        };
        for s in rooks {
            reach(s, attacks::rook_pseudo(s));
        }
        for s in bishops {
            reach(s, attacks::bishop_pseudo(s));
        }
        for s in lances {
            reach(s, attacks::lance_pseudo(them, s));
        }
        // Dragons and horses also step like a king.
        for s in (rooks | bishops) & self.promoted {
            attacked |= attacks::king(s);
        }
        attacked & zone
    }

    /// The pieces of `by` that attack `sq`.
    #[inline]
    pub fn attackers_to(&self, sq: Square, by: Color) -> Bitboard {
        self.attackers_to_occ(sq, by, self.occupied())
    }

    /// Whether a piece of `by` attacks `sq`.
    #[inline]
    pub fn is_attacked(&self, sq: Square, by: Color) -> bool {
        self.attackers_to(sq, by).any()
    }

    /// The pieces giving check to the side to move.
    #[inline]
    pub fn checkers(&self) -> Bitboard {
        match self.last {
            Some(l) => self.checkers_after(l.from, l.to, l.kind, !self.side),
            None => self.checkers_from_sfen(),
        }
    }

    /// The checkers recorded by [`Position::finish`].
    #[inline(always)]
    fn checkers_from_sfen(&self) -> Bitboard {
        let c = self.sfen_checkers;
        if c.squares[0] == SfenCheckers::NONE {
            return Bitboard::EMPTY;
        }
        if c.more {
            return self.compute_checkers();
        }
        let mut b = Bitboard::EMPTY;
        for s in c.squares {
            if s != SfenCheckers::NONE {
                b |= Bitboard::bit(Square::from_index_unchecked(s));
            }
        }
        b
    }

    /// [`Position::checkers`] with the test after a move kept out of line, for callers whose
    /// common path should stay small (`check_move`).
    #[inline(always)]
    pub(crate) fn checkers_out_of_line(&self) -> Bitboard {
        match self.last {
            Some(_) => self.checkers_after_last(),
            None => self.checkers_from_sfen(),
        }
    }

    #[inline(never)]
    fn checkers_after_last(&self) -> Bitboard {
        self.checkers()
    }

    /// Whether the side to move is in check (王手).
    #[inline]
    pub fn in_check(&self) -> bool {
        self.checkers().any()
    }

    /// Whether the side not to move is in check, as in a problem position; such a game is not
    /// one that legal play reaches.
    pub fn opponent_in_check(&self) -> bool {
        self.kings[(!self.side).index()].is_some_and(|k| self.is_attacked(k, self.side))
    }

    /// Pieces of `color` pinned to their king by an enemy slider.
    pub(crate) fn pinned(&self, color: Color, occupied: Bitboard) -> Bitboard {
        use PieceKind as K;
        let Some(ksq) = self.kings[color.index()] else {
            return Bitboard::EMPTY;
        };
        let them = self.by_color[(!color).index()];
        let b = &self.by_kind;
        let snipers = ((attacks::rook_pseudo(ksq) & b[K::Rook.index()])
            | (attacks::bishop_pseudo(ksq) & b[K::Bishop.index()])
            | (attacks::lance_pseudo(color, ksq) & b[K::Lance.index()] & !self.promoted))
            & them;
        let mut pinned = Bitboard::EMPTY;
        for s in snipers {
            let between = attacks::between(ksq, s) & occupied;
            if between.any() && !between.has_more_than_one() {
                pinned |= between;
            }
        }
        pinned & self.by_color[color.index()]
    }

    /// Every legal move of the side to move, including non-promotions of pawn, bishop and rook.
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        movegen::generate(self, &mut list);
        list
    }

    /// The number of legal moves, counted without listing them.
    pub fn count_legal_moves(&self) -> u64 {
        crate::cpu::count_legal_moves(self)
    }

    /// Whether the side to move has at least one legal move.
    pub fn has_legal_move(&self) -> bool {
        self.count_legal_moves() > 0
    }

    /// Whether the side to move is checkmated (詰み): in check with no legal move.
    pub fn is_checkmate(&self) -> bool {
        self.in_check() && !self.has_legal_move()
    }

    /// Parses a USI move (text only; see [`Position::check_move`] for legality here).
    pub fn parse_usi(&self, text: &str) -> Result<Move, ParseUsiError> {
        Move::from_usi(text)
    }

    /// Checks `mv` for the side to move, naming why it is illegal. Inlined where it is called
    /// (the rare paths are calls of their own), so that a caller testing many moves pays no
    /// call per move.
    #[inline]
    pub fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        movegen::check(self, mv).map_err(|kind| IllegalMove { mv, kind })
    }

    /// Checks `mv` as played by `mover`: a move by the side not to move is `wrong_turn`.
    pub fn check_move_as(&self, mover: Color, mv: Move) -> Result<(), IllegalMove> {
        if mover != self.side {
            return Err(IllegalMove {
                mv,
                kind: IllegalKind::WrongTurn,
            });
        }
        self.check_move(mv)
    }

    /// [`Position::check_move_as`] for a caller that knows whether the side to move is in
    /// check: `in_check` must be [`Position::in_check`]'s answer (debug builds check it), and
    /// the answer is then `check_move_as`'s. A record reader knows it from the move before,
    /// whose check it found as it played it: the test is not made twice a move.
    pub fn check_move_as_knowing_check(
        &self,
        mover: Color,
        mv: Move,
        in_check: bool,
    ) -> Result<(), IllegalMove> {
        debug_assert_eq!(in_check, self.in_check(), "a wrong check flag");
        if mover != self.side {
            return Err(IllegalMove {
                mv,
                kind: IllegalKind::WrongTurn,
            });
        }
        movegen::check_with(self, mv, Some(in_check)).map_err(|kind| IllegalMove { mv, kind })
    }

    /// Plays `mv` if it is legal; on error the position is unchanged.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        self.check_move(mv)?;
        self.play_unchecked(mv);
        Ok(())
    }

    /// Plays `mv`, which the caller knows to be legal (generated here, or checked). An illegal
    /// move leaves the position in an unspecified (but memory-safe) state.
    #[inline]
    pub fn play_unchecked(&mut self, mv: Move) {
        self.play_inline(mv);
    }

    /// The body of [`Position::play_unchecked`], inlined into perft's loops.
    #[inline(always)]
    pub(crate) fn play_inline(&mut self, mv: Move) {
        let us = self.side;
        match mv {
            Move::Normal { from, to, promote } => {
                // Each square's bit is read once; colour and kind boards change by XOR.
                let from_bb = Bitboard::bit(from);
                let to_bb = Bitboard::bit(to);
                let piece_kind = kind_of_code(self.kind_code(from));
                let captured = self.kind_code(to);
                if captured != 0 {
                    let captured = kind_of_code(captured);
                    let base = captured.unpromote();
                    self.by_kind[base.index()] ^= to_bb;
                    self.by_color[(!us).index()] ^= to_bb;
                    self.hash ^= zobrist::piece_square_fast(!us, captured, to)
                        ^ zobrist::hand_step(us, base, self.hands[us.index()].count_of(base));
                    self.hands[us.index()].add(base);
                }
                let kind = match promote {
                    true => piece_kind.promote().unwrap_or(piece_kind),
                    false => piece_kind,
                };
                self.by_color[us.index()] ^= from_bb | to_bb;
                self.by_kind[piece_kind.unpromote().index()] ^= from_bb | to_bb;
                // The destination is promoted exactly when the piece now standing there is.
                self.promoted &= !(from_bb | to_bb);
                if kind.is_promoted() {
                    self.promoted |= to_bb;
                }
                self.set_kind_code(from, 0);
                self.set_kind_code(to, kind as u8 + 1);
                self.hash ^= zobrist::piece_square_fast(us, piece_kind, from)
                    ^ zobrist::piece_square_fast(us, kind, to);
                if kind == PieceKind::King {
                    self.kings[us.index()] = Some(to);
                }
                self.last = Some(LastMove {
                    from: Some(from),
                    to,
                    kind,
                });
            }
            Move::Drop { kind, to } => {
                let hand = &mut self.hands[us.index()];
                let n = hand.count_of(kind);
                hand.remove(kind);
                let b = Bitboard::bit(to);
                // `& 7`: a legal drop is of a hand kind already; an illegal one must not index
                // out of bounds.
                self.by_kind[kind.index() & 7] |= b;
                self.by_color[us.index()] |= b;
                self.set_kind_code(to, kind as u8 + 1);
                self.hash ^=
                    zobrist::hand_step(us, kind, n - 1) ^ zobrist::piece_square_fast(us, kind, to);
                self.last = Some(LastMove {
                    from: None,
                    to,
                    kind,
                });
            }
        }
        self.side = !us;
        self.hash ^= zobrist::side();
        self.move_number += 1;
    }

    /// The pieces of `us`, who just moved a piece of `kind` (after promotion) from `from` (none
    /// for a drop) to `to`, that now check the other side. The moved piece is tested with a
    /// table lookup; a slider it may have uncovered needs a full attack test only when `from` is
    /// aligned with the enemy king and `to` is off that line.
    #[inline(always)]
    fn checkers_after(
        &self,
        from: Option<Square>,
        to: Square,
        kind: PieceKind,
        us: Color,
    ) -> Bitboard {
        use PieceKind as K;
        let them = !us;
        let Some(k) = self.kings[them.index()] else {
            return Bitboard::EMPTY;
        };
        if let Some(from) = from
            && attacks::aligned(k, from)
            && !attacks::line(k, from).contains(to)
        {
            return self.attackers_among(k, them, self.by_color[us.index()], self.occupied());
        }
        let direct = match kind {
            K::Pawn => attacks::pawn(us, to).contains(k),
            K::Knight => attacks::knight(us, to).contains(k),
            K::Silver => attacks::silver(us, to).contains(k),
            K::Gold | K::ProPawn | K::ProLance | K::ProKnight | K::ProSilver => {
                attacks::gold(us, to).contains(k)
            }
            K::King => false,
            _ => {
                let reach = match kind {
                    K::Lance => attacks::lance_pseudo(us, to),
                    K::Rook => attacks::rook_pseudo(to),
                    K::Bishop => attacks::bishop_pseudo(to),
                    K::Horse => attacks::bishop_pseudo(to) | attacks::king(to),
                    _ => attacks::rook_pseudo(to) | attacks::king(to),
                };
                reach.contains(k) && (attacks::between(to, k) & self.occupied()).is_empty()
            }
        };
        if direct {
            Bitboard::from_square(to)
        } else {
            Bitboard::EMPTY
        }
    }

    /// Whether `mv` (legal here) gives check.
    pub fn gives_check(&self, mv: Move) -> bool {
        let mut after = self.clone();
        after.play_unchecked(mv);
        after.in_check()
    }

    /// The hash recomputed from scratch (for tests of the incremental update).
    pub fn recompute_hash(&self) -> u64 {
        debug_assert_eq!(self.checkers(), self.compute_checkers());
        let mut h = 0;
        for (sq, p) in self.pieces() {
            h ^= zobrist::piece_square(p, sq);
        }
        for color in Color::ALL {
            for kind in PieceKind::HAND {
                h ^= zobrist::hand(color, kind, self.hands[color.index()].count(kind));
            }
        }
        if self.side == Color::White {
            h ^= zobrist::side();
        }
        h
    }
}

impl Default for Position {
    fn default() -> Position {
        Position::startpos()
    }
}

impl PartialEq for Position {
    /// Full equality: the same position and the same move number.
    fn eq(&self, other: &Position) -> bool {
        self.same_position(other) && self.move_number == other.move_number
    }
}

impl Eq for Position {}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_sfen())
    }
}

impl fmt::Display for Position {
    /// SFEN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_sfen())
    }
}

#[cfg(test)]
mod tests {
    /// Perft's full mode copies a position per leaf: glibc copies up to 256 bytes with
    /// straight-line code and loops beyond.
    #[test]
    fn a_position_fits_in_256_bytes() {
        assert!(std::mem::size_of::<super::Position>() <= 256);
    }
}
