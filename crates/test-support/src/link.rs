//! [`Link`]: a TCP link between two endpoints on loopback that a test can cut and heal, as a
//! network partition does: a proxy listening on a port of its own and forwarding every
//! connection to its target. Cut, it closes every connection it carries (both ways) and closes
//! every new one as soon as it is accepted; healed, it forwards again. Plain threads and
//! blocking sockets: a test's links carry a few connections each.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A cuttable TCP link to a target port on loopback; closed (its listener and every
/// connection) on drop.
#[derive(Debug)]
pub struct Link {
    port: u16,
    state: Arc<State>,
}

#[derive(Debug, Default)]
struct State {
    cut: AtomicBool,
    closed: AtomicBool,
    /// Both sockets of every connection carried, to close them on a cut.
    open: Mutex<Vec<TcpStream>>,
}

impl State {
    /// Closes every connection carried.
    fn close_all(&self) {
        let open = std::mem::take(&mut *self.open.lock().unwrap_or_else(|e| e.into_inner()));
        for s in open {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

impl Link {
    /// A link listening on a free loopback port, forwarding to `127.0.0.1:target`.
    ///
    /// # Panics
    ///
    /// When it cannot listen.
    pub fn start(target: u16) -> Link {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a link's port");
        let port = listener.local_addr().expect("a link's address").port();
        let state = Arc::new(State::default());
        let accepting = state.clone();
        std::thread::Builder::new()
            .name(format!("link-{port}-{target}"))
            .spawn(move || accept(&listener, target, &accepting))
            .expect("spawn a link's thread");
        Link { port, state }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Cuts it: every connection it carries is closed, and new ones are closed on arrival.
    pub fn cut(&self) {
        self.state.cut.store(true, Ordering::SeqCst);
        self.state.close_all();
    }

    /// Heals it: new connections are forwarded again.
    pub fn heal(&self) {
        self.state.cut.store(false, Ordering::SeqCst);
    }

    /// Whether it is cut.
    pub fn is_cut(&self) -> bool {
        self.state.cut.load(Ordering::SeqCst)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.state.closed.store(true, Ordering::SeqCst);
        self.state.close_all();
        // Wakes the accepting thread, which then sees `closed` and ends.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Accepts connections until the link is closed, forwarding each while the link is not cut.
fn accept(listener: &TcpListener, target: u16, state: &Arc<State>) {
    for incoming in listener.incoming() {
        if state.closed.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = incoming else { continue };
        if state.cut.load(Ordering::SeqCst) {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
        let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
            let _ = client.shutdown(Shutdown::Both);
            continue;
        };
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        let (Ok(c2), Ok(s2), Ok(c3), Ok(s3)) = (
            client.try_clone(),
            server.try_clone(),
            client.try_clone(),
            server.try_clone(),
        ) else {
            continue;
        };
        {
            let mut open = state.open.lock().unwrap_or_else(|e| e.into_inner());
            // A cut between the check above and now would miss this one.
            if state.cut.load(Ordering::SeqCst) {
                let _ = client.shutdown(Shutdown::Both);
                let _ = server.shutdown(Shutdown::Both);
                continue;
            }
            open.push(c3);
            open.push(s3);
        }
        let _ = std::thread::Builder::new()
            .name(format!("link-{target}-up"))
            .spawn(move || pipe(client, server));
        let _ = std::thread::Builder::new()
            .name(format!("link-{target}-down"))
            .spawn(move || pipe(s2, c2));
    }
}

/// Copies `from` to `to` until either ends, then closes both.
fn pipe(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An echo server on loopback: its port.
    fn echo() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for s in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut r = s.try_clone().unwrap();
                    let mut w = s;
                    let _ = std::io::copy(&mut r, &mut w);
                });
            }
        });
        port
    }

    fn round_trip(port: u16) -> std::io::Result<Vec<u8>> {
        let mut s = TcpStream::connect(("127.0.0.1", port))?;
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
        s.write_all(b"ping")?;
        let mut got = [0u8; 4];
        s.read_exact(&mut got)?;
        Ok(got.to_vec())
    }

    #[test]
    fn a_link_forwards_closes_its_connections_when_cut_and_forwards_again_when_healed() {
        let link = Link::start(echo());
        assert_eq!(round_trip(link.port()).unwrap(), b"ping");
        let mut open = TcpStream::connect(("127.0.0.1", link.port())).unwrap();
        open.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        open.write_all(b"ab").unwrap();
        let mut two = [0u8; 2];
        open.read_exact(&mut two).unwrap();
        link.cut();
        assert!(link.is_cut());
        // The open connection is closed: a read ends (0 bytes or an error), it does not hang.
        let mut one = [0u8; 1];
        assert!(!matches!(open.read(&mut one), Ok(1)));
        assert!(
            round_trip(link.port()).is_err(),
            "a new connection is closed"
        );
        link.heal();
        assert_eq!(round_trip(link.port()).unwrap(), b"ping");
    }
}
