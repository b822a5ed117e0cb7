//! The clock (docs/rules.md section 9): held against an independent model over random time
//! controls and move timings, the boundaries stressed; then the clock in a game.

mod common;

use common::{mv, pos};
use proptest::prelude::*;
use shogi_adjudication::{
    Allowance, ChargeRounding, Clock, ClockRules, DeclarationCondition, Evidence, Game, GameError,
    ResultCode, Ruleset, SideClock, TimeControl, TimeUp,
};
use shogi_rules::Color;

/// A clock written apart from the crate's, as a referee keeps one: the time of a move is
/// measured, the grace taken off and the fractions dropped; then the move's time runs off
/// the side's clock bucket by bucket, first the main time with the increment, then one
/// byoyomi period after another, and the move must come before the bucket it falls in is
/// empty. It loops over the periods rather than dividing, and knows nothing of deadlines.
#[derive(Debug, Clone)]
struct Referee {
    rounding: ChargeRounding,
    least: u64,
    grace: u64,
    allowances: [Allowance; 2],
    /// (main time left, periods left), Black's and White's.
    sides: [(u64, u32); 2],
    running: usize,
    turn_start: u64,
}

/// What the referee makes of a move at some instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ruling {
    elapsed: u64,
    charged: u64,
    /// The side afterwards and the periods used up, or `None` when out of time.
    after: Option<((u64, u32), u32)>,
}

impl Referee {
    fn new(rules: ClockRules, control: TimeControl, to_move: Color, start: u64) -> Referee {
        let side = |a: Allowance| (a.main_ms, a.periods);
        Referee {
            rounding: rules.rounding,
            least: rules.least_time_per_move_ms,
            grace: rules.grace_ms,
            allowances: [control.black, control.white],
            sides: [side(control.black), side(control.white)],
            running: to_move.index(),
            turn_start: start,
        }
    }

    fn unlimited(&self) -> bool {
        let a = self.allowances[self.running];
        a.main_ms == 0 && a.byoyomi_ms == 0 && a.increment_ms == 0
    }

    /// Everything the running side has this turn, bucket by bucket.
    fn available(&self) -> u64 {
        let a = self.allowances[self.running];
        let (main, periods) = self.sides[self.running];
        let mut total = main + a.increment_ms;
        for _ in 0..periods {
            total += a.byoyomi_ms;
        }
        total
    }

    fn rule(&self, at: u64) -> Ruling {
        let elapsed = at.max(self.turn_start) - self.turn_start;
        let counted = elapsed.max(self.grace) - self.grace;
        let unit = match self.rounding {
            ChargeRounding::Milliseconds => 1,
            ChargeRounding::Seconds => 1000,
            ChargeRounding::Minutes => 60_000,
        };
        let measured = counted / unit * unit;
        let charged = if measured < self.least {
            self.least
        } else {
            measured
        };
        let a = self.allowances[self.running];
        let (main, periods) = self.sides[self.running];
        if self.unlimited() {
            return Ruling {
                elapsed,
                charged,
                after: Some(((main, periods), 0)),
            };
        }
        let mut left = charged;
        let first = main + a.increment_ms;
        if left < first {
            return Ruling {
                elapsed,
                charged,
                after: Some(((first - left, periods), 0)),
            };
        }
        left -= first;
        let (mut periods_left, mut used) = (periods, 0);
        let after = loop {
            if periods_left == 0 || a.byoyomi_ms == 0 {
                break None;
            }
            if left < a.byoyomi_ms {
                break Some(((0, periods_left), used));
            }
            left -= a.byoyomi_ms;
            periods_left -= 1;
            used += 1;
        };
        Ruling {
            elapsed,
            charged,
            after,
        }
    }

    fn late(&self, at: u64) -> bool {
        self.rule(at).after.is_none()
    }

    fn moved(&mut self, at: u64, side: (u64, u32)) {
        self.sides[self.running] = side;
        self.running = 1 - self.running;
        if at > self.turn_start {
            self.turn_start = at;
        }
    }
}

/// A call to the clock.
#[derive(Debug, Clone, Copy)]
enum Call {
    Move,
    /// A resignation or a declaration.
    Judge,
    Flag,
}

/// When a call comes.
#[derive(Debug, Clone, Copy)]
enum Timing {
    /// This many thousandths of what the side has (or tenths of a second when unlimited).
    Share(u64),
    /// The deadline plus -1, 0 or 1 ms.
    Deadline(i64),
    /// A receipt this long before the turn's start (instances' clocks differ).
    Early(u64),
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    SuddenDeath,
    Byoyomi,
    Fischer,
    ByoyomiAndFischer,
    Unlimited,
}

/// An allowance of `kind`, amounts in whole `unit`s plus `jitter` (0 for a validated one).
fn allowance(kind: Kind, unit: u64, counts: (u64, u64, u32, u64), jitter: u64) -> Allowance {
    let (main, byoyomi, periods, increment) = counts;
    let amount = |n: u64| n * unit + jitter;
    let (main, byoyomi, increment) = match kind {
        Kind::SuddenDeath => (amount(main + 1), 0, 0),
        Kind::Byoyomi => (amount(main), amount(byoyomi + 1), 0),
        Kind::Fischer => (amount(main), 0, amount(increment + 1)),
        Kind::ByoyomiAndFischer => (amount(main), amount(byoyomi + 1), amount(increment + 1)),
        Kind::Unlimited => (0, 0, 0),
    };
    Allowance {
        main_ms: main,
        byoyomi_ms: byoyomi,
        periods,
        increment_ms: increment,
    }
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        2 => Just(Kind::SuddenDeath),
        3 => Just(Kind::Byoyomi),
        2 => Just(Kind::Fischer),
        1 => Just(Kind::ByoyomiAndFischer),
        1 => Just(Kind::Unlimited),
    ]
}

fn counts(rounding: ChargeRounding) -> impl Strategy<Value = (u64, u64, u32, u64)> {
    // Minutes are few; seconds and milliseconds up to two minutes of main time.
    let (main, byoyomi, increment): (u64, u64, u64) = match rounding {
        ChargeRounding::Minutes => (3, 1, 1),
        _ => (120, 29, 9),
    };
    (0..=main, 0..=byoyomi, 1..=5u32, 0..=increment)
}

fn rounding() -> impl Strategy<Value = ChargeRounding> {
    prop_oneof![
        Just(ChargeRounding::Seconds),
        Just(ChargeRounding::Milliseconds),
        Just(ChargeRounding::Minutes),
    ]
}

/// Rules and a control, validated (whole units) or raw (any milliseconds: the clock takes any).
fn setup() -> impl Strategy<Value = (ClockRules, TimeControl)> {
    (rounding(), any::<bool>(), any::<bool>()).prop_flat_map(|(rounding, raw, odds)| {
        let unit = match rounding {
            // Amounts in seconds, with milliseconds on top when raw.
            ChargeRounding::Milliseconds => 1000,
            other => other.unit_ms(),
        };
        let jitter = if raw || rounding == ChargeRounding::Milliseconds {
            0..unit
        } else {
            0..1
        };
        let least = prop_oneof![Just(0u64), Just(1000u64)].prop_map(move |least| {
            // Validated: a least time in whole units (the stopwatch's is 0 or a minute).
            if raw || least % rounding.unit_ms() == 0 {
                least
            } else {
                rounding.unit_ms()
            }
        });
        let grace = prop_oneof![2 => Just(0u64), 1 => 0..=2000u64];
        let side = || (kind(), counts(rounding), jitter.clone());
        (least, grace, side(), side()).prop_map(move |(least, grace, b, w)| {
            let black = allowance(b.0, unit, b.1, b.2);
            let white = if odds {
                allowance(w.0, unit, w.1, w.2)
            } else {
                black
            };
            let rules = ClockRules {
                rounding,
                least_time_per_move_ms: least,
                grace_ms: grace,
            };
            (rules, TimeControl { black, white })
        })
    })
}

fn timing() -> impl Strategy<Value = Timing> {
    prop_oneof![
        4 => (0..=1300u64).prop_map(Timing::Share),
        3 => (-1..=1i64).prop_map(Timing::Deadline),
        1 => (1..=5000u64).prop_map(Timing::Early),
    ]
}

fn call() -> impl Strategy<Value = Call> {
    prop_oneof![6 => Just(Call::Move), 1 => Just(Call::Judge), 1 => Just(Call::Flag)]
}

fn side_clock((remaining_ms, periods_left): (u64, u32)) -> SideClock {
    SideClock {
        remaining_ms,
        periods_left,
    }
}

/// The time-up evidence agrees with the referee and with the clock before the call.
fn check_time_up(up: &TimeUp, clock: &Clock, referee: &Referee, at: u64) {
    let ruling = referee.rule(at);
    assert_eq!(up.side, clock.running());
    assert_eq!(up.at_ms, at);
    assert_eq!(
        (up.elapsed_ms, up.charged_ms),
        (ruling.elapsed, ruling.charged)
    );
    assert_eq!(up.available_ms, referee.available());
    assert!(up.charged_ms >= up.available_ms);
    assert_eq!(up.turn_started_ms, referee.turn_start);
    assert_eq!(Some(up.deadline_ms), clock.deadline_ms());
    assert!(up.deadline_ms <= at.max(referee.turn_start));
    assert_eq!(up.before, side_clock(referee.sides[referee.running]));
    assert_eq!(up.grace_ms, referee.grace);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn the_clock_keeps_time_as_the_referee_does(
        (rules, control) in setup(),
        white_first in any::<bool>(),
        start in 0..=2_000_000_000_000u64,
        calls in prop::collection::vec((call(), timing(), 0..1000u64), 1..40),
    ) {
        let to_move = if white_first { Color::White } else { Color::Black };
        let mut clock = Clock::new(rules, control, to_move, start);
        let mut referee = Referee::new(rules, control, to_move, start);
        for (call, timing, extra) in calls {
            // The state agrees before every call.
            prop_assert_eq!(clock.running().index(), referee.running);
            prop_assert_eq!(clock.turn_started_ms(), referee.turn_start);
            for side in Color::ALL {
                prop_assert_eq!(clock.side(side), side_clock(referee.sides[side.index()]));
            }
            let unlimited = referee.unlimited();
            prop_assert_eq!(clock.available_ms(), (!unlimited).then(|| referee.available()));
            // The deadline is the first instant the referee calls late.
            let deadline = clock.deadline_ms();
            match deadline {
                None => prop_assert!(unlimited),
                Some(d) => {
                    prop_assert!(referee.late(d), "late at the deadline {}", d);
                    if d > referee.turn_start {
                        prop_assert!(!referee.late(d - 1), "late before the deadline {}", d);
                    }
                }
            }
            let at = match (timing, deadline) {
                (Timing::Deadline(delta), Some(d)) => d.saturating_add_signed(delta),
                (Timing::Early(before), _) => referee.turn_start.saturating_sub(before),
                (Timing::Share(_) | Timing::Deadline(_), _) => {
                    let share = match timing {
                        Timing::Share(share) => share,
                        _ => 500,
                    };
                    let span = if unlimited { 100 * 1000 } else { referee.available() };
                    referee.turn_start + span * share / 1000 + extra
                }
            };
            let ruling = referee.rule(at);
            match call {
                Call::Move => match (clock.charge(at), ruling.after) {
                    (Ok(charge), Some((after, used))) => {
                        prop_assert_eq!(charge.side.index(), referee.running);
                        prop_assert_eq!(charge.received_ms, at);
                        prop_assert_eq!(charge.elapsed_ms, ruling.elapsed);
                        prop_assert_eq!(charge.charged_ms, ruling.charged);
                        prop_assert_eq!(charge.before, side_clock(referee.sides[referee.running]));
                        prop_assert_eq!(charge.after, side_clock(after));
                        prop_assert_eq!(charge.periods_used, used);
                        prop_assert!(deadline.is_none_or(|d| at < d));
                        referee.moved(at, after);
                    }
                    (Err(up), None) => {
                        check_time_up(&up, &clock, &referee, at);
                        // A late move changes nothing, and the game is over.
                        prop_assert_eq!(clock.turn_started_ms(), referee.turn_start);
                        prop_assert_eq!(clock.running().index(), referee.running);
                        break;
                    }
                    (got, want) => prop_assert!(false, "at {}: clock {:?}, referee {:?}", at, got, want),
                },
                Call::Judge | Call::Flag => {
                    let got = match call {
                        Call::Judge => clock.judge(at).err(),
                        _ => clock.flag(at),
                    };
                    prop_assert_eq!(got.is_some(), ruling.after.is_none(), "at {}", at);
                    if let Some(up) = got {
                        check_time_up(&up, &clock, &referee, at);
                        break;
                    }
                }
            }
        }
    }
}

// The clock in a game.

/// 10 s sudden death each under the CSA's bookkeeping.
fn sudden_death() -> Ruleset {
    Ruleset {
        time_control: Some(TimeControl::even(Allowance {
            main_ms: 10_000,
            ..Allowance::UNLIMITED
        })),
        move_cap: None,
        ..Ruleset::csa()
    }
}

fn time_up(game: &Game) -> TimeUp {
    match &game.verdict().expect("a verdict").evidence {
        Evidence::TimeUp(up) => **up,
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_a_clock_a_game_plays_as_before() {
    for rules in [Ruleset::csa(), sudden_death()] {
        let mut timed = Game::startpos(rules);
        let mut untimed = Game::startpos(rules);
        // Not started: the times do not matter.
        for (m, at) in [("7g7f", u64::MAX), ("3c3d", 0), ("8h2b+", 1)] {
            let a = timed.play_at(mv(m), at).unwrap();
            let b = untimed.play(mv(m)).unwrap();
            assert_eq!(a, b);
            assert_eq!(a.charge, None);
        }
        assert_eq!(timed.flag(u64::MAX), None);
        assert_eq!(
            timed.resign_at(Color::White, u64::MAX).unwrap().code,
            ResultCode::Resignation
        );
    }
    assert!(Game::startpos(Ruleset::csa()).start_clock(0).is_none());
}

#[test]
fn a_move_at_the_deadline_loses_on_time() {
    let mut game = Game::startpos(sudden_death());
    let clock = game.start_clock(1_000).unwrap();
    assert_eq!(clock.running(), Color::Black);
    assert!(game.start_clock(2_000).is_none(), "started once");

    let played = game.play_at(mv("7g7f"), 4_500).unwrap();
    let charge = played.charge.unwrap();
    // 3.5 s, truncated to 3 s as the CSA server does.
    assert_eq!((charge.elapsed_ms, charge.charged_ms), (3_500, 3_000));
    assert_eq!(charge.after.remaining_ms, 7_000);
    game.play_at(mv("3c3d"), 5_000).unwrap();
    let clock = game.clock().unwrap();
    assert_eq!(clock.deadline_ms(), Some(12_000));

    // 1 ms before the deadline is in time.
    let mut in_time = game.clone();
    let played = in_time.play_at(mv("2g2f"), 11_999).unwrap();
    assert_eq!(played.verdict, None);
    assert_eq!(played.charge.unwrap().after.remaining_ms, 1_000);

    // At the deadline the move is late: not played, Black loses on time.
    let late = game.play_at(mv("2g2f"), 12_000).unwrap();
    let verdict = late.verdict.unwrap();
    assert_eq!(
        (verdict.code, verdict.winner, verdict.ply),
        (ResultCode::Timeout, Some(Color::White), 2)
    );
    assert_eq!((late.ply, late.charge, game.plies()), (3, None, 2));
    let up = time_up(&game);
    assert_eq!(
        (up.side, up.turn_started_ms, up.deadline_ms, up.at_ms),
        (Color::Black, 5_000, 12_000, 12_000)
    );
    assert_eq!((up.charged_ms, up.available_ms), (7_000, 7_000));
    assert_eq!(game.play_at(mv("2g2f"), 12_000), Err(GameError::GameOver));
    assert_eq!(game.flag(u64::MAX), None);
}

#[test]
fn a_silent_side_is_flagged_at_its_deadline() {
    let rules = Ruleset {
        time_control: Some(TimeControl::even(Allowance {
            main_ms: 0,
            byoyomi_ms: 10_000,
            periods: 3,
            increment_ms: 0,
        })),
        ..Ruleset::online()
    };
    let mut game = Game::startpos(rules);
    game.start_clock(0).unwrap();
    // Milliseconds: 25.5 s uses up two periods.
    let played = game.play_at(mv("7g7f"), 25_500).unwrap();
    assert_eq!(played.charge.unwrap().periods_used, 2);
    game.play_at(mv("3c3d"), 26_000).unwrap();
    assert_eq!(game.clock().unwrap().deadline_ms(), Some(36_000));
    assert_eq!(game.flag(35_999), None);
    let verdict = game.flag(36_000).unwrap();
    assert_eq!(
        (verdict.code, verdict.winner),
        (ResultCode::Timeout, Some(Color::White))
    );
    assert_eq!(game.verdict(), Some(&verdict));
}

#[test]
fn a_late_resignation_is_a_time_up() {
    let mut game = Game::startpos(sudden_death());
    game.start_clock(0).unwrap();
    // In time, a resignation.
    let mut resigning = game.clone();
    let v = resigning.resign_at(Color::Black, 9_999).unwrap();
    assert_eq!(
        (v.code, v.winner),
        (ResultCode::Resignation, Some(Color::White))
    );
    // White resigns after Black's flag fell: Black lost first, on time.
    let v = game.resign_at(Color::White, 10_000).unwrap();
    assert_eq!(
        (v.code, v.winner),
        (ResultCode::Timeout, Some(Color::White))
    );
    assert_eq!(time_up(&game).side, Color::Black);
}

#[test]
fn a_refused_move_charges_nothing() {
    let rules = Ruleset {
        time_control: sudden_death().time_control,
        ..Ruleset::online()
    };
    let mut game = Game::startpos(rules);
    game.start_clock(0).unwrap();
    let before = game.clock().unwrap().clone();
    assert!(matches!(
        game.play_at(mv("7g7e"), 3_000),
        Err(GameError::Illegal(_))
    ));
    assert_eq!(game.clock(), Some(&before));
    // A move by the side not to move is refused too, and White's clock is not running.
    assert!(game.play_as_at(Color::White, mv("3c3d"), 4_000).is_err());
    assert_eq!(game.clock(), Some(&before));
    let played = game.play_at(mv("7g7f"), 5_000).unwrap();
    assert_eq!(played.charge.unwrap().charged_ms, 5_000);
}

#[test]
fn a_declaration_takes_condition_5_from_its_receipt() {
    const BLACK_28: &str = "2SGS4/+B+RGKGLLRB/3G5/9/7pp/8k/9/9/9 b - 1";
    let rules = Ruleset {
        time_control: Some(TimeControl {
            black: Allowance {
                main_ms: 60_000,
                ..Allowance::UNLIMITED
            },
            // Time odds: White is unlimited.
            white: Allowance::UNLIMITED,
        }),
        ..Ruleset::csa()
    };
    let mut game = Game::new(pos(BLACK_28), rules);
    game.start_clock(0).unwrap();
    let mut in_time = game.clone();
    let declared = in_time.declare_at(Color::Black, 59_999).unwrap();
    assert!(declared.report.has_time);
    let v = declared.verdict.unwrap();
    assert_eq!(
        (v.code, v.winner),
        (ResultCode::Declaration, Some(Color::Black))
    );

    let declared = game.declare_at(Color::Black, 60_000).unwrap();
    assert_eq!(
        declared.report.failed_conditions(),
        vec![DeclarationCondition::HasTime]
    );
    let v = declared.verdict.unwrap();
    assert_eq!(
        (v.code, v.winner),
        (ResultCode::Timeout, Some(Color::White))
    );
    assert_eq!(time_up(&game).at_ms, 60_000);
}

#[test]
fn the_clock_starts_for_the_side_to_move() {
    // A handicap game: White, the giver, moves first; its clock runs first.
    let rules = Ruleset {
        time_control: sudden_death().time_control,
        ..Ruleset::csa()
    };
    let mut game = Game::new(
        pos("lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"),
        rules,
    );
    assert_eq!(game.start_clock(0).unwrap().running(), Color::White);
    let charge = game.play_at(mv("3c3d"), 2_000).unwrap().charge.unwrap();
    assert_eq!(charge.side, Color::White);
}
