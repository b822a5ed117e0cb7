//! The standard handicap start positions (駒落ち), for the handicap credit of docs/rules.md
//! section 4.
//!
//! The handicap giver (上手, uwate) is White and moves first. The pieces removed are White's; the
//! credit [`crate::handicap_credit`] computes from a start position is their point value.

use shogi_rules::Position;

/// A standard handicap (the JSA's list, with the giver's pieces removed from White's side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Handicap {
    /// 香落ち: the left lance (1a).
    Lance,
    /// 右香落ち: the right lance (9a).
    RightLance,
    /// 角落ち: the bishop.
    Bishop,
    /// 飛車落ち: the rook.
    Rook,
    /// 飛香落ち: the rook and the left lance.
    RookLance,
    /// 二枚落ち: rook and bishop.
    TwoPiece,
    /// 四枚落ち: rook, bishop and both lances.
    FourPiece,
    /// 六枚落ち: rook, bishop, lances and knights.
    SixPiece,
    /// 八枚落ち: rook, bishop, lances, knights and silvers.
    EightPiece,
    /// 十枚落ち: everything but the king and the pawns.
    TenPiece,
}

impl Handicap {
    /// Every standard handicap, smallest first.
    pub const ALL: [Handicap; 10] = [
        Handicap::Lance,
        Handicap::RightLance,
        Handicap::Bishop,
        Handicap::Rook,
        Handicap::RookLance,
        Handicap::TwoPiece,
        Handicap::FourPiece,
        Handicap::SixPiece,
        Handicap::EightPiece,
        Handicap::TenPiece,
    ];

    /// A short snake-case name (`lance`, `two_piece`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Handicap::Lance => "lance",
            Handicap::RightLance => "right_lance",
            Handicap::Bishop => "bishop",
            Handicap::Rook => "rook",
            Handicap::RookLance => "rook_lance",
            Handicap::TwoPiece => "two_piece",
            Handicap::FourPiece => "four_piece",
            Handicap::SixPiece => "six_piece",
            Handicap::EightPiece => "eight_piece",
            Handicap::TenPiece => "ten_piece",
        }
    }

    /// The start position as SFEN, White (the giver) to move.
    pub const fn sfen(self) -> &'static str {
        match self {
            Handicap::Lance => "lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
            Handicap::RightLance => {
                "1nsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
            }
            Handicap::Bishop => "lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
            Handicap::Rook => "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
            Handicap::RookLance => "lnsgkgsn1/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
            Handicap::TwoPiece => "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
            Handicap::FourPiece => "1nsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
            Handicap::SixPiece => "2sgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
            Handicap::EightPiece => "3gkg3/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
            Handicap::TenPiece => "4k4/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",
        }
    }

    /// The start position.
    pub fn start_position(self) -> Position {
        Position::from_sfen(self.sfen()).expect("the handicap start positions are valid")
    }
}
