//! Ruleset options by name (`Ruleset::set`, `Ruleset::options`) and the ruleset check
//! (`Ruleset::validate`): every option's accepted and refused values, every preset, and every
//! contradiction with the option it names. Data-driven: one table, one `check` helper.

use shogi_adjudication::{
    AgreementTie, Allowance, CapMode, ChargeRounding, ClockRules, DeclarationRule,
    DeclarationTrigger, FailedDeclaration, IllegalMovePolicy, MAX_MOVE_CAP, OrdinaryResult,
    Ruleset, RulesetError, RulesetOptionError, TimeControl,
};

/// What setting an option on the `jsa` preset should do.
#[derive(Debug)]
enum Expect {
    /// Accepted; `options()` then shows the option with this text.
    Shows(&'static str),
    /// Refused as a value the option does not take.
    BadValue,
    /// Parsed, but refused on its own with this error.
    Refused(RulesetError),
}

use Expect::{BadValue, Refused, Shows};

const fn threshold_refused(threshold: u32) -> Expect {
    Refused(RulesetError::AgreementThreshold { threshold })
}

const fn cap_refused(cap: u32) -> Expect {
    Refused(RulesetError::MoveCapTooLong { cap })
}

const fn time_refused(option: &'static str, ms: u64) -> Expect {
    Refused(RulesetError::ClockTimeTooLong { option, ms })
}

/// (option, value, expectation), every option of docs/rules.md.
const CASES: &[(&str, &str, Expect)] = &[
    ("illegal_move", "reject", Shows("reject")),
    ("illegal_move", "forfeit", Shows("forfeit")),
    ("illegal_move", "Reject", BadValue),
    ("illegal_move", "", BadValue),
    ("repetition", "draw", Shows("draw")),
    ("repetition", "replay", Shows("replay")),
    ("repetition", "win", BadValue),
    ("jishogi", "draw", Shows("draw")),
    ("jishogi", "replay", Shows("replay")),
    ("jishogi", "none", BadValue),
    ("start_position_counted", "false", Shows("false")),
    ("start_position_counted", "true", Shows("true")),
    ("start_position_counted", "off", Shows("false")),
    ("start_position_counted", "yes", Shows("true")),
    ("start_position_counted", "1", BadValue),
    ("declaration", "points27", Shows("points27")),
    ("declaration", "jsa24", Shows("jsa24")),
    ("declaration", "none", Shows("none")),
    ("declaration", "27", BadValue),
    ("declaration_trigger", "automatic", Shows("automatic")),
    ("declaration_trigger", "explicit", Shows("explicit")),
    ("declaration_trigger", "auto", BadValue),
    ("failed_declaration", "refuse", Shows("refuse")),
    ("failed_declaration", "loss", Shows("loss")),
    ("failed_declaration", "lose", BadValue),
    ("handicap_credit", "false", Shows("false")),
    ("handicap_credit", "on", Shows("true")),
    ("handicap_credit", "maybe", BadValue),
    ("try_rule", "true", Shows("true")),
    ("try_rule", "no", Shows("false")),
    ("try_rule", "TRUE", BadValue),
    ("move_cap", "256", Shows("256")),
    ("move_cap", "1", Shows("1")),
    ("move_cap", "700", Shows("700")),
    ("move_cap", "10000", Shows("10000")),
    ("move_cap", "0", Shows("none")),
    ("move_cap", "none", Shows("none")),
    ("move_cap", "10001", cap_refused(10_001)),
    ("move_cap", "4000000000", cap_refused(4_000_000_000)),
    ("move_cap", "-1", BadValue),
    ("move_cap", "99999999999", BadValue),
    ("move_cap", "256 ", BadValue),
    ("cap_mode", "plain", Shows("plain")),
    ("cap_mode", "jsa500", Shows("jsa500")),
    ("cap_mode", "jsa", BadValue),
    ("csa_server_cap", "false", Shows("false")),
    ("csa_server_cap", "maybe", BadValue),
    ("agreement_threshold", "24", Shows("24")),
    ("agreement_threshold", "25", Shows("25")),
    ("agreement_threshold", "27", Shows("27")),
    ("agreement_threshold", "23", threshold_refused(23)),
    ("agreement_threshold", "28", threshold_refused(28)),
    ("agreement_threshold", "5", threshold_refused(5)),
    ("agreement_threshold", "0", threshold_refused(0)),
    ("agreement_threshold", "54", threshold_refused(54)),
    (
        "agreement_threshold",
        "4000000000",
        threshold_refused(4_000_000_000),
    ),
    ("agreement_threshold", "twenty-four", BadValue),
    ("agreement_threshold", "-24", BadValue),
    ("agreement_tie", "jishogi", Shows("jishogi")),
    ("agreement_tie", "white_wins", Shows("white_wins")),
    ("agreement_tie", "black_wins", Shows("black_wins")),
    ("agreement_tie", "white", BadValue),
    ("clock_rounding", "seconds", Shows("seconds")),
    ("clock_rounding", "milliseconds", Shows("milliseconds")),
    ("clock_rounding", "minutes", Shows("minutes")),
    ("clock_rounding", "ms", BadValue),
    ("least_time_per_move", "1", Shows("1")),
    ("least_time_per_move", "0", Shows("0")),
    ("least_time_per_move", "1.000", Shows("1")),
    ("least_time_per_move", "86400", Shows("86400")),
    (
        "least_time_per_move",
        "86400.001",
        time_refused("least_time_per_move", 86_400_001),
    ),
    ("least_time_per_move", "-1", BadValue),
    ("least_time_per_move", "1s", BadValue),
    ("clock_grace", "0.25", Shows("0.25")),
    ("clock_grace", "2", Shows("2")),
    ("clock_grace", "0.001", Shows("0.001")),
    (
        "clock_grace",
        "2.001",
        Refused(RulesetError::ClockGraceTooLong { ms: 2_001 }),
    ),
    ("clock_grace", "0.0001", BadValue),
    ("clock_grace", ".5", BadValue),
    ("clock_grace", "5.", BadValue),
    ("time_main", "600", Shows("600")),
    ("time_main", "0", Shows("0")),
    ("time_main", "90.5", Shows("90.5")),
    ("time_main", "1.250", Shows("1.25")),
    ("time_main", "none", Shows("none")),
    ("time_main", "86401", time_refused("time_main", 86_401_000)),
    ("time_main", "18446744073709552", BadValue),
    ("time_main", "same", BadValue),
    ("time_main", "10m", BadValue),
    ("time_main", "+5", BadValue),
    ("time_main_white", "300", Shows("300")),
    ("time_main_white", "none", Shows("none")),
    (
        "time_main_white",
        "100000",
        time_refused("time_main_white", 100_000_000),
    ),
    ("time_main_white", "black", BadValue),
    ("time_byoyomi", "30", Shows("30")),
    ("time_byoyomi", "none", Shows("none")),
    ("time_byoyomi", "1e3", BadValue),
    ("time_byoyomi_white", "60", Shows("60")),
    ("time_byoyomi_white", "-60", BadValue),
    ("time_periods", "3", Shows("3")),
    ("time_periods", "1", Shows("1")),
    ("time_periods", "10", Shows("10")),
    (
        "time_periods",
        "0",
        Refused(RulesetError::ByoyomiPeriodsZero {
            option: "time_periods",
        }),
    ),
    (
        "time_periods",
        "11",
        Refused(RulesetError::ByoyomiPeriodsTooMany {
            option: "time_periods",
            periods: 11,
        }),
    ),
    ("time_periods", "1.5", BadValue),
    ("time_periods_white", "5", Shows("5")),
    (
        "time_periods_white",
        "0",
        Refused(RulesetError::ByoyomiPeriodsZero {
            option: "time_periods_white",
        }),
    ),
    ("time_periods_white", "five", BadValue),
    ("time_increment", "10", Shows("10")),
    ("time_increment", "0.1", Shows("0.1")),
    ("time_increment", "0.0001", BadValue),
    ("time_increment_white", "5", Shows("5")),
    (
        "time_increment_white",
        "90000",
        time_refused("time_increment_white", 90_000_000),
    ),
    ("time_increment_white", "x", BadValue),
];

fn shown(rules: &Ruleset, option: &str) -> String {
    let options = rules.options();
    let (_, value) = options
        .iter()
        .find(|(name, _)| *name == option)
        .unwrap_or_else(|| panic!("options() lacks {option}"));
    value.clone()
}

fn check(option: &str, value: &str, expect: &Expect) {
    let before = Ruleset::jsa();
    let mut rules = before;
    let got = rules.set(option, value);
    let case = format!("{option}={value:?}");
    match (expect, got) {
        (Shows(text), Ok(())) => assert_eq!(shown(&rules, option), *text, "{case}"),
        (BadValue, Err(e @ RulesetOptionError::BadValue { .. })) => {
            assert_eq!(e.field(), Some(Ruleset::OPTIONS[index(option)]), "{case}");
            assert_eq!(rules, before, "{case}: a refused value changed the ruleset");
        }
        (Refused(want), Err(RulesetOptionError::Refused(e))) => {
            assert_eq!(e, *want, "{case}");
            assert_eq!(e.field(), option, "{case}");
            assert_eq!(rules, before, "{case}: a refused value changed the ruleset");
            // The check refuses the same value set directly on the field.
            assert_eq!(direct(option, value).validate(), Err(*want), "{case}");
        }
        (expect, got) => panic!("{case}: expected {expect:?}, got {got:?}"),
    }
}

fn index(option: &str) -> usize {
    Ruleset::OPTIONS
        .iter()
        .position(|o| *o == option)
        .unwrap_or_else(|| panic!("{option} is not an option"))
}

/// The `jsa` preset with an unlimited time control, one side's allowance changed by `set`.
fn with_allowance(white: bool, set: impl Fn(&mut Allowance)) -> Ruleset {
    let mut control = TimeControl::UNLIMITED;
    set(if white {
        &mut control.white
    } else {
        &mut control.black
    });
    Ruleset {
        time_control: Some(control),
        ..Ruleset::jsa()
    }
}

/// The `jsa` preset with a numeric field set directly, bypassing `set`.
fn direct(option: &str, value: &str) -> Ruleset {
    let ms = || (value.parse::<f64>().unwrap() * 1000.0).round() as u64;
    let periods = || value.parse::<u32>().unwrap();
    match option {
        "least_time_per_move" => {
            return Ruleset {
                clock: ClockRules {
                    least_time_per_move_ms: ms(),
                    ..ClockRules::CHESS_CLOCK
                },
                ..Ruleset::jsa()
            };
        }
        "clock_grace" => {
            return Ruleset {
                clock: ClockRules {
                    grace_ms: ms(),
                    ..ClockRules::CHESS_CLOCK
                },
                ..Ruleset::jsa()
            };
        }
        "time_main" => return with_allowance(false, |a| a.main_ms = ms()),
        "time_main_white" => return with_allowance(true, |a| a.main_ms = ms()),
        "time_increment_white" => return with_allowance(true, |a| a.increment_ms = ms()),
        "time_periods" => return with_allowance(false, |a| a.periods = periods()),
        "time_periods_white" => return with_allowance(true, |a| a.periods = periods()),
        _ => {}
    }
    let n: u32 = value.parse().unwrap();
    match option {
        "move_cap" => Ruleset {
            move_cap: Some(n),
            ..Ruleset::jsa()
        },
        "agreement_threshold" => Ruleset {
            agreement_threshold: n,
            ..Ruleset::jsa()
        },
        _ => panic!("{option} has no range"),
    }
}

#[test]
fn every_option_accepts_and_refuses_its_values() {
    for (option, value, expect) in CASES {
        check(option, value, expect);
    }
}

#[test]
fn every_option_has_cases_that_accept_and_refuse() {
    for option in Ruleset::OPTIONS {
        let cases = || CASES.iter().filter(|(o, _, _)| *o == option);
        assert!(
            cases().any(|(_, _, e)| matches!(e, Shows(_))),
            "{option}: no accepted value"
        );
        assert!(
            cases().any(|(_, _, e)| !matches!(e, Shows(_))),
            "{option}: no refused value"
        );
    }
}

#[test]
fn set_reaches_every_field() {
    // One assignment per option, each moving the field away from the jsa preset.
    let mut rules = Ruleset::jsa();
    for (option, value) in [
        ("illegal_move", "reject"),
        ("repetition", "draw"),
        ("start_position_counted", "false"),
        ("declaration", "points27"),
        ("declaration_trigger", "automatic"),
        ("failed_declaration", "refuse"),
        ("jishogi", "draw"),
        ("handicap_credit", "false"),
        ("try_rule", "true"),
        ("move_cap", "320"),
        ("cap_mode", "plain"),
        ("csa_server_cap", "true"),
        ("agreement_threshold", "27"),
        ("agreement_tie", "black_wins"),
        ("clock_rounding", "seconds"),
        ("least_time_per_move", "1"),
        ("clock_grace", "0.5"),
        ("time_main", "600"),
        ("time_main_white", "300"),
        ("time_byoyomi", "10"),
        ("time_byoyomi_white", "20"),
        ("time_periods", "1"),
        ("time_periods_white", "2"),
        ("time_increment", "5"),
        ("time_increment_white", "0"),
    ] {
        rules.set(option, value).unwrap();
    }
    assert_eq!(
        rules,
        Ruleset {
            illegal_move: IllegalMovePolicy::Reject,
            repetition: OrdinaryResult::Draw,
            start_position_counted: false,
            declaration: Some(DeclarationRule::Points27),
            declaration_trigger: DeclarationTrigger::Automatic,
            failed_declaration: FailedDeclaration::Refuse,
            jishogi: OrdinaryResult::Draw,
            handicap_credit: false,
            try_rule: true,
            move_cap: Some(320),
            cap_mode: CapMode::Plain,
            csa_server_cap: true,
            agreement_threshold: 27,
            agreement_tie: AgreementTie::BlackWins,
            clock: ClockRules {
                rounding: ChargeRounding::Seconds,
                least_time_per_move_ms: 1000,
                grace_ms: 500,
            },
            time_control: Some(TimeControl {
                black: Allowance {
                    main_ms: 600_000,
                    byoyomi_ms: 10_000,
                    periods: 1,
                    increment_ms: 5_000,
                },
                white: Allowance {
                    main_ms: 300_000,
                    byoyomi_ms: 20_000,
                    periods: 2,
                    increment_ms: 0,
                },
            }),
        }
    );
    assert_eq!(rules.validate(), Ok(()));
}

#[test]
fn unknown_options_are_refused_with_the_known_names() {
    for key in ["", "agreement-threshold", "Move_cap", "preset", "max_moves"] {
        let mut rules = Ruleset::jsa();
        let err = rules.set(key, "1").unwrap_err();
        assert_eq!(
            err,
            RulesetOptionError::UnknownOption {
                key: key.to_owned()
            }
        );
        assert_eq!(err.field(), None);
        assert!(err.to_string().contains("agreement_tie"), "{err}");
        assert_eq!(rules, Ruleset::jsa());
    }
}

#[test]
fn every_preset_validates_and_its_options_round_trip() {
    for name in Ruleset::PRESETS {
        let preset = Ruleset::preset(name).unwrap();
        assert_eq!(preset.validate(), Ok(()), "{name}");
        assert_eq!(preset.violations(), [], "{name}");
        let options = preset.options();
        let names: Vec<_> = options.iter().map(|(o, _)| *o).collect();
        assert_eq!(names, Ruleset::OPTIONS, "{name}");
        // Printed options set onto every other preset give this one back.
        for other in Ruleset::PRESETS {
            let mut rules = Ruleset::preset(other).unwrap();
            for (option, value) in &options {
                rules
                    .set(option, value)
                    .unwrap_or_else(|e| panic!("{name} onto {other}: {e}"));
            }
            assert_eq!(rules, preset, "{name} onto {other}");
        }
    }
    assert_eq!(Ruleset::default().validate(), Ok(()));
}

#[test]
fn contradictions_are_refused_naming_their_option() {
    let cases = [
        (
            Ruleset {
                declaration: None,
                ..Ruleset::online()
            },
            RulesetError::AutomaticWithoutDeclaration,
            "declaration_trigger",
        ),
        (
            Ruleset {
                csa_server_cap: true,
                ..Ruleset::jsa()
            },
            RulesetError::CsaServerCapWithJsa500,
            "csa_server_cap",
        ),
        (
            Ruleset {
                cap_mode: CapMode::Jsa500,
                ..Ruleset::floodgate()
            },
            RulesetError::CsaServerCapWithJsa500,
            "csa_server_cap",
        ),
        (
            Ruleset {
                move_cap: Some(0),
                ..Ruleset::csa()
            },
            RulesetError::MoveCapZero,
            "move_cap",
        ),
        (
            Ruleset {
                move_cap: Some(MAX_MOVE_CAP + 1),
                ..Ruleset::csa()
            },
            RulesetError::MoveCapTooLong {
                cap: MAX_MOVE_CAP + 1,
            },
            "move_cap",
        ),
        (
            Ruleset {
                agreement_threshold: 4_000_000_000,
                ..Ruleset::amateur()
            },
            RulesetError::AgreementThreshold {
                threshold: 4_000_000_000,
            },
            "agreement_threshold",
        ),
    ];
    for (rules, error, field) in cases {
        assert_eq!(rules.validate(), Err(error), "{rules:?}");
        assert_eq!(error.field(), field);
        assert!(error.to_string().starts_with(field), "{error}");
        assert_eq!(rules.violations(), [error]);
    }
}

#[test]
fn contradictions_found_by_set_in_either_order_and_all_reported() {
    // `set` takes options one at a time, in any order; the check comes after the last.
    let mut rules = Ruleset::online();
    rules.set("declaration", "none").unwrap();
    assert_eq!(
        rules.validate(),
        Err(RulesetError::AutomaticWithoutDeclaration)
    );
    rules.set("declaration_trigger", "explicit").unwrap();
    assert_eq!(rules.validate(), Ok(()));

    let everything_wrong = Ruleset {
        declaration: None,
        move_cap: Some(0),
        cap_mode: CapMode::Jsa500,
        csa_server_cap: true,
        agreement_threshold: 5,
        ..Ruleset::online()
    };
    let fields: Vec<_> = everything_wrong
        .violations()
        .iter()
        .map(RulesetError::field)
        .collect();
    assert_eq!(
        fields,
        [
            "declaration_trigger",
            "move_cap",
            "csa_server_cap",
            "agreement_threshold"
        ]
    );
}

#[test]
fn options_without_effect_are_allowed() {
    // One override never forces another: each of these only has no effect.
    for (preset, option, value) in [
        ("jsa", "move_cap", "none"),       // jsa500 mode without a cap
        ("floodgate", "move_cap", "none"), // the server's early cap without a cap
        ("csa", "declaration", "none"),    // an explicit trigger and failed_declaration
        ("amateur", "csa_server_cap", "true"),
        ("csa", "try_rule", "true"), // with a declaration rule: docs/rules.md section 6 orders both
    ] {
        let mut rules = Ruleset::preset(preset).unwrap();
        rules.set(option, value).unwrap();
        assert_eq!(rules.validate(), Ok(()), "{preset} {option}={value}");
    }
}

#[test]
fn options_are_the_proto_override_fields_in_field_number_order() {
    // `RulesetError::field` names `ruleset.overrides.<field>` for a gRPC field violation, so
    // the option names must stay the proto's field names.
    let proto = include_str!("../../../proto/shogi/v1/arbiter.proto");
    let body = proto
        .split("message RulesetOverrides {")
        .nth(1)
        .and_then(|rest| rest.split("\n}").next())
        .expect("the proto has a RulesetOverrides message");
    let fields: Vec<(u32, &str)> = body
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("//") && line.ends_with(';'))
        .map(|line| {
            let (decl, number) = line.trim_end_matches(';').split_once('=').unwrap();
            let name = decl.split_whitespace().last().unwrap();
            (number.trim().parse().unwrap(), name)
        })
        .collect();
    let numbers: Vec<u32> = fields.iter().map(|(n, _)| *n).collect();
    let names: Vec<&str> = fields.iter().map(|(_, name)| *name).collect();
    assert_eq!(numbers, (1..=25).collect::<Vec<_>>());
    assert_eq!(names, Ruleset::OPTIONS);
}

/// Three time controls and none, under each rounding, set option by option onto every preset.
#[test]
fn time_controls_round_trip_onto_every_preset() {
    let even = TimeControl::even(Allowance {
        main_ms: 600_000,
        byoyomi_ms: 10_000,
        periods: 1,
        increment_ms: 0,
    });
    let odds = TimeControl {
        black: Allowance {
            main_ms: 900_500,
            byoyomi_ms: 0,
            periods: 3,
            increment_ms: 2_250,
        },
        white: Allowance {
            main_ms: 300_000,
            byoyomi_ms: 30_000,
            periods: 5,
            increment_ms: 0,
        },
    };
    let periods_only = TimeControl {
        white: Allowance {
            periods: 2,
            ..even.black
        },
        ..even
    };
    for control in [None, Some(even), Some(odds), Some(periods_only)] {
        for rounding in ChargeRounding::ALL {
            let rules = Ruleset {
                clock: ClockRules {
                    rounding,
                    least_time_per_move_ms: 1_000,
                    grace_ms: 125,
                },
                time_control: control,
                ..Ruleset::online()
            };
            let options = rules.options();
            for other in Ruleset::PRESETS {
                let mut got = Ruleset::preset(other).unwrap();
                got.time_control = Some(odds);
                for (option, value) in &options {
                    got.set(option, value)
                        .unwrap_or_else(|e| panic!("{option}={value}: {e}"));
                }
                assert_eq!(got, rules, "{control:?} {rounding:?} onto {other}");
            }
        }
    }
}

#[test]
fn white_follows_black_until_it_has_its_own() {
    let mut rules = Ruleset::csa();
    let main = |r: &Ruleset| r.time_control.map(|c| (c.black.main_ms, c.white.main_ms));
    // `same` without a control leaves none.
    rules.set("time_main_white", "same").unwrap();
    assert_eq!(rules.time_control, None);
    rules.set("time_main", "600").unwrap();
    assert_eq!(main(&rules), Some((600_000, 600_000)));
    let control = rules.time_control.unwrap();
    assert_eq!((control.black.periods, control.black.byoyomi_ms), (1, 0));
    rules.set("time_main_white", "300").unwrap();
    rules.set("time_main", "900").unwrap();
    assert_eq!(main(&rules), Some((900_000, 300_000)));
    assert_eq!(shown(&rules, "time_main_white"), "300");
    rules.set("time_main_white", "same").unwrap();
    assert_eq!(main(&rules), Some((900_000, 900_000)));
    assert_eq!(shown(&rules, "time_main_white"), "same");
    // `none` on any of them removes the control, and all show none.
    rules.set("time_periods_white", "none").unwrap();
    assert_eq!(rules.time_control, None);
    for option in Ruleset::CLOCK_OPTIONS
        .iter()
        .filter(|o| o.starts_with("time_"))
    {
        assert_eq!(shown(&rules, option), "none", "{option}");
    }
    assert_eq!(rules, Ruleset::csa());
}

#[test]
fn amounts_are_whole_units_of_the_rounding() {
    let mut rules = Ruleset::csa();
    rules.set("time_main", "90.5").unwrap();
    let error = RulesetError::ClockNotWholeUnits {
        option: "time_main",
        ms: 90_500,
        rounding: ChargeRounding::Seconds,
    };
    assert_eq!(rules.validate(), Err(error));
    assert_eq!(error.field(), "time_main");
    assert_eq!(
        error.to_string(),
        "time_main 90.5 s is not a whole number of seconds, and clock_rounding is seconds"
    );
    rules.set("clock_rounding", "milliseconds").unwrap();
    assert_eq!(rules.validate(), Ok(()));

    // The stopwatch: whole minutes, the least time per move included.
    let mut rules = Ruleset::floodgate();
    for (option, value) in [
        ("clock_rounding", "minutes"),
        ("least_time_per_move", "1"),
        ("time_main", "900"),
        ("time_byoyomi_white", "30"),
        ("time_increment", "60"),
    ] {
        rules.set(option, value).unwrap();
    }
    let fields: Vec<_> = rules.violations().iter().map(RulesetError::field).collect();
    assert_eq!(fields, ["least_time_per_move", "time_byoyomi_white"]);
    for error in rules.violations() {
        assert!(error.to_string().starts_with(error.field()), "{error}");
    }

    // Bounds are checked by `validate` too, for a ruleset built directly.
    let rules = Ruleset {
        clock: ClockRules {
            grace_ms: 10_000,
            ..ClockRules::CSA
        },
        time_control: Some(TimeControl::even(Allowance {
            main_ms: 600_000,
            byoyomi_ms: 10_000,
            periods: 0,
            increment_ms: 100_000_000,
        })),
        ..Ruleset::csa()
    };
    let fields: Vec<_> = rules.violations().iter().map(RulesetError::field).collect();
    assert_eq!(
        fields,
        [
            "clock_grace",
            "time_periods",
            "time_periods_white",
            "time_increment",
            "time_increment_white"
        ]
    );
}
