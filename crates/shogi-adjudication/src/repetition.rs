//! Fourfold repetition (千日手, sennichite) and perpetual check (連続王手の千日手) over a
//! sequence of (hash, gave-check) pairs, RULES.md sections 2 and 3.
//!
//! This module sees only hashes. A hash match is a candidate; [`crate::Game`] confirms it
//! against the full positions before it issues a verdict (RULES.md section 2: "confirm an exact
//! match of the full position before a verdict is issued").
//!
//! Indexing: `keys[0]` is the game's start position and `keys[p]` the position after ply `p`.
//! `keys[p].gave_check` says whether ply `p` gave check, that is whether the side to move after
//! it is in check; for `keys[0]` it says whether the game started in check.

use shogi_rules::Color;

/// One position of a game's history as the repetition rule sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlyKey {
    /// The position's 64-bit Zobrist hash (board, both hands keyed per count, side to move).
    pub hash: u64,
    /// Whether the ply that produced it gave check (for the start position: whether the side
    /// to move starts in check).
    pub gave_check: bool,
}

/// How a fourfold repetition ends (RULES.md section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RepetitionKind {
    /// No side checked on every one of its moves in plies F+1..N: the ruleset's ordinary
    /// result.
    Ordinary,
    /// Every move of `checker` in plies F+1..N gave check: `checker` loses.
    Perpetual {
        /// The side that checked on every move.
        checker: Color,
    },
    /// Both sides checked on every move in F+1..N. JSA leaves it undefined and Lishogi calls it
    /// a draw; the result is the ordinary one, flagged as mutual.
    Mutual,
}

/// A fourfold repetition found in the hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fourfold {
    /// The plies of the four occurrences, ascending; `plies[0]` is F and `plies[3]` is N.
    pub plies: [u32; 4],
    /// Ordinary, perpetual or mutual.
    pub kind: RepetitionKind,
}

/// The side that made ply `ply` (ply 1 is made by the side to move at the start).
#[inline]
pub fn mover_of_ply(start_side: Color, ply: u32) -> Color {
    if ply % 2 == 1 {
        start_side
    } else {
        !start_side
    }
}

/// The first ply whose position counts as an occurrence: 0 when the start position counts
/// (RULES.md section 2), 1 for the CSA shogi-server's bookkeeping.
#[inline]
pub const fn first_counted_ply(start_position_counted: bool) -> usize {
    if start_position_counted { 0 } else { 1 }
}

/// The earlier plies (ascending) whose hash equals that of the last position in `keys`, within
/// the counted part of the history. The whole history is searched: no window, and no early stop
/// at a position with the same board but other hands (RULES.md section 2).
///
/// Only plies of the same parity can hold the same position (the side to move is part of it),
/// so the scan steps by two.
pub fn earlier_occurrences(keys: &[PlyKey], start_position_counted: bool) -> Vec<u32> {
    let Some(last) = keys.len().checked_sub(1) else {
        return Vec::new();
    };
    let first = first_counted_ply(start_position_counted);
    let hash = keys[last].hash;
    let mut found = Vec::new();
    let mut p = last;
    while p >= first + 2 {
        p -= 2;
        if keys[p].hash == hash {
            found.push(p as u32);
        }
    }
    found.reverse();
    found
}

/// Whether every move that `side` made in plies `from+1..=to` gave check.
///
/// `false` when `side` made no move in that span.
pub fn checked_every_move(
    keys: &[PlyKey],
    start_side: Color,
    side: Color,
    from: u32,
    to: u32,
) -> bool {
    let mut any = false;
    for p in from + 1..=to {
        if mover_of_ply(start_side, p) == side {
            any = true;
            if !keys[p as usize].gave_check {
                return false;
            }
        }
    }
    any
}

/// The plies `from+1..=to` in which `side` moved (all of which gave check when `side` is a
/// perpetual checker).
pub fn plies_of(start_side: Color, side: Color, from: u32, to: u32) -> Vec<u32> {
    (from + 1..=to)
        .filter(|&p| mover_of_ply(start_side, p) == side)
        .collect()
}

/// Classifies the repetition whose first occurrence is ply `first` and fourth is ply `fourth`
/// (RULES.md section 3). It does not matter which side made ply `fourth`.
pub fn classify(keys: &[PlyKey], start_side: Color, first: u32, fourth: u32) -> RepetitionKind {
    let black = checked_every_move(keys, start_side, Color::Black, first, fourth);
    let white = checked_every_move(keys, start_side, Color::White, first, fourth);
    match (black, white) {
        (true, true) => RepetitionKind::Mutual,
        (true, false) => RepetitionKind::Perpetual {
            checker: Color::Black,
        },
        (false, true) => RepetitionKind::Perpetual {
            checker: Color::White,
        },
        (false, false) => RepetitionKind::Ordinary,
    }
}

/// Whether the last position of `keys` is, by its hash, the 4th occurrence of a position, and
/// if so how the repetition ends. Never fires before the 4th occurrence.
///
/// Hash level only: [`crate::Game`] confirms the match against the full positions.
pub fn detect_fourfold(
    keys: &[PlyKey],
    start_side: Color,
    start_position_counted: bool,
) -> Option<Fourfold> {
    let last = keys.len().checked_sub(1)? as u32;
    if (last as usize) < first_counted_ply(start_position_counted) {
        return None;
    }
    let earlier = earlier_occurrences(keys, start_position_counted);
    if earlier.len() < 3 {
        return None;
    }
    let plies = [earlier[0], earlier[1], earlier[2], last];
    Some(Fourfold {
        plies,
        kind: classify(keys, start_side, plies[0], last),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A cycle of four plies A B C D repeated, Black to move at the start; `checks[i]` says
    /// whether ply i of the cycle (1-based ply mod 4) gives check.
    fn cycle(n: usize, checks: [bool; 4]) -> Vec<PlyKey> {
        (0..=n)
            .map(|p| PlyKey {
                hash: 100 + (p % 4) as u64,
                gave_check: p > 0 && checks[p % 4],
            })
            .collect()
    }

    #[test]
    fn nothing_before_the_fourth_occurrence() {
        let k = cycle(11, [false; 4]);
        for n in 1..=k.len() {
            assert_eq!(
                detect_fourfold(&k[..n], Color::Black, true),
                None,
                "prefix {n}"
            );
        }
        let k = cycle(12, [false; 4]);
        let f = detect_fourfold(&k, Color::Black, true).unwrap();
        assert_eq!(f.plies, [0, 4, 8, 12]);
        assert_eq!(f.kind, RepetitionKind::Ordinary);
    }

    #[test]
    fn start_not_counted_ends_four_plies_later() {
        let k = cycle(12, [false; 4]);
        assert_eq!(detect_fourfold(&k, Color::Black, false), None);
        let k = cycle(16, [false; 4]);
        assert_eq!(
            detect_fourfold(&k, Color::Black, false).unwrap().plies,
            [4, 8, 12, 16]
        );
    }

    #[test]
    fn perpetual_and_mutual_and_broken() {
        // Black moves plies 1 and 3 of each cycle (odd plies).
        let k = cycle(12, [false, true, false, true]);
        assert_eq!(
            detect_fourfold(&k, Color::Black, true).unwrap().kind,
            RepetitionKind::Perpetual {
                checker: Color::Black
            }
        );
        // White moves plies 2 and 4 (0 mod 4).
        let k = cycle(12, [true, false, true, false]);
        assert_eq!(
            detect_fourfold(&k, Color::Black, true).unwrap().kind,
            RepetitionKind::Perpetual {
                checker: Color::White
            }
        );
        let k = cycle(12, [true; 4]);
        assert_eq!(
            detect_fourfold(&k, Color::Black, true).unwrap().kind,
            RepetitionKind::Mutual
        );
        // One non-check in the first cycle breaks it (cshogi's last-cycle test would not).
        let mut k = cycle(12, [false, true, false, true]);
        k[3].gave_check = false;
        assert_eq!(
            detect_fourfold(&k, Color::Black, true).unwrap().kind,
            RepetitionKind::Ordinary
        );
    }

    #[test]
    fn checks_before_the_first_occurrence_do_not_matter() {
        let mut k = cycle(12, [false, true, false, true]);
        // Prepend nothing; instead break a check that lies at ply F (not in F+1..N).
        k[0].gave_check = false;
        assert_eq!(
            detect_fourfold(&k, Color::Black, true).unwrap().kind,
            RepetitionKind::Perpetual {
                checker: Color::Black
            }
        );
        assert_eq!(
            plies_of(Color::Black, Color::Black, 0, 12),
            vec![1, 3, 5, 7, 9, 11]
        );
    }

    /// The reference: count every earlier equal hash with no parity trick.
    fn naive(keys: &[PlyKey], counted: bool) -> Option<[u32; 4]> {
        let last = keys.len() - 1;
        let first = usize::from(!counted);
        if last < first {
            return None;
        }
        let occ: Vec<u32> = (first..=last)
            .filter(|&p| keys[p].hash == keys[last].hash)
            .map(|p| p as u32)
            .collect();
        (occ.len() >= 4).then(|| [occ[0], occ[1], occ[2], last as u32])
    }

    proptest! {
        // Hashes of a real game alternate in side to move, so equal hashes share parity; the
        // generator keeps that by giving odd and even plies disjoint hash ranges.
        #[test]
        fn fast_scan_matches_the_naive_count(raw in proptest::collection::vec((0u64..4, any::<bool>()), 1..80), counted in any::<bool>()) {
            let k: Vec<PlyKey> = raw.iter().enumerate()
                .map(|(p, &(h, c))| PlyKey { hash: h * 2 + (p % 2) as u64, gave_check: c })
                .collect();
            for n in 1..=k.len() {
                let got = detect_fourfold(&k[..n], Color::White, counted).map(|f| f.plies);
                let want = naive(&k[..n], counted);
                // The naive count keeps counting past a 4th occurrence; the game would have
                // stopped there, so compare only at the first detection of each prefix.
                if want.is_some() && got.is_some() {
                    prop_assert_eq!(got.unwrap()[..3].to_vec(), want.unwrap()[..3].to_vec());
                } else {
                    prop_assert_eq!(got.is_some(), want.is_some());
                }
            }
        }
    }
}
