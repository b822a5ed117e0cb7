//! Piece kinds and pieces.

use crate::Color;
use std::fmt;

/// The fourteen kinds of piece, unpromoted and promoted.
///
/// The first seven are the kinds that can be held in hand, in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PieceKind {
    /// 歩 (fu), `P`.
    Pawn = 0,
    /// 香 (kyō), `L`.
    Lance = 1,
    /// 桂 (kei), `N`.
    Knight = 2,
    /// 銀 (gin), `S`.
    Silver = 3,
    /// 金 (kin), `G`.
    Gold = 4,
    /// 角 (kaku), `B`.
    Bishop = 5,
    /// 飛 (hisha), `R`.
    Rook = 6,
    /// 玉/王 (gyoku/ō), `K`.
    King = 7,
    /// と (tokin), `+P`.
    ProPawn = 8,
    /// 成香 (narikyō), `+L`.
    ProLance = 9,
    /// 成桂 (narikei), `+N`.
    ProKnight = 10,
    /// 成銀 (narigin), `+S`.
    ProSilver = 11,
    /// 馬 (uma), promoted bishop, `+B`.
    Horse = 12,
    /// 龍 (ryū), promoted rook, `+R`.
    Dragon = 13,
}

impl PieceKind {
    /// Number of kinds.
    pub const COUNT: usize = 14;

    /// All kinds in index order.
    pub const ALL: [PieceKind; 14] = [
        PieceKind::Pawn,
        PieceKind::Lance,
        PieceKind::Knight,
        PieceKind::Silver,
        PieceKind::Gold,
        PieceKind::Bishop,
        PieceKind::Rook,
        PieceKind::King,
        PieceKind::ProPawn,
        PieceKind::ProLance,
        PieceKind::ProKnight,
        PieceKind::ProSilver,
        PieceKind::Horse,
        PieceKind::Dragon,
    ];

    /// The seven kinds a hand can hold, in index order (pawn first).
    pub const HAND: [PieceKind; 7] = [
        PieceKind::Pawn,
        PieceKind::Lance,
        PieceKind::Knight,
        PieceKind::Silver,
        PieceKind::Gold,
        PieceKind::Bishop,
        PieceKind::Rook,
    ];

    /// Index 0..14.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The kind with this index, or `None`.
    #[inline]
    pub const fn from_index(index: usize) -> Option<PieceKind> {
        if index < 14 {
            Some(Self::ALL[index])
        } else {
            None
        }
    }

    /// The promoted kind, or `None` for gold, king and kinds already promoted.
    #[inline]
    pub const fn promote(self) -> Option<PieceKind> {
        match self {
            PieceKind::Pawn => Some(PieceKind::ProPawn),
            PieceKind::Lance => Some(PieceKind::ProLance),
            PieceKind::Knight => Some(PieceKind::ProKnight),
            PieceKind::Silver => Some(PieceKind::ProSilver),
            PieceKind::Bishop => Some(PieceKind::Horse),
            PieceKind::Rook => Some(PieceKind::Dragon),
            _ => None,
        }
    }

    /// The unpromoted kind (a captured piece goes to hand as this kind).
    #[inline]
    pub const fn unpromote(self) -> PieceKind {
        match self {
            PieceKind::ProPawn => PieceKind::Pawn,
            PieceKind::ProLance => PieceKind::Lance,
            PieceKind::ProKnight => PieceKind::Knight,
            PieceKind::ProSilver => PieceKind::Silver,
            PieceKind::Horse => PieceKind::Bishop,
            PieceKind::Dragon => PieceKind::Rook,
            k => k,
        }
    }

    /// Whether the kind is a promoted one.
    #[inline]
    pub const fn is_promoted(self) -> bool {
        self as u8 >= 8
    }

    /// Whether the kind can promote.
    #[inline]
    pub const fn can_promote(self) -> bool {
        self.promote().is_some()
    }

    /// Whether the kind can be held in hand (pawn..rook, unpromoted, not the king).
    #[inline]
    pub const fn is_hand_kind(self) -> bool {
        (self as u8) < 7
    }

    /// Impasse points (入玉 点数): 5 for rook, bishop, dragon and horse, 0 for the king, 1 for
    /// every other piece, promoted or not (docs/rules.md section 4).
    #[inline]
    pub const fn impasse_points(self) -> u32 {
        match self {
            PieceKind::Rook | PieceKind::Bishop | PieceKind::Dragon | PieceKind::Horse => 5,
            PieceKind::King => 0,
            _ => 1,
        }
    }

    /// How many pieces of this kind (counting both promotion states) a full set has.
    #[inline]
    pub const fn max_count(self) -> u8 {
        match self.unpromote() {
            PieceKind::Pawn => 18,
            PieceKind::Lance | PieceKind::Knight | PieceKind::Silver | PieceKind::Gold => 4,
            _ => 2,
        }
    }

    /// The upper-case SFEN letter of the unpromoted kind (`P`, `L`, `N`, `S`, `G`, `B`, `R`, `K`).
    #[inline]
    pub const fn sfen_letter(self) -> char {
        match self.unpromote() {
            PieceKind::Pawn => 'P',
            PieceKind::Lance => 'L',
            PieceKind::Knight => 'N',
            PieceKind::Silver => 'S',
            PieceKind::Gold => 'G',
            PieceKind::Bishop => 'B',
            PieceKind::Rook => 'R',
            _ => 'K',
        }
    }

    /// The unpromoted kind of an SFEN letter of either case, or `None`.
    #[inline]
    pub const fn from_sfen_letter(c: u8) -> Option<PieceKind> {
        match c.to_ascii_uppercase() {
            b'P' => Some(PieceKind::Pawn),
            b'L' => Some(PieceKind::Lance),
            b'N' => Some(PieceKind::Knight),
            b'S' => Some(PieceKind::Silver),
            b'G' => Some(PieceKind::Gold),
            b'B' => Some(PieceKind::Bishop),
            b'R' => Some(PieceKind::Rook),
            b'K' => Some(PieceKind::King),
            _ => None,
        }
    }

    /// The two-letter CSA name (`FU`, `KY`, `KE`, `GI`, `KI`, `KA`, `HI`, `OU`, `TO`, `NY`, `NK`,
    /// `NG`, `UM`, `RY`).
    pub const fn csa_name(self) -> &'static str {
        match self {
            PieceKind::Pawn => "FU",
            PieceKind::Lance => "KY",
            PieceKind::Knight => "KE",
            PieceKind::Silver => "GI",
            PieceKind::Gold => "KI",
            PieceKind::Bishop => "KA",
            PieceKind::Rook => "HI",
            PieceKind::King => "OU",
            PieceKind::ProPawn => "TO",
            PieceKind::ProLance => "NY",
            PieceKind::ProKnight => "NK",
            PieceKind::ProSilver => "NG",
            PieceKind::Horse => "UM",
            PieceKind::Dragon => "RY",
        }
    }

    /// The kind of a two-letter CSA name, or `None`.
    pub fn from_csa_name(name: &str) -> Option<PieceKind> {
        PieceKind::from_csa_bytes(name.as_bytes())
    }

    /// [`PieceKind::from_csa_name`] on bytes, as a reader finds them (`FU` in `+7776FU`):
    /// each name compared as one two-byte number, with no UTF-8 check first. The CSA reader
    /// calls it once a move.
    #[inline]
    pub fn from_csa_bytes(name: &[u8]) -> Option<PieceKind> {
        let &[a, b] = name else {
            return None;
        };
        let wanted = u16::from_le_bytes([a, b]);
        PieceKind::ALL.into_iter().find(|k| {
            let n = k.csa_name().as_bytes();
            u16::from_le_bytes([n[0], n[1]]) == wanted
        })
    }
}

/// A piece: a kind and its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Piece {
    /// The owner.
    pub color: Color,
    /// The kind.
    pub kind: PieceKind,
}

impl Piece {
    /// A piece of `color` and `kind`.
    #[inline]
    pub const fn new(color: Color, kind: PieceKind) -> Piece {
        Piece { color, kind }
    }

    /// A dense index 0..28: kind + 14 * colour.
    #[inline]
    pub const fn index(self) -> usize {
        self.kind as usize + 14 * self.color as usize
    }
}

impl fmt::Display for Piece {
    /// SFEN notation: `+P`, `k`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind.is_promoted() {
            f.write_str("+")?;
        }
        let c = self.kind.sfen_letter();
        let c = match self.color {
            Color::Black => c,
            Color::White => c.to_ascii_lowercase(),
        };
        write!(f, "{c}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every CSA name reads back as its kind, from text and from bytes; anything else is none.
    #[test]
    fn csa_names_read_back() {
        for kind in PieceKind::ALL {
            assert_eq!(PieceKind::from_csa_name(kind.csa_name()), Some(kind));
            assert_eq!(
                PieceKind::from_csa_bytes(kind.csa_name().as_bytes()),
                Some(kind)
            );
        }
        for name in ["", "F", "FUU", "fu", "UF", "OO", "\0\0", "歩"] {
            assert_eq!(PieceKind::from_csa_name(name), None, "{name:?}");
            assert_eq!(PieceKind::from_csa_bytes(name.as_bytes()), None, "{name:?}");
        }
    }
}
