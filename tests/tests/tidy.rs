//! Rules of the sources themselves, checked the way rust-analyzer's tidy tests check theirs.
//!
//! A test waits on a condition until a deadline scaled to the machine
//! (`test_support::Deadline`, `test_support::patience`), never until a fixed one, because the
//! machine CI and newcomers run the suite on is busy. Flagged in every test source of the
//! workspace (`tests/` folders and `test-support`):
//! - a deadline constant declared as a plain `Duration` (a name with `DEADLINE`, `WAIT`,
//!   `READY` or `RESTART` in it);
//! - a deadline computed as `Instant::now() + Duration::from_…`.
//!
//! A line that states a bound of the product rather than a wait (an answer must come within a
//! second, whatever the load) says so with the comment `// product bound`.
//!
//! Every Rust source of the workspace (`crates/`, `tests/`, `fuzz/`):
//! - no function is longer than [`LONG_FUNCTION`] lines, from its `fn` line to its closing
//!   brace, comments and blank lines included, tests included, except the ones in
//!   [`LONG_FUNCTIONS`], each with the reason it stays whole; an entry that is no longer long,
//!   or no longer there, is flagged too, so that the list only shrinks;
//! - no path of a machine: `/work/`, `/home/`, `/root/` or `/tmp/` at the start of a path, in
//!   code, strings or comments. Such a path names one machine's layout (a checkout, a user's home,
//!   a scratch directory) and is wrong on every other; a document is named by its name
//!   (`RULES.md` of the shared folder), a scratch file is asked of `tempfile` or
//!   `std::env::temp_dir()` at run time, which is no literal and is not flagged. A relative path
//!   that contains one of those words (`target/tmp/`) is not a machine's path and is not flagged.

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

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The test sources: each crate's `tests/`, the black-box `tests/tests`, and `test-support`.
fn test_sources() -> Vec<PathBuf> {
    let root = root();
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

/// The longest a function may be, in lines from its `fn` line to its closing brace.
const LONG_FUNCTION: usize = 150;

/// The functions left longer than [`LONG_FUNCTION`]: (path from the repository's root, name,
/// why it stays whole).
const LONG_FUNCTIONS: &[(&str, &str, &str)] = &[
    (
        "crates/deploy-check/src/alerts.rs",
        "every_metric_of_the_rules_and_the_dashboard_is_exported",
        "one scenario against one served arbiter: the names the rules and panels want, then the scrapes taken as the arbiter is made to export each kind of series, then the comparison; its steps share the process and the scrape",
    ),
    (
        "crates/csa-protocol/src/tests.rs",
        "client_lines",
        "a data table: one client line and what it parses to a row, in shogi-server's order of patterns",
    ),
    (
        "crates/csa-protocol/src/tests.rs",
        "sessions",
        "a data table: one session's lines in and out a row, each quirk of the protocol beside its neighbours",
    ),
    (
        "crates/arbiter-stack/benches/cluster_load.rs",
        "run",
        "a benchmark's script, read top to bottom as the report it prints: its steps share the servers, clients and figures of one run, and each is a commented block",
    ),
    (
        "crates/arbiter-stack/benches/cluster_load.rs",
        "main",
        "the benchmark's flags read and its configurations run side by side, with the ratios printed: a benchmark's script, read top to bottom as the report it prints: its steps share the servers, clients and figures of one run, and each is a commented block",
    ),
    (
        "crates/arbiter-stack/benches/pipeline.rs",
        "window",
        "one measured window: the paced drivers, the timed probe and the counters read around them share their clocks",
    ),
    (
        "crates/arbiter-stack/tests/metrics.rs",
        "the_counters_say_what_the_pipeline_did",
        "each counter is checked against what the steps before it did: one scenario on one set of running servers, each step's state feeding the next: split, the helpers would take most of its locals and the story would read out of order",
    ),
    (
        "crates/move-validator/benches/loadgen.rs",
        "main",
        "its rows (echo server, bus alone, the validator) each compared with the baseline row before it: a benchmark's script, read top to bottom as the report it prints: its steps share the servers, clients and figures of one run, and each is a commented block",
    ),
    (
        "crates/move-validator/tests/paging.rs",
        "a_long_game_is_refused_whole_and_read_a_page_at_a_time",
        "one scenario on one set of running servers, each step's state feeding the next: split, the helpers would take most of its locals and the story would read out of order",
    ),
    (
        "crates/shogi-records/src/csa.rs",
        "statement",
        "one match over the kinds of CSA statement, an arm a kind, on the destructured reader state; the hot path of the CSA reader",
    ),
    (
        "crates/shogi-records/tests/corpus.rs",
        "every_corpus_record_reads_as_the_manifest_says",
        "one pass over the corpus manifest, each record checked for legality, ending and positions against its row",
    ),
    (
        "crates/shogi-rules/src/sfen.rs",
        "parse_fast",
        "the fast SFEN parser, one pass with its tables and bitboards in locals; split, the state would be passed through every step of the hot path",
    ),
    (
        "crates/shogi-rules/src/sfen.rs",
        "parse_checked",
        "the SFEN parser that names each error, field by field in the order of the format, kept parallel to parse_fast, against which it is tested",
    ),
    (
        "crates/shogi-rules/tests/differential.rs",
        "check_row",
        "every comparison of one oracle row with the core, in one place so that a disagreement is reported with the whole row",
    ),
    (
        "tests/tests/cluster.rs",
        "under_fault",
        "one scenario on one set of running servers, each step's state feeding the next: split, the helpers would take most of its locals and the story would read out of order",
    ),
    (
        "tests/tests/log_integrity.rs",
        "bad_log_entries_are_set_aside_and_every_reader_plays_on",
        "one scenario on one set of running servers, each step's state feeding the next: split, the helpers would take most of its locals and the story would read out of order",
    ),
    (
        "tests/tests/nats_permissions.rs",
        "each_user_does_its_job_and_nothing_else",
        "one scenario on one set of running servers, each step's state feeding the next: split, the helpers would take most of its locals and the story would read out of order",
    ),
    (
        "tests/tests/nats_permissions.rs",
        "every_credential_against_every_subject_is_the_documented_matrix",
        "the whole permission matrix tried and read back in one run, compared once with the documented one",
    ),
    (
        "tests/tests/retention.rs",
        "finished_games_are_archived_then_purged_and_live_ones_stay",
        "one scenario on one set of running servers, each step's state feeding the next: split, the helpers would take most of its locals and the story would read out of order",
    ),
    (
        "tests/tests/telemetry.rs",
        "serve_exports_a_moves_trace_over_otlp_and_logs_json",
        "one scenario on one set of running servers, each step's state feeding the next: split, the helpers would take most of its locals and the story would read out of order",
    ),
];

/// Every Rust source of the workspace: `crates/`, `tests/` and the fuzz targets, with its path
/// from the repository's root.
fn all_sources() -> Vec<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    for dir in ["crates", "tests", "fuzz"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 150, "found only {} sources", files.len());
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&root).unwrap_or(&f);
            let rel = rel.to_string_lossy().replace('\\', "/");
            (rel, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

/// The code of a Rust source with the text of its comments, strings and character literals
/// blanked (each byte a space, line breaks kept), so that braces and keywords are found only in
/// code and every line keeps its number.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        let start = i;
        if rest.starts_with(b"//") {
            i += rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
        } else if rest.starts_with(b"/*") {
            // Block comments nest.
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(hashes) = raw_string_start(b, i) {
            // r"…", r#"…"#, br#"…"#: ends at the quote followed by as many `#`.
            i += rest.iter().position(|&c| c == b'"').unwrap() + 1;
            let end: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i += b[i..]
                .windows(end.len())
                .position(|w| w == end)
                .map_or(b.len() - i, |p| p + end.len());
        } else if rest[0] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', '歩'), not a lifetime ('a).
            let close = if rest.get(1) == Some(&b'\\') {
                rest.iter().skip(3).position(|&c| c == b'\'').map(|p| p + 3)
            } else {
                let len = std::str::from_utf8(&rest[1..rest.len().min(5)])
                    .map_or_else(|e| e.valid_up_to(), |s| s.len())
                    .min(4);
                let c = std::str::from_utf8(&rest[1..1 + len])
                    .ok()
                    .and_then(|s| s.chars().next());
                c.and_then(|c| {
                    (rest.get(1 + c.len_utf8()) == Some(&b'\'')).then(|| 1 + c.len_utf8())
                })
            };
            match close {
                Some(close) => i += close + 1,
                None => {
                    i += 1;
                    continue;
                }
            }
        } else {
            i += 1;
            continue;
        }
        blank(&mut out, start, i.min(b.len()));
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The number of `#` of a raw string literal starting at `i` (`r"`, `r#"`, `br##"` ...), if one
/// does.
fn raw_string_start(b: &[u8], i: usize) -> Option<usize> {
    if i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_') {
        return None;
    }
    let at = if b[i..].starts_with(b"br") {
        i + 2
    } else if b[i] == b'r' {
        i + 1
    } else {
        return None;
    };
    let hashes = b[at..].iter().take_while(|&&c| c == b'#').count();
    (b.get(at + hashes) == Some(&b'"')).then_some(hashes)
}

/// Each function of a source that has a body: its name, its first line (1-based) and its length
/// in lines, from the `fn` line to the closing brace.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(text);
    let b = code.as_bytes();
    let line_at = |i: usize| b[..i].iter().filter(|&&c| c == b'\n').count() + 1;
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(p) = code[i..].find("fn ") {
        let at = i + p;
        i = at + 3;
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let name: String = code[at + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body: the first `{` after the signature, unless a `;` ends a declaration first.
        let Some(open) = code[at..].find(['{', ';']).map(|o| at + o) else {
            continue;
        };
        if b[open] == b';' {
            continue;
        }
        let mut depth = 0;
        let mut close = None;
        for (k, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(close) = close else {
            continue;
        };
        let first = line_at(at);
        found.push((name, first, line_at(close) - first + 1));
    }
    found
}

#[test]
fn no_function_is_longer_than_the_limit_unless_listed() {
    let mut found = Vec::new();
    let mut listed_seen = vec![false; LONG_FUNCTIONS.len()];
    for (path, text) in all_sources() {
        for (name, line, len) in functions(&text) {
            if len <= LONG_FUNCTION {
                continue;
            }
            match LONG_FUNCTIONS
                .iter()
                .position(|(p, n, _)| *p == path && *n == name)
            {
                Some(k) => listed_seen[k] = true,
                None => found.push(format!(
                    "{path}:{line}: fn {name} is {len} lines (at most {LONG_FUNCTION}): split it \
                     into steps, or add it to LONG_FUNCTIONS with the reason it stays whole"
                )),
            }
        }
    }
    for ((path, name, _), seen) in LONG_FUNCTIONS.iter().zip(listed_seen) {
        if !seen {
            found.push(format!(
                "{path}: fn {name} is listed in LONG_FUNCTIONS but is no longer over \
                 {LONG_FUNCTION} lines (or no longer there): remove it from the list"
            ));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn functions_are_measured_from_fn_to_the_closing_brace() {
    let text = r##"
/// A doc comment with a brace { and fn inside.
pub(crate) fn short(x: u8) -> u8 {
    let s = "}}} fn fake() {";
    let r = r#"{ " }"#;
    let c = '}';
    let q = ('\'', b'"', '\u{7D}', '\\');
    let l: &'static str = "x";
    /* { nested /* } */ } */
    let f: fn(u8) -> u8 = |y| y;
    x
}

trait T {
    fn declared(&self);
    fn defaulted(&self) {
        // }
    }
}
"##;
    let got: Vec<(String, usize, usize)> = functions(text);
    let want = [("short", 3, 10), ("defaulted", 16, 3)];
    let got: Vec<(&str, usize, usize)> = got.iter().map(|(n, l, s)| (n.as_str(), *l, *s)).collect();
    assert_eq!(got, want);
}

/// The machine paths in a source: (line, the path's first 40 characters).
fn machine_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for dir in ["/work/", "/home/", "/root/", "/tmp/"] {
            for (at, _) in line.match_indices(dir) {
                let before = line[..at].chars().next_back();
                let starts_a_path = before.is_none_or(|c| {
                    !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '$' | '}'))
                });
                if starts_a_path {
                    found.push((n + 1, line[at..].chars().take(40).collect()));
                }
            }
        }
    }
    found
}

#[test]
fn no_source_names_a_path_of_a_machine() {
    let mut found = Vec::new();
    for (path, text) in all_sources() {
        if path.ends_with("tests/tidy.rs") {
            // This file's examples of what the rule flags.
            continue;
        }
        for (line, at) in machine_paths(&text) {
            found.push(format!(
                "{path}:{line}: {at:?} names a path of one machine: name the document, or ask \
                 tempfile or std::env::temp_dir() for a scratch file"
            ));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_rule_catches_each_kind_of_machine_path() {
    for bad in [
        "//! The table is /work/shared/RULES.md section 7.",
        r#"    let dir = Path::new("/tmp/arbiter-test");"#,
        r#"    std::fs::read("/home/user/corpus/a.kif")"#,
        "    /// (see /root/notes.md)",
        "/work/main",
        r#"    let p = "(/tmp/x)";"#,
    ] {
        assert_eq!(machine_paths(bad).len(), 1, "{bad}");
    }
    for good in [
        "//! The table is RULES.md section 7 of the shared folder.",
        "    let dir = tempfile::tempdir()?;",
        "    let p = std::env::temp_dir().join(\"deploy-check\");",
        r#"    let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/tmp/x");"#,
        r#"    let p = format!("{}/tmp/x", dir.display());"#,
        "    let url = \"https://example.com/home/\";",
        "    let p = \"$HOME/work/x\";",
    ] {
        assert!(machine_paths(good).is_empty(), "{good}");
    }
}
