//! Identifiers (player names, a game name's base) and game names with their time control.
//!
//! shogi-server reads the time control out of the game name a player asks for
//! (`Login.good_game_name?`, `Game.parse_time`): `<base>-<total>-<byoyomi>`, with `F` after the
//! last number for Fischer (`floodgate-300-10F`: 300 s, 10 s added per move), and a last number
//! written with a leading zero (`game-10-05`) for a stop-watch game counted in minutes.

use std::fmt;

/// The longest identifier (player name, game name base) shogi-server accepts by default
/// (`Default_Max_Identifier_Length`, its `--max-identifier` option).
pub const MAX_IDENTIFIER_LEN: usize = 32;

/// Why an identifier was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentifierError {
    /// Nothing at all.
    #[error("empty identifier")]
    Empty,
    /// More than [`MAX_IDENTIFIER_LEN`] characters.
    #[error("identifier of {len} characters, more than {MAX_IDENTIFIER_LEN}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// A character outside `A-Z a-z 0-9 _ @ - .`.
    #[error("character {ch:?} at column {column} is not one of A-Z a-z 0-9 _ @ - .")]
    BadChar {
        /// The character.
        ch: char,
        /// Its 1-based column within the identifier.
        column: usize,
    },
}

/// Checks an identifier as shogi-server's `Login.good_identifier?` does:
/// `\A[\w@\-\.]{1,32}\z`, where Ruby's `\w` is ASCII letters, digits and `_`.
pub fn check_identifier(text: &str) -> Result<(), IdentifierError> {
    if text.is_empty() {
        return Err(IdentifierError::Empty);
    }
    if let Some((i, ch)) = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '@' | '-' | '.')))
    {
        return Err(IdentifierError::BadChar { ch, column: i + 1 });
    }
    if text.len() > MAX_IDENTIFIER_LEN {
        return Err(IdentifierError::TooLong { len: text.len() });
    }
    Ok(())
}

/// The clock a game name asks for, as shogi-server's `Game.parse_time` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeControl {
    /// Main time (`Total_Time`), in [`TimeControl::time_unit`]s.
    pub total: u32,
    /// Byoyomi (秒読み), in time units; 0 for a Fischer game.
    pub byoyomi: u32,
    /// Fischer increment (`Increment`), added after each move; 0 unless the name ends in `F`.
    pub increment: u32,
    /// A stop-watch game (ストップウォッチ): the last number written with a leading zero
    /// (`-05`); time counts in whole minutes (`Time_Unit:1min`) and byoyomi is its unit of
    /// rounding (shogi-server's `StopWatchClock`).
    pub stop_watch: bool,
}

impl TimeControl {
    /// The `Time_Unit` of the game summary: `1min` for a stop-watch game, `1sec` otherwise.
    pub const fn time_unit(&self) -> &'static str {
        if self.stop_watch { "1min" } else { "1sec" }
    }
}

/// The handicaps shogi-server knows by a game name's prefix (`Login.handicapped_game_name?`).
/// In each, Black is the side without the pieces, and Black moves first (shogi-server's
/// `HC*Board` classes remove Black's pieces and leave Black to move).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Handicap {
    /// `hclance_`: 香落ち, the lance on 9i removed.
    Lance,
    /// `hcbishop_`: 角落ち.
    Bishop,
    /// `hcrook_`: 飛車落ち.
    Rook,
    /// `hcrooklance_`: 飛香落ち.
    RookLance,
    /// `hc2p_`: 二枚落ち (rook and bishop).
    TwoPieces,
    /// `hc4p_`: 四枚落ち (and both lances).
    FourPieces,
    /// `hc6p_`: 六枚落ち (and both knights).
    SixPieces,
    /// `hc8p_`: 八枚落ち (and both silvers).
    EightPieces,
    /// `hc10p_`: 十枚落ち (and both golds).
    TenPieces,
}

impl Handicap {
    /// Every handicap with its game name prefix, in shogi-server's order.
    pub const ALL: [(Handicap, &'static str); 9] = [
        (Handicap::Lance, "hclance_"),
        (Handicap::Bishop, "hcbishop_"),
        (Handicap::Rook, "hcrook_"),
        (Handicap::RookLance, "hcrooklance_"),
        (Handicap::TwoPieces, "hc2p_"),
        (Handicap::FourPieces, "hc4p_"),
        (Handicap::SixPieces, "hc6p_"),
        (Handicap::EightPieces, "hc8p_"),
        (Handicap::TenPieces, "hc10p_"),
    ];

    /// The starting position as SFEN: the even start with Black's pieces removed, Black to
    /// move.
    pub const fn sfen(self) -> &'static str {
        match self {
            Handicap::Lance => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/1NSGKGSNL b - 1",
            Handicap::Bishop => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/7R1/LNSGKGSNL b - 1",
            Handicap::Rook => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B7/LNSGKGSNL b - 1",
            Handicap::RookLance => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B7/1NSGKGSNL b - 1",
            Handicap::TwoPieces => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/9/LNSGKGSNL b - 1",
            Handicap::FourPieces => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/9/1NSGKGSN1 b - 1",
            Handicap::SixPieces => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/9/2SGKGS2 b - 1",
            Handicap::EightPieces => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/9/3GKG3 b - 1",
            Handicap::TenPieces => "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/9/4K4 b - 1",
        }
    }
}

/// What kind of game a name asks for, besides its clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameKind {
    /// Two players asking for the same name are paired at once.
    Direct,
    /// `floodgate-<total>-<byoyomi>[F]`: paired by floodgate's scheduler, never directly; the
    /// turn must be `*` (shogi-server's `League::Floodgate.game_name?`).
    Floodgate,
    /// `buoy_...`: starts from a position set up with `%%SETBUOY` (`Buoy.game_name?`).
    Buoy,
    /// `hc..._`: a handicap start, where the turn may not be `*`.
    Handicap(Handicap),
}

/// Why a game name was refused, in shogi-server's words where it has them
/// (`GameChallengeCommand`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameNameError {
    /// Not `<base>-<digits>-<digits>[F]`.
    #[error("game name should consist of three parts like game-1500-60")]
    Shape,
    /// The base is not an identifier.
    #[error("invalid identifiers are found or too many characters are used: {0}")]
    Base(IdentifierError),
    /// A number does not fit in 32 bits.
    #[error("the {field} of the game name is too large")]
    TooLarge {
        /// `total` or `byoyomi`.
        field: &'static str,
    },
}

/// A game name shogi-server accepts, read into its base, clock and kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GameName {
    text: String,
    base_len: usize,
    time: TimeControl,
    kind: GameKind,
}

impl GameName {
    /// Parses `<base>-<total>-<byoyomi>[F]` as `Login.good_game_name?` and `Game.parse_time` do:
    /// the last two dash-separated numbers are the clock (so a base may hold dashes itself),
    /// the base is an identifier.
    pub fn parse(text: &str) -> Result<GameName, GameNameError> {
        let (clock, fischer) = match text.strip_suffix('F') {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let (rest, byoyomi) = clock.rsplit_once('-').ok_or(GameNameError::Shape)?;
        let (base, total) = rest.rsplit_once('-').ok_or(GameNameError::Shape)?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if base.is_empty() || !digits(total) || !digits(byoyomi) {
            return Err(GameNameError::Shape);
        }
        check_identifier(base).map_err(GameNameError::Base)?;
        let number = |s: &str, field| -> Result<u32, GameNameError> {
            // Leading zeros are allowed (`05`): strip them so that only real size overflows.
            let s = s.trim_start_matches('0');
            if s.is_empty() {
                return Ok(0);
            }
            s.parse().map_err(|_| GameNameError::TooLarge { field })
        };
        let total = number(total, "total")?;
        let last = number(byoyomi, "byoyomi")?;
        let time = TimeControl {
            total,
            byoyomi: if fischer { 0 } else { last },
            increment: if fischer { last } else { 0 },
            stop_watch: byoyomi.len() >= 2 && byoyomi.starts_with('0'),
        };
        let kind = if base == "floodgate" {
            GameKind::Floodgate
        } else if text.starts_with("buoy_") {
            GameKind::Buoy
        } else if let Some((h, _)) = Handicap::ALL.iter().find(|(_, p)| text.starts_with(p)) {
            GameKind::Handicap(*h)
        } else {
            GameKind::Direct
        };
        Ok(GameName {
            text: text.to_owned(),
            base_len: base.len(),
            time,
            kind,
        })
    }

    /// The whole name, as the player wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The base, before the clock (`floodgate` in `floodgate-300-10F`).
    pub fn base(&self) -> &str {
        &self.text[..self.base_len]
    }

    /// The clock.
    pub fn time(&self) -> TimeControl {
        self.time
    }

    /// Floodgate, buoy, handicap or a direct match.
    pub fn kind(&self) -> GameKind {
        self.kind
    }

    /// The name a CSA-mode login gets without one (shogi-server's `Default_Game_Name`).
    pub fn default_name() -> GameName {
        GameName::parse("default-1500-0").expect("the default game name parses")
    }
}

impl fmt::Display for GameName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}
