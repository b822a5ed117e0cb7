//! A standard output closed by its reader (`shogi-arbiter judge DIR | head -1`) ends every
//! printing command quietly with exit 0: never a panic (exit 101), never a thread left waiting,
//! never an error message. The commands that need a NATS server are checked the same way in
//! `operator_tools.rs`.

use std::io::{Read as _, Write as _};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use test_support::Deadline;

const BIN: &str = env!("CARGO_BIN_EXE_shogi-arbiter");
const DEADLINE: Deadline = Deadline::secs(30);

fn corpus() -> String {
    test_support::shared("corpus/records").display().to_string()
}

/// `child`'s exit status, waited for until `deadline`; `None`, the child killed, when it has
/// not exited by then.
fn exit_within(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let until = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(status);
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs the binary with `args` (and `input` on standard input) writing into a pipe whose
/// reader is already gone; its exit status and standard error.
fn into_closed_pipe(args: &[&str], input: Option<Vec<u8>>) -> (Option<ExitStatus>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start shogi-arbiter");
    if let Some(bytes) = input {
        let mut stdin = child.stdin.take().expect("piped");
        // The command may stop reading once its output is gone: a failed write here is fine.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let mut stderr = child.stderr.take().expect("piped");
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let status = exit_within(&mut child, DEADLINE.get());
    (status, errors.join().expect("stderr reader"))
}

#[test]
fn every_printing_command_ends_quietly_on_a_closed_pipe() {
    let corpus = corpus();
    let record = test_support::shared(
        "corpus/records/checkmate/mogproject+mog-core-scala__jvm__src__test__resources__kif__mate__001.kif",
    )
    .display()
    .to_string();
    let startpos = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1";
    let sfens: Vec<u8> = format!("{startpos}\n").repeat(2000).into_bytes();
    let usi_games: Vec<u8> = "position startpos moves 7g7f 3c3d 8h2b+\n"
        .repeat(2000)
        .into_bytes();
    let cases: Vec<(Vec<&str>, Option<Vec<u8>>)> = vec![
        (vec!["perft", "--depth", "2", "--divide"], None),
        (vec!["moves", "--sfen", startpos], None),
        (vec!["moves", "--stdin"], Some(sfens)),
        (vec!["judge", "--jobs", "1", &corpus], None),
        (vec!["judge", "--jobs", "2", &corpus], None),
        (vec!["judge", "--jobs", "4", &corpus], None),
        (vec!["judge", "--format", "text", &corpus], None),
        (vec!["judge", "--stdin"], Some(usi_games)),
        (vec!["convert", "--to", "csa", &record], None),
        (vec!["impasse", "--sfen", startpos], None),
        (vec!["completions", "bash"], None),
    ];
    // Every case is run, and every one that fails is said.
    let mut failed = Vec::new();
    for (args, input) in cases {
        match into_closed_pipe(&args, input) {
            (Some(status), stderr) if status.code() == Some(0) && stderr.is_empty() => {}
            (Some(status), stderr) => failed.push(format!("{args:?}: {status}: {stderr}")),
            (None, _) => failed.push(format!("{args:?}: still running after {DEADLINE:?}")),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// As a shell runs it: `head` reads one line and exits, whatever the number of threads
/// judging.
#[test]
fn judge_into_head_returns_with_any_number_of_jobs() {
    let corpus = corpus();
    let mut failed = Vec::new();
    for jobs in ["1", "2", "3", "8"] {
        let mut child = Command::new("bash")
            .args([
                "-c",
                r#""$0" judge --jobs "$1" "$2" | head -1; exit "${PIPESTATUS[0]}""#,
                BIN,
                jobs,
                &corpus,
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start bash");
        let Some(status) = exit_within(&mut child, DEADLINE.get()) else {
            failed.push(format!("--jobs {jobs}: still running after {DEADLINE:?}"));
            continue;
        };
        let mut out = String::new();
        let mut err = String::new();
        let _ = child.stdout.take().expect("piped").read_to_string(&mut out);
        let _ = child.stderr.take().expect("piped").read_to_string(&mut err);
        if !status.success() || out.lines().count() != 1 || !err.is_empty() {
            let lines = out.lines().count();
            failed.push(format!("--jobs {jobs}: {status}, {lines} lines: {err}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The one way to print is `output`: a `println!` or a raw `stdout()` elsewhere would panic or
/// fail loudly on a closed pipe.
#[test]
fn every_command_prints_through_the_one_writer() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&src).expect("src") {
        let path = entry.expect("an entry").path();
        if path.file_name().is_some_and(|n| n == "output.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source");
        for (no, line) in text.lines().enumerate() {
            let code = line
                .split("//")
                .next()
                .unwrap_or("")
                .replace("eprintln!", "")
                .replace("eprint!(", "");
            if ["println!", "print!(", "io::stdout()", "std::io::stdout()"]
                .iter()
                .any(|p| code.contains(p))
            {
                found.push(format!("{}:{}: {line}", path.display(), no + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "print through crate::output:\n{}",
        found.join("\n")
    );
}
