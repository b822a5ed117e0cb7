//! The browser console: a static page, built from `web/console/` and embedded in the binary
//! (the page works offline: nothing is fetched from elsewhere), served on the gRPC port beside
//! the API when [`crate::Config::console`] is on. The page calls the same `MoveValidator`
//! service through gRPC-Web (tonic-web), so it has no API of its own, and the bearer token,
//! when one is configured, guards its calls as any other client's.
//!
//! Routing: `GET /` (and `/index.html`), `/console.js`, `/console.css` and the icon
//! (`/favicon.svg`, and `/favicon.ico` for browsers that ask for it by that name) are the page;
//! everything else goes to the gRPC routes behind the gRPC-Web translation, which passes HTTP/2
//! gRPC through unchanged and answers any other HTTP/1.1 request 400.
//!
//! DNS rebinding: a page of another site whose name the attacker points at this machine's
//! address would be "same origin" with the console and could call the API from a player's
//! browser. So every request a browser can make (the page, gRPC-Web, anything over HTTP/1.1)
//! must name the console by a host it answers to ([`host_allowed`]): an IP address,
//! `localhost` or a `.localhost` name, or a name configured with `--console-host`; any other
//! `Host` (or HTTP/2 `:authority`) is answered 403. Native gRPC over HTTP/2 is not checked: a
//! browser cannot send it in clear text, and over TLS a rebound name fails the certificate.

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tonic::service::Routes;

/// The page, its script and its style, as `npm run build` in `web/console/` left them (CI
/// rebuilds them and fails when the committed copies differ).
const INDEX: &str = include_str!("../../../web/console/dist/index.html");
const SCRIPT: &str = include_str!("../../../web/console/dist/console.js");
const STYLE: &str = include_str!("../../../web/console/dist/console.css");
const ICON: &str = include_str!("../../../web/console/dist/favicon.svg");

/// What the page may load: its own script, style and API calls, nothing else.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// `routes` behind gRPC-Web, with the console's page in front, answering browsers only under
/// the host names [`host_allowed`] allows (`hosts`: the configured ones).
pub(crate) fn with_console(routes: Routes, hosts: &[String]) -> Routes {
    let grpc = axum::Router::new()
        .fallback_service(routes)
        .layer(tonic_web::GrpcWebLayer::new());
    let index = || async { asset(INDEX, "text/html; charset=utf-8") };
    let icon = || async { asset(ICON, "image/svg+xml") };
    let router = axum::Router::new()
        .route("/", get(index))
        .route("/index.html", get(index))
        .route("/favicon.svg", get(icon))
        .route("/favicon.ico", get(icon))
        .route(
            "/console.js",
            get(|| async { asset(SCRIPT, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/console.css",
            get(|| async { asset(STYLE, "text/css; charset=utf-8") }),
        )
        .fallback_service(grpc)
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(normalised(hosts)),
            check_host,
        ));
    Routes::from(router)
}

/// The configured names as they are compared: lower case, without a final dot.
fn normalised(hosts: &[String]) -> Vec<String> {
    hosts
        .iter()
        .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
        .collect()
}

/// Whether the console answers a browser that calls it `host` (the `Host` header's or the
/// `:authority`'s host, without the port): an IP address (a rebinding attacker's page has a
/// name, never the victim's address), `localhost` and any `.localhost` name (which resolve to
/// loopback, RFC 6761), or one of `configured` (`*` among them: any name).
fn host_allowed(host: &str, configured: &[String]) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return false;
    }
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(&host);
    bare.parse::<std::net::IpAddr>().is_ok()
        || host == "localhost"
        || host.ends_with(".localhost")
        || configured.iter().any(|c| c == "*" || *c == host)
}

/// The host of a `Host` header's value (`name`, `name:port`, `[v6]:port`), without the port.
fn host_of(value: &str) -> &str {
    if value.starts_with('[') {
        return value.find(']').map_or(value, |end| &value[..=end]);
    }
    match value.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => value,
    }
}

/// Native gRPC: HTTP/2 with a gRPC content type that is not gRPC-Web.
fn native_grpc(request: &Request) -> bool {
    request.version() == axum::http::Version::HTTP_2
        && request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| {
                t.starts_with("application/grpc") && !t.starts_with("application/grpc-web")
            })
}

/// When a refused host was last logged, in seconds since the epoch: one line a second at most,
/// however fast a page tries.
static LAST_LOGGED: AtomicU64 = AtomicU64::new(0);

async fn check_host(
    State(configured): State<Arc<Vec<String>>>,
    request: Request,
    next: Next,
) -> Response {
    if native_grpc(&request) {
        return next.run(request).await;
    }
    let host = request
        .uri()
        .authority()
        .map(|a| host_of(a.as_str()).to_owned())
        .or_else(|| {
            request
                .headers()
                .get(header::HOST)
                .and_then(|v| v.to_str().ok())
                .map(|v| host_of(v.trim()).to_owned())
        })
        .unwrap_or_default();
    if host_allowed(&host, &configured) {
        return next.run(request).await;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if LAST_LOGGED.swap(now, Ordering::Relaxed) != now {
        tracing::warn!(
            host = %host.chars().take(100).collect::<String>(),
            path = %request.uri().path(),
            "console request refused: the host it names is not one the console answers to \
             (an IP address, localhost, or a name given with --console-host)"
        );
    }
    (
        StatusCode::FORBIDDEN,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        "This console answers only to localhost, IP addresses and the host names its operator \
         configured (--console-host, MOVE_VALIDATOR_CONSOLE_HOSTS).\n",
    )
        .into_response()
}

fn asset(body: &'static str, content_type: &'static str) -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            // A new binary may serve a new page: the browser asks again each time.
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CSP),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_the_console_answers_to() {
        let configured = normalised(&["Arbiter.Example.org.".to_owned()]);
        for host in [
            "127.0.0.1",
            "[::1]",
            "10.1.2.3",
            "localhost",
            "LOCALHOST.",
            "console.localhost",
            "arbiter.example.org",
            "ARBITER.example.org.",
        ] {
            assert!(host_allowed(host, &configured), "{host}");
        }
        for host in [
            "",
            "evil.example",
            "localhost.evil.example",
            "example.org",
            "xarbiter.example.org",
            "127.0.0.1.nip.io",
            "[not-an-address]",
        ] {
            assert!(!host_allowed(host, &configured), "{host}");
        }
        assert!(host_allowed("anything.example", &["*".to_owned()]));
    }

    #[test]
    fn the_port_is_not_part_of_the_host() {
        assert_eq!(host_of("localhost:50051"), "localhost");
        assert_eq!(host_of("[::1]:50051"), "[::1]");
        assert_eq!(host_of("[::1]"), "[::1]");
        assert_eq!(host_of("evil.example"), "evil.example");
        assert_eq!(host_of("evil.example:x"), "evil.example:x");
    }
}
