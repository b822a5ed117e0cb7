//! Fourfold repetition (千日手, sennichite) and perpetual check (連続王手の千日手) over a
//! sequence of (hash, gave-check) pairs, docs/rules.md sections 2 and 3.
//!
//! This module sees only hashes. A hash match is a candidate; [`crate::Game`] confirms it
//! against the full positions before it issues a verdict (docs/rules.md section 2: a match is
//! confirmed by comparing the full positions before any verdict).

use crate::ruleset::OrdinaryResult;
use crate::verdict::{Evidence, ResultCode, Verdict};
use shogi_rules::{Color, Move};

const CHECK_BIT: u16 = 1 << 15;

/// A game's history, kept compactly: per position its 64-bit hash, per ply the move as
/// [`Move::to_u16`] with the gave-check flag in the bit that encoding leaves free. That is ten
/// bytes a ply, so a 100-ply game's history stays under 2 KB even with `Vec`'s spare capacity.
///
/// Ply 0 is the start position; ply `p` is the position after the `p`th move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    start_side: Color,
    start_in_check: bool,
    /// `hashes[p]`: the position after ply `p`.
    hashes: Vec<u64>,
    /// `plies[p - 1]`: ply `p`'s move and check flag.
    plies: Vec<u16>,
}

impl History {
    /// A history holding only the start position: its side to move, hash and whether that side
    /// starts in check.
    pub fn new(start_side: Color, start_hash: u64, start_in_check: bool) -> History {
        History {
            start_side,
            start_in_check,
            hashes: vec![start_hash],
            plies: Vec::new(),
        }
    }

    /// A history from the start position's (hash, in check) and then each ply's (hash, gave
    /// check), with no moves recorded ([`History::move_at`] gives `None`): for tests and for
    /// callers that judge repetition from hashes alone.
    pub fn from_pairs(start_side: Color, pairs: impl IntoIterator<Item = (u64, bool)>) -> History {
        let mut pairs = pairs.into_iter();
        let (hash, check) = pairs.next().expect("the start position");
        let mut h = History::new(start_side, hash, check);
        for (hash, check) in pairs {
            h.push_raw(hash, 0, check);
        }
        h
    }

    /// Records a ply: the move, the hash of the position after it and whether it gave check.
    #[inline]
    pub fn push(&mut self, mv: Move, hash: u64, gave_check: bool) {
        self.push_raw(hash, mv.to_u16(), gave_check);
    }

    /// Makes room for `plies` more plies at once, for a caller that knows how many are coming
    /// (re-judging a whole record); a live game grows as it goes.
    pub fn reserve(&mut self, plies: usize) {
        self.hashes.reserve_exact(plies);
        self.plies.reserve_exact(plies);
    }

    // Inlined, the growth out of line: this runs once a ply, and as a call of its own its
    // prologue and epilogue cost more than its two stores (the archive benchmark's profile).
    #[inline]
    fn push_raw(&mut self, hash: u64, mv: u16, gave_check: bool) {
        if self.plies.len() == self.plies.capacity() {
            self.grow();
        }
        self.hashes.push(hash);
        self.plies.push(mv | if gave_check { CHECK_BIT } else { 0 });
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        // Grow by a quarter rather than double: a game lives in memory for its whole length, and
        // doubling would leave up to half of its history unused (amortised cost stays constant).
        let more = (self.plies.capacity() / 4).max(16);
        self.plies.reserve_exact(more);
        self.hashes.reserve_exact(more);
    }

    /// Overwrites a hash, to simulate a 64-bit collision in tests.
    #[cfg(test)]
    pub(crate) fn set_hash(&mut self, ply: u32, hash: u64) {
        self.hashes[ply as usize] = hash;
    }

    /// The side to move at the start.
    pub fn start_side(&self) -> Color {
        self.start_side
    }

    /// Plies recorded.
    pub fn plies(&self) -> u32 {
        self.plies.len() as u32
    }

    /// The hashes of the positions, `[0]` being the start.
    pub fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Whether ply `ply` gave check; for ply 0, whether the game started in check.
    #[inline]
    pub fn gave_check(&self, ply: u32) -> bool {
        match ply {
            0 => self.start_in_check,
            p => self.plies[p as usize - 1] & CHECK_BIT != 0,
        }
    }

    /// The move of ply `ply` (1-based), if recorded.
    pub fn move_at(&self, ply: u32) -> Option<Move> {
        let raw = *self.plies.get((ply as usize).checked_sub(1)?)?;
        Move::from_u16(raw & !CHECK_BIT)
    }

    /// The side that made ply `ply` (ply 1 is made by the side to move at the start).
    #[inline]
    pub fn mover_of_ply(&self, ply: u32) -> Color {
        if ply % 2 == 1 {
            self.start_side
        } else {
            !self.start_side
        }
    }

    /// The earlier plies (ascending) whose hash equals that of the last position, within the
    /// counted part of the history. The whole history is searched: no window, and no early stop
    /// at a position with the same board but other hands (docs/rules.md section 2).
    ///
    /// Only plies of the same parity can hold the same position (the side to move is part of
    /// it), so the scan steps by two.
    pub fn earlier_occurrences(&self, start_position_counted: bool) -> Vec<u32> {
        let last = self.hashes.len() - 1;
        let first = first_counted_ply(start_position_counted);
        let hash = self.hashes[last];
        let mut found = Vec::new();
        if last < first + 2 {
            return found;
        }
        // The earliest counted ply of the last one's parity, then every second ply up to the
        // one before the last: one pass over a slice, without an index check per ply (this runs
        // after every ply, over the whole game).
        let start = first + (last - first) % 2;
        // `last - start` is even, so the pairs cover the slice exactly; `step_by` cost three
        // times as much here.
        for (k, pair) in self.hashes[start..last].chunks_exact(2).enumerate() {
            if pair[0] == hash {
                found.push((start + 2 * k) as u32);
            }
        }
        found
    }

    /// Whether every move that `side` made in plies `from+1..=to` gave check; `false` when
    /// `side` made no move in that span.
    pub fn checked_every_move(&self, side: Color, from: u32, to: u32) -> bool {
        let mut any = false;
        for p in from + 1..=to {
            if self.mover_of_ply(p) == side {
                any = true;
                if !self.gave_check(p) {
                    return false;
                }
            }
        }
        any
    }

    /// The plies `from+1..=to` in which `side` moved.
    pub fn plies_of(&self, side: Color, from: u32, to: u32) -> Vec<u32> {
        (from + 1..=to)
            .filter(|&p| self.mover_of_ply(p) == side)
            .collect()
    }

    /// Classifies the repetition whose first occurrence is ply `first` and fourth is ply
    /// `fourth` (docs/rules.md section 3). It does not matter which side made ply `fourth`.
    pub fn classify(&self, first: u32, fourth: u32) -> RepetitionKind {
        let black = self.checked_every_move(Color::Black, first, fourth);
        let white = self.checked_every_move(Color::White, first, fourth);
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

    /// Whether the last position is, by its hash, the 4th occurrence of a position, and if so
    /// how the repetition ends. Never fires before the 4th occurrence.
    ///
    /// Hash level only: [`crate::Game`] confirms the match against the full positions.
    pub fn detect_fourfold(&self, start_position_counted: bool) -> Option<Fourfold> {
        let last = self.plies();
        let earlier = self.earlier_occurrences(start_position_counted);
        if earlier.len() < 3 {
            return None;
        }
        let plies = [earlier[0], earlier[1], earlier[2], last];
        Some(Fourfold {
            plies,
            kind: self.classify(plies[0], last),
        })
    }
}

/// The first ply whose position counts as an occurrence: 0 when the start position counts
/// (docs/rules.md section 2), 1 for the CSA shogi-server's bookkeeping.
#[inline]
pub const fn first_counted_ply(start_position_counted: bool) -> usize {
    if start_position_counted { 0 } else { 1 }
}

/// How a fourfold repetition ends (docs/rules.md section 3).
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

impl Fourfold {
    /// The verdict: perpetual check loses for the checker; an ordinary or mutual repetition
    /// has no winner and the ruleset's `ordinary` result, the mutual one flagged (docs/rules.md
    /// section 3). The verdict's ply is N.
    pub fn verdict(&self, history: &History, ordinary: OrdinaryResult) -> Verdict {
        let [first, .., last] = self.plies;
        match self.kind {
            RepetitionKind::Perpetual { checker } => Verdict {
                code: ResultCode::PerpetualCheck,
                winner: Some(!checker),
                ply: last,
                ordinary_result: None,
                evidence: Evidence::PerpetualCheck {
                    plies: self.plies,
                    checker,
                    check_plies: history.plies_of(checker, first, last),
                },
            },
            RepetitionKind::Ordinary | RepetitionKind::Mutual => Verdict {
                code: ResultCode::Repetition,
                winner: None,
                ply: last,
                ordinary_result: Some(ordinary),
                evidence: Evidence::Repetition {
                    plies: self.plies,
                    mutual_check: self.kind == RepetitionKind::Mutual,
                },
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A cycle of four plies repeated, Black to move at the start; `checks[i]` says whether
    /// plies congruent to i mod 4 give check.
    fn cycle(n: u32, checks: [bool; 4]) -> History {
        History::from_pairs(
            Color::Black,
            (0..=n).map(|p| (100 + u64::from(p % 4), p > 0 && checks[(p % 4) as usize])),
        )
    }

    fn prefix(h: &History, n: u32) -> History {
        History::from_pairs(
            h.start_side(),
            (0..=n).map(|p| (h.hashes()[p as usize], h.gave_check(p))),
        )
    }

    #[test]
    fn storage_is_ten_bytes_a_ply() {
        assert!(std::mem::size_of::<u64>() + std::mem::size_of::<u16>() <= 20);
        let mut h = History::new(Color::Black, 1, false);
        let mv = Move::from_usi("7g7f").unwrap();
        h.push(mv, 2, true);
        assert_eq!(h.move_at(1), Some(mv));
        assert!(h.gave_check(1) && !h.gave_check(0));
        assert_eq!(h.move_at(2), None);
        assert_eq!(h.move_at(0), None);
    }

    #[test]
    fn nothing_before_the_fourth_occurrence() {
        let h = cycle(12, [false; 4]);
        for n in 0..12 {
            assert_eq!(prefix(&h, n).detect_fourfold(true), None, "prefix {n}");
        }
        let f = h.detect_fourfold(true).unwrap();
        assert_eq!(f.plies, [0, 4, 8, 12]);
        assert_eq!(f.kind, RepetitionKind::Ordinary);
    }

    #[test]
    fn start_not_counted_ends_four_plies_later() {
        assert_eq!(cycle(12, [false; 4]).detect_fourfold(false), None);
        assert_eq!(
            cycle(16, [false; 4]).detect_fourfold(false).unwrap().plies,
            [4, 8, 12, 16]
        );
    }

    #[test]
    fn perpetual_and_mutual_and_broken() {
        // Black makes the odd plies.
        let h = cycle(12, [false, true, false, true]);
        assert_eq!(
            h.detect_fourfold(true).unwrap().kind,
            RepetitionKind::Perpetual {
                checker: Color::Black
            }
        );
        let h = cycle(12, [true, false, true, false]);
        assert_eq!(
            h.detect_fourfold(true).unwrap().kind,
            RepetitionKind::Perpetual {
                checker: Color::White
            }
        );
        let h = cycle(12, [true; 4]);
        assert_eq!(
            h.detect_fourfold(true).unwrap().kind,
            RepetitionKind::Mutual
        );
        // One non-check in the first cycle breaks it (cshogi's last-cycle test would not).
        let pairs = (0..=12u32).map(|p| (100 + u64::from(p % 4), p % 2 == 1 && p != 3));
        let h = History::from_pairs(Color::Black, pairs);
        assert_eq!(
            h.detect_fourfold(true).unwrap().kind,
            RepetitionKind::Ordinary
        );
    }

    #[test]
    fn a_start_in_check_is_not_a_move() {
        // The start position's check flag is not a move of either side in F+1..N.
        let pairs = (0..=12u32).map(|p| (100 + u64::from(p % 4), p == 0 || p % 2 == 1));
        let h = History::from_pairs(Color::White, pairs);
        assert_eq!(
            h.detect_fourfold(true).unwrap().kind,
            RepetitionKind::Perpetual {
                checker: Color::White
            }
        );
        assert_eq!(h.plies_of(Color::White, 0, 12), vec![1, 3, 5, 7, 9, 11]);
    }

    #[test]
    fn verdicts_of_each_kind() {
        let h = cycle(12, [true; 4]);
        let v = h
            .detect_fourfold(true)
            .unwrap()
            .verdict(&h, OrdinaryResult::Draw);
        assert_eq!(
            (v.code, v.winner, v.ply),
            (ResultCode::Repetition, None, 12)
        );
        assert_eq!(v.ordinary_result, Some(OrdinaryResult::Draw));
        assert_eq!(
            v.evidence,
            Evidence::Repetition {
                plies: [0, 4, 8, 12],
                mutual_check: true
            }
        );

        let h = cycle(12, [true, false, true, false]);
        let v = h
            .detect_fourfold(true)
            .unwrap()
            .verdict(&h, OrdinaryResult::Replay);
        assert_eq!(
            (v.code, v.winner, v.ordinary_result),
            (ResultCode::PerpetualCheck, Some(Color::Black), None)
        );
        assert_eq!(
            v.evidence,
            Evidence::PerpetualCheck {
                plies: [0, 4, 8, 12],
                checker: Color::White,
                check_plies: vec![2, 4, 6, 8, 10, 12]
            }
        );

        let h = cycle(12, [false; 4]);
        let v = h
            .detect_fourfold(true)
            .unwrap()
            .verdict(&h, OrdinaryResult::Replay);
        assert_eq!(
            v.evidence,
            Evidence::Repetition {
                plies: [0, 4, 8, 12],
                mutual_check: false
            }
        );
        assert_eq!(v.ordinary_result, Some(OrdinaryResult::Replay));
    }

    /// The reference: count every equal hash, no parity trick, no early exit.
    fn naive(hashes: &[u64], counted: bool) -> Option<[u32; 3]> {
        let last = hashes.len() - 1;
        let first = usize::from(!counted);
        if last < first {
            return None;
        }
        let occ: Vec<u32> = (first..last)
            .filter(|&p| hashes[p] == hashes[last])
            .map(|p| p as u32)
            .collect();
        (occ.len() >= 3).then(|| [occ[0], occ[1], occ[2]])
    }

    proptest! {
        // Hashes of a real game alternate in side to move, so equal hashes share parity; the
        // generator keeps that by giving odd and even plies disjoint hash ranges.
        #[test]
        fn fast_scan_matches_the_naive_count(
            raw in proptest::collection::vec((0u64..4, any::<bool>()), 1..80),
            counted in any::<bool>(),
        ) {
            let pairs: Vec<(u64, bool)> =
                raw.iter().enumerate().map(|(p, &(h, c))| (h * 2 + (p % 2) as u64, c)).collect();
            for n in 1..=pairs.len() {
                let h = History::from_pairs(Color::White, pairs[..n].iter().copied());
                let got = h.detect_fourfold(counted).map(|f| [f.plies[0], f.plies[1], f.plies[2]]);
                prop_assert_eq!(got, naive(&h.hashes()[..n], counted));
            }
        }
    }
}
