//! What a cached game costs: the validator keeps each game as the contract crate's replay of its
//! log, no more than the pipeline workers keep. Measured with a counting allocator over 1,000
//! games of 100 plies, and held to the figure (2 KB a game at 100 plies) and to the
//! estimate the cache's memory bound counts with (`cached_game_bytes`), which must not be
//! below what a game really takes.

use shogi_proto::log::Replay;
use shogi_proto::v1 as pb;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is kept.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller's contract is passed on as it is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A game of `plies` plies from the start position, its moves drawn by a fixed LCG among the
/// legal ones that do not end it, committed as the validator commits a stored move.
fn game(id: usize, plies: u32) -> Replay {
    let created = pb::GameCreated {
        created_unix_ms: 0,
        game_id: format!("memory-game-{id:06}"),
        ruleset: Some(pb::Ruleset {
            preset: "online".into(),
            overrides: None,
        }),
        start_sfen: shogi_rules::Position::startpos().to_sfen(),
        handicap: String::new(),
        strict: false,
    };
    let mut replay = Replay::from_created(created, 1).unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ id as u64;
    let mut seq = 2;
    while replay.ply() < plies {
        let moves = replay.game().position().legal_moves();
        let moves: Vec<_> = moves.iter().copied().collect();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let start = (seed >> 33) as usize % moves.len();
        // A move that does not end the game, tried on a copy; then played as the validator
        // plays a move it stores.
        let mv = (0..moves.len())
            .map(|i| moves[(start + i) % moves.len()])
            .find(|mv| {
                let mut copy = replay.game().clone();
                copy.play(*mv).is_ok_and(|o| o.verdict.is_none())
            })
            .expect("a move that does not end the game");
        let ply = replay.play(mv, 0).unwrap();
        replay.stored(seq, ply);
        seq += 1;
    }
    replay
}

#[test]
fn a_cached_game_of_100_plies_takes_under_2_kb_and_no_more_than_the_bound_counts() {
    const GAMES: usize = 1000;
    // The cache's shape: a map from the id to a shared slot holding the replay behind an async
    // lock, with its size.
    type Slot = std::sync::Arc<(
        tokio::sync::Mutex<Option<Replay>>,
        std::sync::atomic::AtomicUsize,
    )>;
    let before = LIVE.load(Ordering::Relaxed);
    let cache: std::collections::HashMap<String, Slot> = (0..GAMES)
        .map(|i| {
            let g = game(i, 100);
            let id = g.id().to_owned();
            (
                id,
                Slot::new((tokio::sync::Mutex::new(Some(g)), Default::default())),
            )
        })
        .collect();
    let after = LIVE.load(Ordering::Relaxed);
    let per_game = (after - before) as usize / GAMES;
    let any = cache.values().next().unwrap().0.try_lock().unwrap();
    let estimate = move_validator::cached_game_bytes(any.as_ref().unwrap());
    eprintln!(
        "{GAMES} games of 100 plies: {per_game} bytes a game ({} a ply), estimated {estimate}",
        per_game / 100
    );
    assert!(
        per_game <= 2048,
        "{per_game} bytes a cached game at 100 plies"
    );
    assert!(
        estimate >= per_game,
        "the cache's bound counts {estimate} bytes for a game that takes {per_game}"
    );
}
