//! The server's incoming connections over TLS: each accepted TCP connection gets its handshake
//! in a task of its own (a slow client holds up nobody), bounded by [`HANDSHAKE_TIMEOUT`], and
//! only finished handshakes reach tonic. A refused handshake is logged and counted in
//! [`Refusals`] with its reason; a connection closed before it said anything (a port probe) is
//! not a refusal.
//!
//! When tonic stops taking connections (shutdown), the accept loop ends and the listener is
//! closed.
//!
//! Every accepted connection, with TLS or without ([`plain_incoming`]), has Nagle's algorithm
//! off (TCP_NODELAY): with it, a large answer (LegalMoves on a 593-move position) waited out the
//! client's delayed ACK, 44 ms against 0.5 ms (issue 20).

use crate::auth::{RefusalReason, Refusals};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::server::TlsStream;
use tokio_stream::wrappers::ReceiverStream;

/// The longest a client may take over its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The connections of `listener` without TLS, each with TCP_NODELAY set.
pub(crate) fn plain_incoming(
    listener: TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<TcpStream>> {
    tokio_stream::StreamExt::map(
        tokio_stream::wrappers::TcpListenerStream::new(listener),
        |tcp| {
            if let Ok(tcp) = &tcp {
                let _ = tcp.set_nodelay(true);
            }
            tcp
        },
    )
}

/// The connections of `listener` that completed a TLS handshake with `acceptor`.
pub(crate) fn tls_incoming(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    refusals: Refusals,
) -> ReceiverStream<std::io::Result<TlsStream<TcpStream>>> {
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = tx.closed() => break,
            };
            let (tcp, peer) = match accepted {
                Ok(accepted) => accepted,
                // Per-connection errors (the peer reset before accept, descriptors exhausted):
                // logged, and the loop goes on, as tonic's own does.
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            };
            let _ = tcp.set_nodelay(true);
            let (acceptor, tx, refusals) = (acceptor.clone(), tx.clone(), refusals.clone());
            tokio::spawn(async move {
                match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                    Ok(Ok(tls)) => {
                        let _ = tx.send(Ok(tls)).await;
                    }
                    Ok(Err(e)) => refused(&refusals, peer, &e),
                    Err(_) => refusals.record_handshake(
                        RefusalReason::TlsHandshake,
                        Some(peer),
                        "handshake timed out",
                    ),
                }
            });
        }
    });
    ReceiverStream::new(rx)
}

/// Logs and counts a failed handshake, by what the TLS stack said.
fn refused(refusals: &Refusals, peer: SocketAddr, error: &std::io::Error) {
    let tls = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>());
    let reason = match tls {
        Some(rustls::Error::NoCertificatesPresented) => RefusalReason::NoClientCertificate,
        Some(rustls::Error::InvalidCertificate(_)) => RefusalReason::BadClientCertificate,
        Some(_) => RefusalReason::TlsHandshake,
        // Closed before a word of TLS: a probe of the port, not a client refused.
        None if error.kind() == std::io::ErrorKind::UnexpectedEof => {
            tracing::debug!(%peer, "connection closed before the TLS handshake");
            return;
        }
        None => RefusalReason::TlsHandshake,
    };
    refusals.record_handshake(reason, Some(peer), &error.to_string());
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio_stream::StreamExt;

    #[tokio::test]
    async fn every_plain_connection_has_nagle_off() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut incoming = Box::pin(plain_incoming(listener));
        for _ in 0..3 {
            let _client = TcpStream::connect(addr).await.unwrap();
            let accepted = incoming.next().await.expect("a connection").unwrap();
            assert!(accepted.nodelay().unwrap(), "TCP_NODELAY not set");
        }
    }
}
