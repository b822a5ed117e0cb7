//! An unvalidated starting position as the record text describes it; it becomes a `Position`
//! only through `Position::from_sfen_problem`, so the core's validation applies to every record.

use shogi_rules::{Color, Piece, PieceKind, Position, SfenError, Square};

/// Bits 1..=9 of [`Setup::rows_given`].
pub(crate) const ALL_ROWS: u16 = 0b11_1111_1110;

/// The giver's pieces in the order the customary handicaps remove them (rook, bishop, left
/// lance, right lance, knights, silvers): 飛車落ち is the first of them, 二枚落ち the first two,
/// up to 十枚落ち, the first ten.
const REMOVAL_ORDER: [(u8, u8); 10] = [
    (8, 2),
    (2, 2),
    (1, 1),
    (9, 1),
    (8, 1),
    (2, 1),
    (3, 1),
    (7, 1),
    (4, 1),
    (6, 1),
];

/// The first `n` of [`REMOVAL_ORDER`].
const fn first(n: usize) -> &'static [(u8, u8)] {
    REMOVAL_ORDER.split_at(n).0
}

/// The standard handicaps (手合割) by KIF name, with the squares (file, rank) of White's pieces
/// removed, the even game first.
///
/// Source of the removed squares: the handicap tables of tsshogi, python-shogi's KIF reader and
/// ShogiBoardQ, which agree.
pub(crate) const HANDICAPS: [(&str, &[(u8, u8)]); 16] = [
    ("平手", &[]),
    ("香落ち", &[(1, 1)]),
    ("右香落ち", &[(9, 1)]),
    ("角落ち", &[(2, 2)]),
    ("飛車落ち", first(1)),
    ("飛香落ち", &[(8, 2), (1, 1)]),
    ("二枚落ち", first(2)),
    ("三枚落ち", first(3)),
    ("四枚落ち", first(4)),
    ("五枚落ち", first(5)),
    ("左五枚落ち", &[(8, 2), (2, 2), (1, 1), (9, 1), (2, 1)]),
    ("六枚落ち", first(6)),
    ("左七枚落ち", first(7)),
    (
        "右七枚落ち",
        &[(8, 2), (2, 2), (1, 1), (9, 1), (8, 1), (2, 1), (7, 1)],
    ),
    ("八枚落ち", first(8)),
    ("十枚落ち", first(10)),
];

/// Board, hands and side to move, not yet checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Setup {
    /// Indexed by `Square::index`.
    pub board: [Option<Piece>; 81],
    /// Counts per hand kind (pawn..rook), per colour.
    pub hands: [[u8; 7]; 2],
    pub side: Color,
    /// CSA: bit `r` set when row `Pr` was given (bits 1..=9); all set after `PI`.
    pub rows_given: u16,
}

impl Setup {
    pub fn empty() -> Setup {
        Setup {
            board: [None; 81],
            hands: [[0; 7]; 2],
            side: Color::Black,
            rows_given: 0,
        }
    }

    /// The even-game position.
    pub fn startpos() -> Setup {
        let mut s = Setup::empty();
        let back = [
            PieceKind::Lance,
            PieceKind::Knight,
            PieceKind::Silver,
            PieceKind::Gold,
            PieceKind::King,
            PieceKind::Gold,
            PieceKind::Silver,
            PieceKind::Knight,
            PieceKind::Lance,
        ];
        for file in 1..=9u8 {
            let kind = back[file as usize - 1];
            s.set(file, 1, Some(Piece::new(Color::White, kind)));
            s.set(file, 9, Some(Piece::new(Color::Black, kind)));
            s.set(file, 3, Some(Piece::new(Color::White, PieceKind::Pawn)));
            s.set(file, 7, Some(Piece::new(Color::Black, PieceKind::Pawn)));
        }
        s.set(8, 2, Some(Piece::new(Color::White, PieceKind::Rook)));
        s.set(2, 2, Some(Piece::new(Color::White, PieceKind::Bishop)));
        s.set(2, 8, Some(Piece::new(Color::Black, PieceKind::Rook)));
        s.set(8, 8, Some(Piece::new(Color::Black, PieceKind::Bishop)));
        s.rows_given = ALL_ROWS;
        s
    }

    /// A standard handicap (手合割) by its KIF name: the even-game position without the
    /// giver's pieces, White (上手, the giver) to move. `平手` is the even game.
    pub fn handicap(name: &str) -> Option<Setup> {
        let (_, removed) = HANDICAPS.iter().find(|(n, _)| *n == name)?;
        let mut s = Setup::startpos();
        if !removed.is_empty() {
            s.side = Color::White;
        }
        for &(file, rank) in *removed {
            s.set(file, rank, None);
        }
        Some(s)
    }

    pub fn get(&self, file: u8, rank: u8) -> Option<Piece> {
        Square::new(file, rank).and_then(|sq| self.board[sq.index()])
    }

    pub fn set(&mut self, file: u8, rank: u8, piece: Option<Piece>) {
        if let Some(sq) = Square::new(file, rank) {
            self.board[sq.index()] = piece;
        }
    }

    /// Puts every piece not on the board or in a hand into `color`'s hand (CSA `00AL`); kings
    /// are never put in hand.
    pub fn all_remaining_to_hand(&mut self, color: Color) {
        for (i, kind) in PieceKind::HAND.into_iter().enumerate() {
            let on_board = self
                .board
                .iter()
                .flatten()
                .filter(|p| p.kind.unpromote() == kind)
                .count();
            let held = self.hands[0][i] as usize + self.hands[1][i] as usize;
            let rest = (kind.max_count() as usize).saturating_sub(on_board + held);
            self.hands[color.index()][i] = self.hands[color.index()][i].saturating_add(rest as u8);
        }
    }

    /// SFEN text of the setup, move number 1. Written a character at a time: every record
    /// that is read goes through here, and a `to_string` per piece made it cost as much as
    /// reading forty moves (the archive benchmark's profile).
    pub fn to_sfen(&self) -> String {
        let mut out = String::with_capacity(96);
        let digit = |n: u8| char::from(b'0' + n);
        for rank in 1..=9u8 {
            let mut empty = 0u8;
            for file in (1..=9u8).rev() {
                match self.get(file, rank) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            out.push(digit(empty));
                            empty = 0;
                        }
                        if p.kind.is_promoted() {
                            out.push('+');
                        }
                        let c = p.kind.sfen_letter();
                        out.push(match p.color {
                            Color::Black => c,
                            Color::White => c.to_ascii_lowercase(),
                        });
                    }
                }
            }
            if empty > 0 {
                out.push(digit(empty));
            }
            if rank < 9 {
                out.push('/');
            }
        }
        out.push(' ');
        out.push(self.side.sfen_char());
        out.push(' ');
        let hand_start = out.len();
        // SFEN's customary order: rook, bishop, gold, silver, knight, lance, pawn; Black first.
        for color in Color::ALL {
            for kind in PieceKind::HAND.into_iter().rev() {
                let n = self.hands[color.index()][kind.index()];
                if n == 0 {
                    continue;
                }
                if n > 1 {
                    // A count is at most 255 (u8): up to three digits.
                    if n >= 100 {
                        out.push(digit(n / 100));
                    }
                    if n >= 10 {
                        out.push(digit(n / 10 % 10));
                    }
                    out.push(digit(n % 10));
                }
                let c = kind.sfen_letter();
                out.push(match color {
                    Color::Black => c,
                    Color::White => c.to_ascii_lowercase(),
                });
            }
        }
        if out.len() == hand_start {
            out.push('-');
        }
        out.push_str(" 1");
        out
    }

    /// The validated position. Records start from problem positions too (詰将棋 without the
    /// attacker's king, joke problems such as 九歩), so the core's problem-position rules apply.
    pub fn to_position(&self) -> Result<Position, SfenError> {
        // Most records start from the even-game position: it is written and parsed once, then
        // copied (writing and parsing an SFEN cost some 8,000 instructions a record).
        static EVEN: std::sync::OnceLock<(Setup, Result<Position, SfenError>)> =
            std::sync::OnceLock::new();
        let (even, position) = EVEN.get_or_init(|| {
            let even = Setup::startpos();
            let position = Position::from_sfen_problem(&even.to_sfen());
            (even, position)
        });
        if self.board == even.board && self.hands == even.hands && self.side == even.side {
            return position.clone();
        }
        Position::from_sfen_problem(&self.to_sfen())
    }
}
