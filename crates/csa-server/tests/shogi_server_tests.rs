//! shogi-server's own socket tests (`test/TC_*.rb` of the copy in `../shared/third_party`),
//! run by Ruby against the front end in front of the whole arbiter: the tests are copied into a
//! temporary directory with their port set to ours (they connect to `localhost:4000`), and the
//! front end writes its records in the directory above them, where `TC_functional` looks for
//! the record it compares.

use arbiter_bus::{Bus, MemoryBus};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use test_support::Deadline;

/// How long one test file may run: `TC_functional` plays about twenty games, each with the
/// script's pauses of a tenth of a second.
const RUN_DEADLINE: Deadline = Deadline::secs(240);

/// Copies shogi-server's `test/` into `dir/test`, its port set to `port`.
fn copy_tests(dir: &Path, port: u16) {
    let from = test_support::shared("third_party/shogi-server/test");
    let to = dir.join("test");
    copy_dir(&from, &to);
    let client = to.join("baseclient.rb");
    let text = std::fs::read_to_string(&client).expect("baseclient.rb");
    assert!(
        text.contains("port = 4000"),
        "baseclient.rb no longer sets its port so"
    );
    std::fs::write(
        &client,
        text.replace("port = 4000", &format!("port = {port}")),
    )
    .expect("write baseclient.rb");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for e in std::fs::read_dir(from).expect("read the tests").flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).expect("copy a test file");
        }
    }
}

/// Runs `file` (`TC_functional.rb`) against a front end with `max_moves`, then `after` on the
/// record directory; the output when it fails.
fn run(file: &str, max_moves: u32, after: fn(&Path)) -> Result<(), String> {
    test_support::require_ruby("test/unit/assertions");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (port, stop) = runtime.block_on(async {
        let bus: Bus = Arc::new(MemoryBus::default());
        let grpc = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind gRPC");
        let stack = arbiter_stack::Stack::start(grpc, bus, arbiter_stack::StackConfig::default())
            .await
            .expect("start the arbiter");
        let csa = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind CSA");
        let port = csa.local_addr().expect("an address").port();
        let mut config = csa_server::Config::new(&format!("http://{}", stack.addr()));
        config.max_moves = max_moves;
        config.event = "test".to_owned();
        config.record_dir = Some(dir.path().to_owned());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let server = csa_server::run(csa, config, async {
                let _ = stopped.await;
            });
            server.await.expect("the front end");
            stack.shutdown().await;
        });
        (port, stop)
    });
    copy_tests(dir.path(), port);
    // Verbose: each test's name is printed as it starts, so a run stopped at its deadline
    // says which test waited.
    let mut child = Command::new("ruby")
        .arg(file)
        .arg("-v")
        .current_dir(dir.path().join("test"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ruby");
    let until = std::time::Instant::now() + RUN_DEADLINE.get();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for ruby") {
            break Some(status);
        }
        if std::time::Instant::now() >= until {
            let _ = child.kill();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().expect("ruby's output");
    let _ = stop.send(());
    runtime.shutdown_timeout(Duration::from_secs(5));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match status {
        Some(s) if s.success() => {
            after(dir.path());
            Ok(())
        }
        Some(s) => Err(format!("{file} failed ({s}):\n{text}")),
        None => Err(format!(
            "{file}: not done within {:?}:\n{text}",
            RUN_DEADLINE.get()
        )),
    }
}

/// shogi-server's `mk_game_results` reads the front end's records: one line per game between
/// two rated players, with its result.
fn game_results_read_the_records(dir: &Path) {
    let script = test_support::shared("third_party/shogi-server/mk_game_results");
    // The years' folders: the copy of shogi-server's tests beside them holds CSA files of its
    // own (in Shift_JIS), which are no records.
    let years: Vec<_> = std::fs::read_dir(dir)
        .expect("the record directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "test"))
        .collect();
    assert!(!years.is_empty(), "no record written in {}", dir.display());
    let out = Command::new("ruby")
        .arg(&script)
        .args(&years)
        .output()
        .expect("run mk_game_results");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mk_game_results failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // end time, summary type, black's mark, black's id, white's id, white's mark, file, moves
    let atmark: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(|f| f.len() == 8 && f[6].contains("atmark-1500-0"))
        .collect();
    assert_eq!(atmark.len(), 1, "{text}");
    let f = &atmark[0];
    assert_eq!(
        (f[1], f[2], f[3], f[4], f[5], f[7]),
        (
            "toryo",
            "lose",
            "atmark_B@p1+275876e34cf609db118f3d84b799a790",
            "atmark_W@p2+275876e34cf609db118f3d84b799a790",
            "win",
            "2"
        ),
        "{text}"
    );
}

fn nothing_after(_: &Path) {}

macro_rules! shogi_server_test {
    ($name:ident, $file:literal, $max_moves:literal) => {
        shogi_server_test!($name, $file, $max_moves, nothing_after);
    };
    ($name:ident, $file:literal, $max_moves:literal, $after:ident) => {
        #[test]
        fn $name() {
            if let Err(e) = run($file, $max_moves, $after) {
                panic!("{e}");
            }
        }
    };
}

shogi_server_test!(
    tc_functional,
    "TC_functional.rb",
    256,
    game_results_read_the_records
);
shogi_server_test!(tc_uchifuzume, "TC_uchifuzume.rb", 256);
shogi_server_test!(tc_oute_sennichite, "TC_oute_sennichite.rb", 256);
shogi_server_test!(tc_not_sennichite, "TC_not_sennichite.rb", 256);
shogi_server_test!(tc_max_moves_draw, "TC_max_moves_draw.rb", 256);
shogi_server_test!(tc_before_agree, "TC_before_agree.rb", 256);
shogi_server_test!(tc_jishogi_kachi, "TC_jishogi_kachi.rb", 0);
