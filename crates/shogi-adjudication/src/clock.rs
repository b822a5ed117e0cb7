//! The arbiter's clock (持ち時間): how much time each side has, what a move costs, and when a
//! side is out of time, docs/rules.md section 9.
//!
//! Pure: the clock reads no system time. Every instant is a `u64` of milliseconds on the
//! arbiter's own clock, given by the caller: the receipt time of a move, a resignation or a
//! declaration, or "now" for a side that stays silent ([`Clock::flag`]). The game log's
//! recorded receipt times decide, so that replaying a log gives the same clock on every
//! instance.
//!
//! Instances' clocks differ by a little, so a receipt time may fall before the start of the
//! turn it ends (the previous move received by one instance, this one by another): such a call
//! counts as made at the turn's start, 0 ms elapsed, and the next turn starts where this one
//! did, so that turns never start earlier than the one before.
//!
//! The bookkeeping, per move (docs/rules.md section 9, from the CSA shogi-server's
//! `shogi_server/time_clock.rb`):
//!
//! - counted = elapsed minus the grace ([`ClockRules::grace_ms`]), not below 0; rounded down to
//!   the [`ChargeRounding`] unit; charged = the larger of that and
//!   [`ClockRules::least_time_per_move_ms`];
//! - the increment (Fischer) is added before every turn, the first included, so the pool of the
//!   turn is remaining + increment. A charge under the pool leaves pool - charge; otherwise the
//!   main time is gone and the excess runs through the byoyomi periods, each
//!   [`Allowance::byoyomi_ms`] long: a period that runs out is used up, the one the move falls
//!   in is kept (Lishogi's byoyomi with periods);
//! - the side is out of time when the charge reaches what it had available (remaining +
//!   increment + byoyomi × periods left): a call exactly at the deadline is late (`>=`: the
//!   shogi-server's `mytime - t + byoyomi + fischer <= 0`, Lishogi's `remaining <= elapsed`).

use shogi_rules::Color;

/// How an elapsed time is charged: truncated to a unit, docs/rules.md section 9.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChargeRounding {
    /// Whole seconds, truncated: the CSA shogi-server (`(end_time - start_time).floor`), and so
    /// the CSA protocol's `T` seconds a move.
    Seconds,
    /// Milliseconds: no rounding, as a chess clock runs (online play, over-the-board clocks).
    Milliseconds,
    /// Whole minutes, truncated: the shogi-server's stopwatch clock (`Time_Unit:1min`, a game
    /// name such as `-900-060`), without byoyomi or increment there; with a main time alone,
    /// the stopwatch timing of professional games ("1分未満切り捨て": with one minute left,
    /// every move must take under a minute).
    Minutes,
}

impl ChargeRounding {
    /// Every rounding.
    pub const ALL: [ChargeRounding; 3] = [
        ChargeRounding::Seconds,
        ChargeRounding::Milliseconds,
        ChargeRounding::Minutes,
    ];

    /// `seconds`, `milliseconds` or `minutes`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChargeRounding::Seconds => "seconds",
            ChargeRounding::Milliseconds => "milliseconds",
            ChargeRounding::Minutes => "minutes",
        }
    }

    /// The unit in milliseconds: 1000, 1 or 60000.
    pub const fn unit_ms(self) -> u64 {
        match self {
            ChargeRounding::Seconds => 1000,
            ChargeRounding::Milliseconds => 1,
            ChargeRounding::Minutes => 60_000,
        }
    }

    /// `ms` truncated to a whole number of units.
    pub const fn truncate(self, ms: u64) -> u64 {
        ms - ms % self.unit_ms()
    }
}

/// The clock's bookkeeping, which each ruleset preset sets ([`crate::Ruleset::clock`]); the
/// amounts of time are the [`TimeControl`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClockRules {
    /// How the time of a move is rounded before it is charged.
    pub rounding: ChargeRounding,
    /// The least a move is charged (the CSA's `Least_Time_Per_Move`: 0 since the CSA's rule of
    /// November 2014, 1 second before).
    pub least_time_per_move_ms: u64,
    /// A per-move allowance for network lag, taken off the elapsed time before it is rounded
    /// (default 0; at most [`MAX_CLOCK_GRACE_MS`]).
    pub grace_ms: u64,
}

impl ClockRules {
    /// The CSA shogi-server's bookkeeping: whole seconds truncated, no least time, no grace.
    pub const CSA: ClockRules = ClockRules {
        rounding: ChargeRounding::Seconds,
        least_time_per_move_ms: 0,
        grace_ms: 0,
    };

    /// A chess clock's: milliseconds, no least time, no grace.
    pub const CHESS_CLOCK: ClockRules = ClockRules {
        rounding: ChargeRounding::Milliseconds,
        least_time_per_move_ms: 0,
        grace_ms: 0,
    };

    /// What a move that took `elapsed_ms` is charged: the elapsed time less the grace (not
    /// below 0), truncated to the rounding's unit, and at least the least time per move.
    pub const fn charged_ms(&self, elapsed_ms: u64) -> u64 {
        let counted = elapsed_ms.saturating_sub(self.grace_ms);
        let rounded = self.rounding.truncate(counted);
        if rounded > self.least_time_per_move_ms {
            rounded
        } else {
            self.least_time_per_move_ms
        }
    }
}

/// The longest grace a ruleset may give, in milliseconds: Lishogi's flag check compensates lag
/// up to two seconds (`lag.quota atMost Centis(200)`); a longer grace is a hidden increment
/// rather than an allowance for lag.
pub const MAX_CLOCK_GRACE_MS: u64 = 2_000;

/// The longest amount of time (main time, byoyomi, increment, least time per move) a ruleset
/// may give, in milliseconds: a day. The longest main time of the JSA's title matches is nine
/// hours a side (the Meijin); a day is more than twice it, while a typo (millions of seconds)
/// is refused rather than becoming a clock nobody runs out of.
pub const MAX_CLOCK_TIME_MS: u64 = 86_400_000;

/// The most byoyomi periods a side may have: Lishogi offers up to 5, and Go servers 10.
pub const MAX_BYOYOMI_PERIODS: u32 = 10;

/// One side's time: the main time, the byoyomi (秒読み) with its periods, and the increment
/// (Fischer). A side whose main time, byoyomi and increment are all 0 is unlimited, as the
/// shogi-server has no timeout when total, byoyomi and fischer are all 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Allowance {
    /// The main time (持ち時間).
    pub main_ms: u64,
    /// The length of one byoyomi period; 0 for none.
    pub byoyomi_ms: u64,
    /// How many byoyomi periods (1 in CSA and JSA play; Lishogi offers up to 5). Without
    /// byoyomi it has no effect.
    pub periods: u32,
    /// The increment added before every turn, the first included (the CSA's Fischer rule).
    pub increment_ms: u64,
}

impl Allowance {
    /// No limit: all amounts 0, one period.
    pub const UNLIMITED: Allowance = Allowance {
        main_ms: 0,
        byoyomi_ms: 0,
        periods: 1,
        increment_ms: 0,
    };

    /// Whether this side has no time limit: main time, byoyomi and increment all 0.
    pub const fn is_unlimited(&self) -> bool {
        self.main_ms == 0 && self.byoyomi_ms == 0 && self.increment_ms == 0
    }
}

/// Both sides' allowances; they differ in a game with time odds (時間差).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeControl {
    /// Black's (sente's) allowance.
    pub black: Allowance,
    /// White's (gote's) allowance.
    pub white: Allowance,
}

impl TimeControl {
    /// Both sides unlimited: a clock that only records the time of each move.
    pub const UNLIMITED: TimeControl = TimeControl::even(Allowance::UNLIMITED);

    /// The same allowance for both sides.
    pub const fn even(allowance: Allowance) -> TimeControl {
        TimeControl {
            black: allowance,
            white: allowance,
        }
    }

    /// `side`'s allowance.
    pub const fn side(&self, side: Color) -> Allowance {
        match side {
            Color::Black => self.black,
            Color::White => self.white,
        }
    }
}

/// One side's clock between turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SideClock {
    /// The main time left (0 once the side is in byoyomi).
    pub remaining_ms: u64,
    /// The byoyomi periods left.
    pub periods_left: u32,
}

/// A move charged to the side that made it: the evidence of its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Charge {
    /// The side charged.
    pub side: Color,
    /// When the move was received.
    pub received_ms: u64,
    /// The time since the turn started (0 for a receipt before it).
    pub elapsed_ms: u64,
    /// What the move was charged ([`ClockRules::charged_ms`]).
    pub charged_ms: u64,
    /// The side's clock before the move.
    pub before: SideClock,
    /// The side's clock after it.
    pub after: SideClock,
    /// The byoyomi periods that ran out during the move.
    pub periods_used: u32,
}

/// A side out of time: the evidence of a time-up verdict (切れ負け).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeUp {
    /// The side out of time, which loses.
    pub side: Color,
    /// When its turn started.
    pub turn_started_ms: u64,
    /// The first instant at which it was out of time ([`Clock::deadline_ms`]).
    pub deadline_ms: u64,
    /// When the late call was received, or the instant the flag was looked at.
    pub at_ms: u64,
    /// The time since the turn started.
    pub elapsed_ms: u64,
    /// What that time is charged, which reaches `available_ms`.
    pub charged_ms: u64,
    /// The side's clock at the start of the turn.
    pub before: SideClock,
    /// What the side had for the turn: remaining + increment + byoyomi × periods left.
    pub available_ms: u64,
    /// The grace the ruleset gave.
    pub grace_ms: u64,
}

/// A game's clock: both sides' time and the running turn.
///
/// Only the side to move runs: [`Clock::charge`] ends its turn with a move and starts the
/// other's, [`Clock::judge`] judges a call that ends the game (a resignation, a declaration),
/// and [`Clock::flag`] a side that stays silent. A side out of time stays out: the clock is
/// unchanged by a late call, and the game it belongs to is over.
///
/// ```
/// use shogi_adjudication::{Allowance, Clock, ClockRules, TimeControl};
/// use shogi_rules::Color;
///
/// // floodgate-600-10: ten minutes and a 10-second byoyomi, whole seconds truncated.
/// let control = TimeControl::even(Allowance {
///     main_ms: 600_000,
///     byoyomi_ms: 10_000,
///     periods: 1,
///     increment_ms: 0,
/// });
/// let mut clock = Clock::new(ClockRules::CSA, control, Color::Black, 0);
/// let charge = clock.charge(30_900).unwrap();
/// assert_eq!((charge.charged_ms, charge.after.remaining_ms), (30_000, 570_000));
/// // White's turn started at 30.9 s; it is late from its deadline on.
/// assert_eq!(clock.deadline_ms(), Some(640_900));
/// assert!(clock.flag(640_899).is_none());
/// assert_eq!(clock.flag(640_900).unwrap().side, Color::White);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Clock {
    rules: ClockRules,
    control: TimeControl,
    sides: [SideClock; 2],
    running: Color,
    turn_started_ms: u64,
}

impl Clock {
    /// A clock whose first turn, `to_move`'s, starts at `started_ms`, each side with its full
    /// main time and periods.
    ///
    /// Any amounts are taken: [`crate::Ruleset::validate`] is where they are checked (whole
    /// units of the rounding, the bounds), and the clock's rules hold for any values.
    pub fn new(rules: ClockRules, control: TimeControl, to_move: Color, started_ms: u64) -> Clock {
        let full = |a: Allowance| SideClock {
            remaining_ms: a.main_ms,
            periods_left: a.periods,
        };
        Clock {
            rules,
            control,
            sides: [full(control.black), full(control.white)],
            running: to_move,
            turn_started_ms: started_ms,
        }
    }

    /// The bookkeeping.
    pub fn rules(&self) -> ClockRules {
        self.rules
    }

    /// The allowances.
    pub fn control(&self) -> TimeControl {
        self.control
    }

    /// The side whose turn it is.
    pub fn running(&self) -> Color {
        self.running
    }

    /// When the running turn started.
    pub fn turn_started_ms(&self) -> u64 {
        self.turn_started_ms
    }

    /// `side`'s clock as its turn starts or started (the running side's is not charged until
    /// its move).
    pub fn side(&self, side: Color) -> SideClock {
        self.sides[side.index()]
    }

    /// What the running side has for its turn: remaining + increment + byoyomi × periods
    /// left; `None` when it is unlimited.
    pub fn available_ms(&self) -> Option<u64> {
        let allowance = self.control.side(self.running);
        if allowance.is_unlimited() {
            return None;
        }
        let side = self.side(self.running);
        Some(
            side.remaining_ms
                .saturating_add(allowance.increment_ms)
                .saturating_add(
                    allowance
                        .byoyomi_ms
                        .saturating_mul(u64::from(side.periods_left)),
                ),
        )
    }

    /// The first instant at which the running side is out of time, so that a call received
    /// then is late; `None` when it is unlimited.
    ///
    /// A charge reaches the available time once the elapsed time reaches the grace plus the
    /// available time rounded up to the unit, or at once when the least time per move reaches
    /// it (then the deadline is the turn's start). Saturates at `u64::MAX`.
    pub fn deadline_ms(&self) -> Option<u64> {
        let available = self.available_ms()?;
        if self.rules.least_time_per_move_ms >= available {
            return Some(self.turn_started_ms);
        }
        let unit = self.rules.rounding.unit_ms();
        let needed = available.div_ceil(unit).saturating_mul(unit);
        Some(
            self.turn_started_ms
                .saturating_add(self.rules.grace_ms)
                .saturating_add(needed),
        )
    }

    /// A move by the running side received at `received_ms`: charges it, switches sides, and
    /// starts the other side's turn then. A move at or after the deadline is time-up, and the
    /// clock is unchanged.
    pub fn charge(&mut self, received_ms: u64) -> Result<Charge, TimeUp> {
        let side = self.running;
        let allowance = self.control.side(side);
        let before = self.side(side);
        let elapsed_ms = self.elapsed_ms(received_ms);
        let charged_ms = self.rules.charged_ms(elapsed_ms);
        let (after, periods_used) = if allowance.is_unlimited() {
            (before, 0)
        } else {
            settle(allowance, before, charged_ms)
                .ok_or_else(|| self.time_up(received_ms, elapsed_ms, charged_ms))?
        };
        self.sides[side.index()] = after;
        self.running = !side;
        self.turn_started_ms = self.turn_started_ms.max(received_ms);
        Ok(Charge {
            side,
            received_ms,
            elapsed_ms,
            charged_ms,
            before,
            after,
            periods_used,
        })
    }

    /// A call by the running side that ends the game (a resignation, a declaration), received
    /// at `received_ms`: time-up if it is at or after the deadline. Nothing is charged and the
    /// turn goes on.
    pub fn judge(&self, received_ms: u64) -> Result<(), TimeUp> {
        let allowance = self.control.side(self.running);
        if allowance.is_unlimited() {
            return Ok(());
        }
        let elapsed_ms = self.elapsed_ms(received_ms);
        let charged_ms = self.rules.charged_ms(elapsed_ms);
        match settle(allowance, self.side(self.running), charged_ms) {
            Some(_) => Ok(()),
            None => Err(self.time_up(received_ms, elapsed_ms, charged_ms)),
        }
    }

    /// Whether the running side, silent, is out of time at `now_ms` (the flag has fallen):
    /// [`Clock::judge`] of a call at that instant.
    pub fn flag(&self, now_ms: u64) -> Option<TimeUp> {
        self.judge(now_ms).err()
    }

    /// The time since the running turn started; 0 for an instant before it.
    fn elapsed_ms(&self, at_ms: u64) -> u64 {
        at_ms.saturating_sub(self.turn_started_ms)
    }

    fn time_up(&self, at_ms: u64, elapsed_ms: u64, charged_ms: u64) -> TimeUp {
        TimeUp {
            side: self.running,
            turn_started_ms: self.turn_started_ms,
            deadline_ms: self.deadline_ms().unwrap_or(u64::MAX),
            at_ms,
            elapsed_ms,
            charged_ms,
            before: self.side(self.running),
            available_ms: self.available_ms().unwrap_or(u64::MAX),
            grace_ms: self.rules.grace_ms,
        }
    }
}

/// The side's clock after a charge, with the periods that ran out, or `None` when the charge
/// reaches what the side had: the increment first joins the remaining time in the turn's
/// pool; a charge under the pool leaves the rest; beyond it the main time is gone and each
/// whole byoyomi period in the excess is used up, which must leave the period the move fell in.
fn settle(allowance: Allowance, before: SideClock, charged_ms: u64) -> Option<(SideClock, u32)> {
    let pool = before.remaining_ms.saturating_add(allowance.increment_ms);
    if charged_ms < pool {
        let after = SideClock {
            remaining_ms: pool - charged_ms,
            ..before
        };
        return Some((after, 0));
    }
    let over = charged_ms - pool;
    let used = over.checked_div(allowance.byoyomi_ms)?;
    if used >= u64::from(before.periods_left) {
        return None;
    }
    // Fewer than `periods_left`, so it fits in a u32.
    let used = used as u32;
    let after = SideClock {
        remaining_ms: 0,
        periods_left: before.periods_left - used,
    };
    Some((after, used))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CSA shogi-server's chess clock in whole seconds (`ChessClock` and
    /// `ChessClockWithLeastZero` in `shogi_server/time_clock.rb`), restated from its formulas
    /// for the table below: `time_duration` is the floor of the elapsed seconds, at least
    /// `least_time_per_move`; `timeout?` is `mytime - t + byoyomi + fischer <= 0` when total,
    /// byoyomi or fischer is above 0; `process_time` adds fischer, takes t and keeps mytime at
    /// 0 or more.
    struct ShogiServer {
        least: i64,
        total: i64,
        byoyomi: i64,
        fischer: i64,
    }

    impl ShogiServer {
        fn time_duration(&self, elapsed_ms: u64) -> i64 {
            (elapsed_ms as i64 / 1000).max(self.least)
        }

        fn timeout(&self, mytime: i64, elapsed_ms: u64) -> bool {
            let t = self.time_duration(elapsed_ms);
            mytime - t + self.byoyomi + self.fischer <= 0
                && (self.total > 0 || self.byoyomi > 0 || self.fischer > 0)
        }

        fn process_time(&self, mytime: i64, elapsed_ms: u64) -> (i64, i64) {
            let t = self.time_duration(elapsed_ms);
            ((mytime + self.fischer - t).max(0), t)
        }
    }

    /// (case, least, total, byoyomi, fischer, mytime before, elapsed ms).
    const SERVER_CASES: &[(&str, i64, i64, i64, i64, i64, u64)] = &[
        ("mytime - t > 0: time left", 0, 600, 10, 0, 600, 30_400),
        ("t floors the elapsed time", 0, 600, 10, 0, 600, 999),
        (
            "mytime - t + byoyomi == 1: in byoyomi",
            0,
            600,
            10,
            0,
            5,
            14_999,
        ),
        (
            "mytime - t + byoyomi == 0: timeout",
            0,
            600,
            10,
            0,
            5,
            15_000,
        ),
        (
            "mytime - t + byoyomi < 0: timeout",
            0,
            600,
            10,
            0,
            5,
            15_001,
        ),
        (
            "mytime 0 in byoyomi: t == byoyomi - 1",
            0,
            600,
            10,
            0,
            0,
            9_999,
        ),
        (
            "mytime 0 in byoyomi: t == byoyomi is timeout",
            0,
            600,
            10,
            0,
            0,
            10_000,
        ),
        (
            "sudden death: mytime - t == 0 is timeout",
            0,
            300,
            0,
            0,
            7,
            7_000,
        ),
        ("sudden death: mytime - t == 1", 0, 300, 0, 0, 7, 6_999),
        ("fischer joins before the move", 0, 300, 0, 10, 0, 9_999),
        (
            "mytime - t + fischer == 0 is timeout",
            0,
            300,
            0,
            10,
            0,
            10_000,
        ),
        ("fischer: mytime grows", 0, 300, 0, 10, 300, 2_500),
        ("fischer and byoyomi together", 0, 300, 5, 10, 3, 17_999),
        (
            "fischer and byoyomi together: timeout",
            0,
            300,
            5,
            10,
            3,
            18_000,
        ),
        (
            "least_time_per_move 1: an instant move costs 1",
            1,
            600,
            10,
            0,
            600,
            300,
        ),
        (
            "least_time_per_move 1: the last second",
            1,
            600,
            0,
            0,
            1,
            10,
        ),
        ("least_time_per_move 1 in byoyomi", 1, 600, 1, 0, 0, 200),
        (
            "total, byoyomi, fischer 0: never timeout",
            0,
            0,
            0,
            0,
            0,
            86_400_000,
        ),
        (
            "total 0 with byoyomi: byoyomi from the start",
            0,
            0,
            30,
            0,
            0,
            29_999,
        ),
        ("total 0 with byoyomi: timeout", 0, 0, 30, 0, 0, 30_000),
    ];

    #[test]
    fn with_one_period_the_clock_is_the_shogi_servers() {
        for &(case, least, total, byoyomi, fischer, mytime, elapsed) in SERVER_CASES {
            let server = ShogiServer {
                least,
                total,
                byoyomi,
                fischer,
            };
            let ms = |s: i64| s as u64 * 1000;
            let rules = ClockRules {
                least_time_per_move_ms: ms(least),
                ..ClockRules::CSA
            };
            let allowance = Allowance {
                main_ms: ms(total),
                byoyomi_ms: ms(byoyomi),
                periods: 1,
                increment_ms: ms(fischer),
            };
            let mut clock = Clock::new(rules, TimeControl::even(allowance), Color::Black, 5_000);
            clock.sides[0].remaining_ms = ms(mytime);
            let at = 5_000 + elapsed;
            let got = clock.clone().charge(at);
            assert_eq!(clock.judge(at).is_err(), got.is_err(), "{case}");
            if server.timeout(mytime, elapsed) {
                let up = got.expect_err(case);
                assert_eq!(up.charged_ms, ms(server.time_duration(elapsed)), "{case}");
                assert!(up.deadline_ms <= at, "{case}");
            } else {
                let charge = got.unwrap_or_else(|e| panic!("{case}: {e:?}"));
                let (mytime, t) = server.process_time(mytime, elapsed);
                assert_eq!(charge.charged_ms, ms(t), "{case}");
                assert_eq!(charge.after.remaining_ms, ms(mytime), "{case}");
                assert_eq!(charge.after.periods_left, 1, "{case}");
                assert_eq!(charge.periods_used, 0, "{case}");
                assert!(clock.deadline_ms().is_none_or(|d| d > at), "{case}");
            }
        }
    }

    /// The shogi-server's `StopWatchClock` with a 60-second unit (`-900-060`):
    /// `time_duration` is the whole minutes of the elapsed seconds (the least time of 1 second
    /// disappears in them), and `timeout?` is `mytime <= t`.
    #[test]
    fn minutes_are_the_shogi_servers_stopwatch() {
        let rules = ClockRules {
            rounding: ChargeRounding::Minutes,
            ..ClockRules::CSA
        };
        let stopwatch = Allowance {
            main_ms: 900_000,
            ..Allowance::UNLIMITED
        };
        for (mytime, elapsed) in [(900, 59_999), (900, 60_000), (60, 59_999), (60, 60_000)] {
            let t = (elapsed / 1000).max(1) / 60 * 60;
            let mut clock = Clock::new(rules, TimeControl::even(stopwatch), Color::Black, 0);
            clock.sides[0].remaining_ms = mytime * 1000;
            match clock.charge(elapsed) {
                Ok(charge) => {
                    assert!(mytime > t, "{mytime} {elapsed}");
                    assert_eq!(charge.after.remaining_ms, (mytime - t) * 1000);
                }
                Err(up) => assert!(
                    mytime <= t && up.charged_ms == t * 1000,
                    "{mytime} {elapsed}"
                ),
            }
        }
    }

    #[test]
    fn the_deadline_is_the_first_late_instant() {
        let rules = [
            ClockRules::CSA,
            ClockRules::CHESS_CLOCK,
            ClockRules {
                rounding: ChargeRounding::Minutes,
                ..ClockRules::CSA
            },
            ClockRules {
                least_time_per_move_ms: 1000,
                grace_ms: 250,
                ..ClockRules::CSA
            },
        ];
        let allowances = [
            Allowance {
                main_ms: 60_000,
                byoyomi_ms: 10_000,
                periods: 3,
                increment_ms: 0,
            },
            Allowance {
                main_ms: 1_500,
                byoyomi_ms: 0,
                periods: 1,
                increment_ms: 2_000,
            },
            Allowance {
                main_ms: 0,
                byoyomi_ms: 0,
                periods: 1,
                increment_ms: 1_000,
            },
        ];
        for rules in rules {
            for allowance in allowances {
                let clock = Clock::new(rules, TimeControl::even(allowance), Color::White, 1_000);
                let deadline = clock.deadline_ms().unwrap();
                let case = format!("{rules:?} {allowance:?}");
                assert!(clock.judge(deadline).is_err(), "{case}");
                assert_eq!(
                    clock.flag(deadline).unwrap().deadline_ms,
                    deadline,
                    "{case}"
                );
                if deadline > clock.turn_started_ms() {
                    assert_eq!(clock.judge(deadline - 1), Ok(()), "{case}");
                }
            }
        }
    }

    #[test]
    fn periods_run_out_one_by_one() {
        let allowance = Allowance {
            main_ms: 5_000,
            byoyomi_ms: 10_000,
            periods: 3,
            increment_ms: 0,
        };
        let mut clock = Clock::new(
            ClockRules::CHESS_CLOCK,
            TimeControl::even(allowance),
            Color::Black,
            0,
        );
        assert_eq!(clock.available_ms(), Some(35_000));
        // 5 s of main time and 1.5 periods: the first period is used up, the move falls in the
        // second.
        let charge = clock.charge(20_000).unwrap();
        assert_eq!(charge.periods_used, 1);
        assert_eq!(
            charge.after,
            SideClock {
                remaining_ms: 0,
                periods_left: 2
            }
        );
        // White's turn starts at 20 s and is untouched.
        assert_eq!(clock.running(), Color::White);
        assert_eq!(clock.deadline_ms(), Some(55_000));
        clock.charge(21_000).unwrap();
        // Black: two periods of 10 s left, so 20 s.
        assert_eq!(clock.deadline_ms(), Some(41_000));
        let up = clock.charge(41_000).unwrap_err();
        assert_eq!(
            (up.side, up.available_ms, up.charged_ms),
            (Color::Black, 20_000, 20_000)
        );
        assert_eq!(clock.charge(40_999).unwrap().periods_used, 1);
    }

    #[test]
    fn an_unlimited_side_records_its_moves_and_never_flags() {
        let odds = TimeControl {
            black: Allowance {
                main_ms: 60_000,
                ..Allowance::UNLIMITED
            },
            white: Allowance::UNLIMITED,
        };
        let mut clock = Clock::new(ClockRules::CSA, odds, Color::White, 0);
        assert_eq!((clock.available_ms(), clock.deadline_ms()), (None, None));
        assert_eq!(clock.flag(u64::MAX), None);
        let charge = clock.charge(3_600_500).unwrap();
        assert_eq!(
            (charge.charged_ms, charge.after),
            (3_600_000, charge.before)
        );
        assert_eq!(clock.deadline_ms(), Some(3_660_500));
    }

    #[test]
    fn a_receipt_before_the_turn_counts_nothing() {
        let mut clock = Clock::new(
            ClockRules::CHESS_CLOCK,
            TimeControl::even(Allowance {
                main_ms: 1_000,
                ..Allowance::UNLIMITED
            }),
            Color::Black,
            10_000,
        );
        let charge = clock.charge(9_000).unwrap();
        assert_eq!((charge.elapsed_ms, charge.charged_ms), (0, 0));
        assert_eq!(charge.after.remaining_ms, 1_000);
        assert_eq!(clock.turn_started_ms(), 10_000);
    }
}
