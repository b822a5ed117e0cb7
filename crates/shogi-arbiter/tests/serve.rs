//! `shogi-arbiter serve`'s console and bearer token, as an operator meets them: the console on
//! the gRPC port by default and gone with `--no-console`; the token taken from the environment
//! as the validator's binary takes it, and refused when it is unusable.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_shogi-arbiter");

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(args: &[&str], token: Option<&str>) -> (Server, String) {
    let mut command = Command::new(BIN);
    command
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("MOVE_VALIDATOR_AUTH_TOKEN")
        .env_remove("MOVE_VALIDATOR_AUTH_TOKEN_FILE")
        .env_remove("SHOGI_ARBITER_NO_CONSOLE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(token) = token {
        command.env("MOVE_VALIDATOR_AUTH_TOKEN", token);
    }
    let mut child = command.spawn().unwrap();
    // The first line is the bound address: read it rather than sleep.
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Server(child), line.trim().to_owned())
}

/// `GET /` over HTTP/1.1: the answer's first line and the rest, or `None` when the server
/// closes the connection without an HTTP/1.1 answer.
fn get_page(addr: &str) -> Option<(String, String)> {
    let mut tcp = TcpStream::connect(addr).unwrap();
    write!(
        tcp,
        "GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    let _ = tcp.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (first, rest) = text.split_once("\r\n")?;
    first
        .starts_with("HTTP/1.1")
        .then(|| (first.to_owned(), rest.to_owned()))
}

#[test]
fn the_console_is_served_by_default_and_not_with_no_console() {
    let (_server, addr) = serve(&[], None);
    let (status, rest) = get_page(&addr).expect("an HTTP/1.1 answer");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        rest.contains("<title>shogi-arbiter console</title>"),
        "{rest}"
    );
    let (_server, addr) = serve(&["--no-console"], None);
    assert_eq!(get_page(&addr), None, "--no-console serves no page");
}

#[test]
fn the_bearer_token_comes_from_the_environment() {
    let (_server, addr) = serve(&[], Some("s3cret"));
    let play = |token: Option<&str>| {
        let mut command = Command::new(BIN);
        command
            .args(["play", "--addr", &format!("http://{addr}"), "7g7f"])
            .env_remove("SHOGI_ARBITER_TOKEN")
            .env_remove("SHOGI_ARBITER_TOKEN_FILE");
        if let Some(token) = token {
            command.env("SHOGI_ARBITER_TOKEN", token);
        }
        command.output().unwrap()
    };
    let refused = play(None);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr).to_lowercase();
    assert!(
        stderr.contains("unauthenticated") || stderr.contains("bearer"),
        "{stderr}"
    );
    let accepted = play(Some("s3cret"));
    assert!(
        accepted.status.success(),
        "{}",
        String::from_utf8_lossy(&accepted.stderr)
    );
    // A token no client could send is refused before anything is bound.
    let out = Command::new(BIN)
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("MOVE_VALIDATOR_AUTH_TOKEN", "two words")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("invalid configuration"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing bound: no address printed");
}
