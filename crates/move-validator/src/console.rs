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

use axum::http::{HeaderValue, header};
use axum::response::IntoResponse;
use axum::routing::get;
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

/// `routes` behind gRPC-Web, with the console's page in front.
pub(crate) fn with_console(routes: Routes) -> Routes {
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
        .fallback_service(grpc);
    Routes::from(router)
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
