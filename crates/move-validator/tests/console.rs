//! The browser console as the server serves it, over plain HTTP/1.1 on loopback (the browser
//! itself is tested in `web/console/test/`): the embedded page is the committed build, gRPC-Web
//! calls reach the service (behind the bearer token when one is set), native gRPC still works
//! on the same port, and nothing of it is served unless the console is on.

use move_validator::Config;
use prost::Message as _;
use shogi_proto::v1::{self as pb, move_validator_client::MoveValidatorClient};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn start(
    console: bool,
    token: Option<&str>,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start_with_hosts(console, token, &[]).await
}

async fn start_with_hosts(
    console: bool,
    token: Option<&str>,
    hosts: &[&str],
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut config = Config::new("nats://127.0.0.1:4222");
    config.console = console;
    config.auth_token = token.map(str::to_owned);
    config.console_hosts = hosts.iter().map(|h| (*h).to_owned()).collect();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(move_validator::serve(
        listener,
        Arc::new(arbiter_bus::MemoryBus::default()),
        config,
        async {
            let _ = stopped.await;
        },
    ));
    (addr, stop)
}

/// An HTTP/1.1 answer: status, headers (lower-case names), body with any chunking undone.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

/// One HTTP/1.1 request on a new connection (`Connection: close`), read to its end; `None`
/// when the server closes the connection without an HTTP/1.1 answer.
async fn http(addr: SocketAddr, head: &str, body: &[u8]) -> Option<Answer> {
    http_as(addr, Some(&addr.to_string()), head, body).await
}

/// [`http`] with `host` as the `Host` header (none when `None`), as a browser sends the name
/// in its address bar.
async fn http_as(addr: SocketAddr, host: Option<&str>, head: &str, body: &[u8]) -> Option<Answer> {
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let host = host.map_or_else(String::new, |h| format!("\r\nHost: {h}"));
    let request = format!(
        "{head}{host}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    // A server that does not speak HTTP/1.1 may reset the connection as soon as it has read the
    // head, while the body is still being written, or while the answer is read: no answer.
    let mut raw = Vec::new();
    if tcp.write_all(request.as_bytes()).await.is_ok() && tcp.write_all(body).await.is_ok() {
        let _ = tcp.read_to_end(&mut raw).await;
    }
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next()?;
    if !status_line.starts_with("HTTP/1.1 ") {
        return None;
    }
    let status = status_line.get(9..12)?.parse().ok()?;
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut rest = &raw[end + 4..];
    let body = if headers.get("transfer-encoding").map(String::as_str) == Some("chunked") {
        let mut body = Vec::new();
        loop {
            let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[..line_end]).ok()?.trim(), 16)
                    .ok()?;
            rest = &rest[line_end + 2..];
            if size == 0 {
                break;
            }
            body.extend_from_slice(rest.get(..size)?);
            rest = rest.get(size + 2..)?;
        }
        body
    } else {
        rest.to_vec()
    };
    Some(Answer {
        status,
        headers,
        body,
    })
}

/// A gRPC-Web call of `method` with `request`, as a browser makes it.
async fn grpc_web(
    addr: SocketAddr,
    method: &str,
    request: &impl prost::Message,
    token: Option<&str>,
) -> Answer {
    grpc_web_as(addr, &addr.to_string(), method, request, token).await
}

/// [`grpc_web`] from a page loaded as `host`.
async fn grpc_web_as(
    addr: SocketAddr,
    host: &str,
    method: &str,
    request: &impl prost::Message,
    token: Option<&str>,
) -> Answer {
    let message = request.encode_to_vec();
    let mut frame = vec![0u8];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(&message);
    let auth = token.map_or_else(String::new, |t| format!("\r\nAuthorization: Bearer {t}"));
    let head = format!(
        "POST /shogi.v1.MoveValidator/{method} HTTP/1.1\r\nContent-Type: application/grpc-web+proto\r\nX-Grpc-Web: 1{auth}"
    );
    http_as(addr, Some(host), &head, &frame)
        .await
        .expect("an HTTP/1.1 answer")
}

/// The frames of a gRPC-Web body: (flags, payload); flag 0x80 marks the trailers.
fn frames(mut body: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while body.len() >= 5 {
        let len = u32::from_be_bytes(body[1..5].try_into().unwrap()) as usize;
        out.push((body[0], body[5..5 + len].to_vec()));
        body = &body[5 + len..];
    }
    assert!(body.is_empty(), "a truncated frame");
    out
}

/// The grpc-status of a gRPC-Web answer: in its headers (an error without a message) or in
/// its trailer frame.
fn grpc_status(answer: &Answer) -> String {
    if let Some(status) = answer.headers.get("grpc-status") {
        return status.clone();
    }
    let (_, trailers) = frames(&answer.body)
        .into_iter()
        .find(|(flags, _)| flags & 0x80 != 0)
        .expect("a trailer frame");
    String::from_utf8(trailers)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("grpc-status:"))
        .expect("grpc-status in the trailers")
        .trim()
        .to_owned()
}

fn dist(file: &str) -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../web/console/dist/");
    std::fs::read(format!("{path}{file}")).unwrap_or_else(|e| panic!("{path}{file}: {e}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_the_committed_page_with_a_strict_policy() {
    let (addr, _stop) = start(true, None).await;
    for (path, file, content_type) in [
        ("/", "index.html", "text/html; charset=utf-8"),
        (
            "/console.js",
            "console.js",
            "text/javascript; charset=utf-8",
        ),
        ("/console.css", "console.css", "text/css; charset=utf-8"),
    ] {
        let answer = http(addr, &format!("GET {path} HTTP/1.1"), b"")
            .await
            .expect(path);
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(answer.headers["content-type"], content_type, "{path}");
        assert_eq!(answer.headers["x-content-type-options"], "nosniff");
        let csp = &answer.headers["content-security-policy"];
        assert!(
            csp.contains("default-src 'none'") && csp.contains("connect-src 'self'"),
            "{csp}"
        );
        assert!(
            answer.body == dist(file),
            "{path} is not the committed {file}"
        );
    }
    let index = String::from_utf8(dist("index.html")).unwrap();
    assert!(index.contains(r#"<script type="module" src="console.js">"#));
    // Any other HTTP/1.1 request is not the page: the gRPC-Web layer refuses it.
    let other = http(addr, "GET /elsewhere HTTP/1.1", b"").await.unwrap();
    assert_eq!(other.status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_calls_reach_the_service_and_grpc_still_works() {
    let (addr, _stop) = start(true, None).await;
    let answer = grpc_web(
        addr,
        "LegalMoves",
        &pb::LegalMovesRequest {
            sfen: shogi_rules::Position::startpos().to_sfen(),
        },
        None,
    )
    .await;
    assert_eq!(answer.status, 200);
    assert!(answer.headers["content-type"].starts_with("application/grpc-web"));
    assert_eq!(grpc_status(&answer), "0");
    let (flags, message) = frames(&answer.body).remove(0);
    assert_eq!(flags, 0);
    let moves = pb::LegalMovesResponse::decode(message.as_slice()).unwrap();
    assert_eq!(moves.moves.len(), 30);
    // A refused request comes back as gRPC-Web says: grpc-status 3 (INVALID_ARGUMENT).
    let refused = grpc_web(
        addr,
        "LegalMoves",
        &pb::LegalMovesRequest { sfen: "x".into() },
        None,
    )
    .await;
    assert_eq!(grpc_status(&refused), "3");
    // Native gRPC over HTTP/2 on the same port.
    let mut client = MoveValidatorClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let created = client
        .create_game(pb::CreateGameRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(created.game.map(|g| g.ply), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_calls_need_the_token_when_one_is_set() {
    let (addr, _stop) = start(true, Some("s3cret")).await;
    // The page itself holds no secret and is served to anyone.
    let page = http(addr, "GET / HTTP/1.1", b"").await.unwrap();
    assert_eq!(page.status, 200);
    let request = pb::ListGamesRequest::default();
    for token in [None, Some("wrong")] {
        let answer = grpc_web(addr, "ListGames", &request, token).await;
        assert_eq!(grpc_status(&answer), "16", "{token:?}: UNAUTHENTICATED");
    }
    let answer = grpc_web(addr, "ListGames", &request, Some("s3cret")).await;
    assert_eq!(grpc_status(&answer), "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_console_nothing_but_grpc_is_served() {
    let (addr, _stop) = start(false, None).await;
    let page = http(addr, "GET / HTTP/1.1", b"").await;
    assert!(
        page.is_none(),
        "an HTTP/1.1 answer without the console: {page:?}"
    );
    let web = http(
        addr,
        "POST /shogi.v1.MoveValidator/ListGames HTTP/1.1\r\nContent-Type: application/grpc-web+proto",
        &[0, 0, 0, 0, 0],
    )
    .await;
    assert!(web.is_none(), "gRPC-Web without the console: {web:?}");
    let mut client = MoveValidatorClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    client
        .list_games(pb::ListGamesRequest::default())
        .await
        .unwrap();
}

/// DNS rebinding: a page of `evil.example`, whose name its owner pointed at this machine,
/// is "same origin" with whatever answers there. The console answers browsers only under an
/// IP address, `localhost` (and `.localhost` names) or a configured name; native gRPC, which
/// no browser sends in clear text, is not checked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_reaching_the_console_under_another_name_is_refused() {
    let (addr, _stop) = start_with_hosts(true, None, &["arbiter.example.org"]).await;
    let port = addr.port();
    let request = pb::ListGamesRequest::default();
    for host in [
        format!("evil.example:{port}"),
        format!("localhost.evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        "example.org".to_owned(),
    ] {
        let page = http_as(addr, Some(&host), "GET / HTTP/1.1", b"")
            .await
            .expect("an answer");
        assert_eq!(page.status, 403, "the page as {host}");
        assert!(
            String::from_utf8_lossy(&page.body).contains("--console-host"),
            "the refusal says how to allow a name: {:?}",
            String::from_utf8_lossy(&page.body)
        );
        let web = grpc_web_as(addr, &host, "ListGames", &request, None).await;
        assert_eq!(web.status, 403, "gRPC-Web as {host}");
        assert!(
            !web.headers.contains_key("grpc-status"),
            "the call did not reach the service: {web:?}"
        );
    }
    // Without a Host header: no answer but a refusal.
    let bare = http_as(addr, None, "GET / HTTP/1.1", b"").await;
    assert!(
        bare.as_ref()
            .is_none_or(|a| a.status == 400 || a.status == 403),
        "no Host: {bare:?}"
    );
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("console.localhost:{port}"),
        format!("ARBITER.example.org:{port}"),
        "arbiter.example.org".to_owned(),
    ] {
        let page = http_as(addr, Some(&host), "GET / HTTP/1.1", b"")
            .await
            .expect("an answer");
        assert_eq!(page.status, 200, "the page as {host}");
        let web = grpc_web_as(addr, &host, "ListGames", &request, None).await;
        assert_eq!(grpc_status(&web), "0", "gRPC-Web as {host}");
    }
    // A native gRPC client naming any authority is served.
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .unwrap()
        .origin("http://evil.example:1".parse().unwrap())
        .connect()
        .await
        .unwrap();
    MoveValidatorClient::new(channel)
        .list_games(request)
        .await
        .expect("native gRPC under another authority");
}
