//! Pairing by game name: two players asking for the same `%%GAME <name>` with turns that fit
//! are paired (shogi-server's `League#find_rival` and `Game.decide_turns`).

use crate::command::Turn;
use crate::game_name::{GameKind, GameName};
use shogi_rules::Color;

/// Why a seek was refused, in shogi-server's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeekRefusal {
    /// A handicap game needs a side (`League#find_rival`).
    #[error("Random turn preference is not allowed for handicapped games")]
    RandomTurnForHandicap,
    /// Floodgate picks the sides (`GameChallengeCommand`).
    #[error("You are not allowed to specify TEBAN {turn} for the game {game}")]
    TurnForFloodgate {
        /// The turn asked for.
        turn: Turn,
        /// The game.
        game: String,
    },
}

/// What a seek came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pairing<K> {
    /// A game: who plays Black and who White.
    Paired {
        /// Black's key.
        black: K,
        /// White's key.
        white: K,
    },
    /// No opponent yet: the seeker waits (`%%GAME`).
    Waiting,
    /// No opponent, and `%%CHALLENGE` does not wait: `##[ERROR] can't find rival for <game>`.
    NoRival,
    /// Refused.
    Refused(SeekRefusal),
}

#[derive(Debug, Clone)]
struct Seeker<K> {
    key: K,
    player: String,
    game: GameName,
    turn: Turn,
}

/// The players waiting for a game, by key (a connection's id). Pure: the coin for two `*`
/// turns is the caller's.
#[derive(Debug, Clone)]
pub struct Matcher<K> {
    waiting: Vec<Seeker<K>>,
}

impl<K> Default for Matcher<K> {
    fn default() -> Self {
        Matcher {
            waiting: Vec::new(),
        }
    }
}

impl<K: Ord + Clone> Matcher<K> {
    /// An empty matcher.
    pub fn new() -> Matcher<K> {
        Matcher::default()
    }

    /// `key` (the player `player`) asks for `game` with `turn`; `challenge` for
    /// `%%CHALLENGE`, which does not wait. The rival is the waiting player with the smallest
    /// key whose game is the same and whose turn fits, never one of the same name: with keys
    /// given in login order, the one shogi-server picks (it scans its players in login order).
    /// A floodgate game waits for floodgate's scheduler and is never paired here. Sides follow
    /// `Game.decide_turns`: the rival's turn first, then the seeker's, and `toss` (Black for
    /// the seeker) when both said `*`. A seek replaces the key's earlier one.
    pub fn seek(
        &mut self,
        key: K,
        player: &str,
        game: &GameName,
        turn: Turn,
        challenge: bool,
        toss: impl FnOnce() -> Color,
    ) -> Pairing<K> {
        self.cancel(&key);
        match game.kind() {
            GameKind::Floodgate if turn != Turn::Any => {
                return Pairing::Refused(SeekRefusal::TurnForFloodgate {
                    turn,
                    game: game.as_str().to_owned(),
                });
            }
            GameKind::Floodgate => {
                self.waiting.push(Seeker {
                    key,
                    player: player.to_owned(),
                    game: game.clone(),
                    turn,
                });
                return Pairing::Waiting;
            }
            GameKind::Handicap(_) if turn == Turn::Any => {
                return Pairing::Refused(SeekRefusal::RandomTurnForHandicap);
            }
            _ => {}
        }
        let fits = |s: &Seeker<K>| {
            s.game == *game
                && s.player != player
                && match turn {
                    Turn::Any => true,
                    Turn::Black => s.turn != Turn::Black,
                    Turn::White => s.turn != Turn::White,
                }
        };
        let rival = self
            .waiting
            .iter()
            .enumerate()
            .filter(|(_, s)| fits(s))
            .min_by(|a, b| a.1.key.cmp(&b.1.key))
            .map(|(i, _)| i);
        let Some(i) = rival else {
            if challenge {
                return Pairing::NoRival;
            }
            self.waiting.push(Seeker {
                key,
                player: player.to_owned(),
                game: game.clone(),
                turn,
            });
            return Pairing::Waiting;
        };
        let rival = self.waiting.remove(i);
        let seeker_color = match (rival.turn, turn) {
            (Turn::Black, _) => Color::White,
            (Turn::White, _) => Color::Black,
            (Turn::Any, Turn::Black) => Color::Black,
            (Turn::Any, Turn::White) => Color::White,
            (Turn::Any, Turn::Any) => toss(),
        };
        let (black, white) = match seeker_color {
            Color::Black => (key, rival.key),
            Color::White => (rival.key, key),
        };
        Pairing::Paired { black, white }
    }

    /// `key` (the player `player`) is waiting for `game` with `turn` already, as a shared lobby
    /// read it back: put among the waiting as they are, without pairing, so that a later
    /// [`Matcher::seek`] picks its rival by the same rules.
    pub fn wait(&mut self, key: K, player: &str, game: &GameName, turn: Turn) {
        self.cancel(&key);
        self.waiting.push(Seeker {
            key,
            player: player.to_owned(),
            game: game.clone(),
            turn,
        });
    }

    /// `key` stops waiting (`%%GAME` alone, a disconnect, a logout).
    pub fn cancel(&mut self, key: &K) {
        self.waiting.retain(|s| s.key != *key);
    }

    /// The keys waiting for `game`, smallest first (floodgate's scheduler pairs these).
    pub fn waiting_for(&self, game: &GameName) -> Vec<K> {
        let mut keys: Vec<K> = self
            .waiting
            .iter()
            .filter(|s| s.game == *game)
            .map(|s| s.key.clone())
            .collect();
        keys.sort();
        keys
    }
}
