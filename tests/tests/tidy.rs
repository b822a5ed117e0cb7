//! Rules of the test suite itself, checked on its sources the way rust-analyzer's tidy tests
//! check theirs (issue 18): a test waits on a condition until a deadline scaled to the machine
//! (`test_support::Deadline`, `test_support::patience`), never until a fixed one, because the
//! machine CI and newcomers run the suite on is busy.
//!
//! Flagged in every test source of the workspace (`tests/` folders and `test-support`):
//! - a deadline constant declared as a plain `Duration` (a name with `DEADLINE`, `WAIT`,
//!   `READY` or `RESTART` in it);
//! - a deadline computed as `Instant::now() + Duration::from_…`.
//!
//! A line that states a bound of the product rather than a wait (an answer must come within a
//! second, whatever the load) says so with the comment `// product bound`.

use std::path::{Path, PathBuf};

/// The marker that exempts a line.
const EXEMPT: &str = "// product bound";

/// Why `line` breaks the rule, if it does.
fn fixed_deadline(line: &str) -> Option<&'static str> {
    if line.contains(EXEMPT) {
        return None;
    }
    let code = line.split("//").next().unwrap_or("");
    let constant = code
        .trim_start()
        .trim_start_matches("pub ")
        .starts_with("const ")
        && ["DEADLINE", "WAIT", "READY", "RESTART"]
            .iter()
            .any(|w| code.split(':').next().is_some_and(|name| name.contains(w)))
        && code.contains("Duration =");
    if constant {
        return Some("a deadline constant that is a plain Duration: use test_support::Deadline");
    }
    let computed = code.contains("Instant::now() + Duration::from")
        || code.contains("Instant::now() + std::time::Duration::from");
    computed.then_some("a fixed deadline: scale it with test_support::patience or Deadline")
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                sources(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The test sources: each crate's `tests/`, the black-box `tests/tests`, and `test-support`.
fn test_sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    sources(&root.join("tests/tests"), &mut files);
    sources(&root.join("tests/src"), &mut files);
    sources(&root.join("crates/test-support/src"), &mut files);
    for krate in std::fs::read_dir(root.join("crates"))
        .expect("crates/")
        .flatten()
    {
        sources(&krate.path().join("tests"), &mut files);
    }
    assert!(files.len() > 40, "found only {} test sources", files.len());
    files
}

#[test]
fn no_test_waits_until_a_fixed_deadline() {
    let mut found = Vec::new();
    for f in test_sources() {
        if f.ends_with("tests/tidy.rs") {
            // This file's examples of what the rule flags.
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if let Some(why) = fixed_deadline(line) {
                found.push(format!(
                    "{}:{}: {why}\n    {}",
                    f.display(),
                    i + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_rule_catches_each_kind_of_fixed_deadline() {
    for bad in [
        "const DEADLINE: Duration = Duration::from_secs(20);",
        "pub const VERDICT_DEADLINE: std::time::Duration = Duration::from_secs(60);",
        "const NATS_READY: Duration = Duration::from_secs(30);",
        "    let deadline = Instant::now() + Duration::from_secs(10);",
        "    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(500);",
    ] {
        assert!(fixed_deadline(bad).is_some(), "{bad}");
    }
    for good in [
        "const DEADLINE: test_support::Deadline = test_support::Deadline::secs(20);",
        "const POLL: Duration = Duration::from_millis(25);",
        "    let deadline = Instant::now() + DEADLINE.get();",
        "    let deadline = Instant::now() + test_support::patience(Duration::from_secs(10));",
        "    let deadline = Instant::now() + Duration::from_secs(1); // product bound",
    ] {
        assert!(fixed_deadline(good).is_none(), "{good}");
    }
}
