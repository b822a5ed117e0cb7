//! Real engines through the CSA front end: Debian's fairy-stockfish and gpsusi, each behind
//! shogi-server's USI-to-CSA bridge, play short games against `shogi-arbiter serve
//! --csa-listen` over loopback TCP. Each game ends by a rule, a resignation, the move cap or the
//! clock, both sides are told the same ending, and every record the front end wrote is judged
//! again by `shogi-arbiter judge` to that ending. A longer run by hand: the example
//! `engine_match` (README, "Engines over the CSA protocol").

use arbiter_tests::engines::{self, Bridge, Engine, Front};
use test_support::Deadline;

/// Starting the arbiter.
const START_DEADLINE: Deadline = Deadline::secs(20);
/// One game: a dozen plies at half a second of engine time each, and the engines' start.
const GAME_DEADLINE: Deadline = Deadline::secs(90);
/// The move cap of the byoyomi games.
const MAX_MOVES: u32 = 12;
/// Games played at once: gpsusi's start (3 s of CPU, most of a short game) overlaps another
/// game's, and on a crowded machine two games get two shares of the cores.
const JOBS: usize = 2;

#[test]
fn fairy_stockfish_and_gpsusi_play_through_the_front_end_and_every_record_judges_the_same() {
    let tools = (Bridge::find(), Engine::fairy_stockfish(), Engine::gpsusi());
    let (bridge, fairy, gps) = match tools {
        (Ok(b), Ok(f), Ok(g)) => (b, f, g),
        (b, f, g) => {
            let missing: Vec<String> = [b.err(), f.err(), g.err()].into_iter().flatten().collect();
            panic!("cannot run engines: {}", missing.join("; "));
        }
    };
    let work = tempfile::tempdir().expect("a temporary folder");
    let records = work.path().join("records");
    let front = Front::start(&records, MAX_MOVES, &[], START_DEADLINE.get());
    // Three byoyomi games to the cap or before it (each colour, fairy-stockfish strong and
    // weak), and one that fairy-stockfish loses on time.
    let mut matches = engines::byoyomi_games("engines", 3, &fairy, &gps);
    matches.push(engines::clock_game("clock", 2, &fairy, &gps));
    let tally = engines::run(
        &bridge,
        &front,
        &matches,
        JOBS,
        work.path(),
        GAME_DEADLINE.get(),
    );
    eprintln!("{}", tally.summary());
    assert_eq!(
        tally.problems(),
        Vec::<String>::new(),
        "{}",
        tally.summary()
    );
    assert_eq!(tally.games.len(), matches.len());
    assert_eq!(tally.judged_equal(), matches.len());
    let (clock, byoyomi): (Vec<_>, Vec<_>) = tally
        .games
        .iter()
        .partition(|g| g.game.starts_with("clock"));
    // A byoyomi game may end on the clock too: an engine can overrun the 0.5 s the bridge
    // gives it by more than the bridge's 2.5 s margin on a crowded machine (gpsusi seeing a
    // mate, at a load of 12 a core).
    for g in byoyomi {
        assert!(
            [
                "#RESIGN",
                "#MAX_MOVES",
                "#TIME_UP",
                "#SENNICHITE",
                "#OUTE_SENNICHITE",
                "#JISHOGI",
                "#ILLEGAL_MOVE"
            ]
            .contains(&g.ending.line.as_str()),
            "{}: {}",
            g.game_id,
            g.ending
        );
    }
    let clock = clock[0];
    assert_eq!(
        (clock.ending.line.as_str(), clock.ending.winner),
        ("#TIME_UP", Some(engines::Side::White)),
        "{}",
        clock.game_id
    );
    assert!(
        front.stop(START_DEADLINE.get()),
        "serve did not drain and exit cleanly"
    );
}
