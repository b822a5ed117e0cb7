//! Free loopback ports for servers that must listen on a port chosen before they start (a
//! nats-server restarted on the same port, a cluster's routes, a service's `--listen`).
//!
//! A port that the kernel hands out for `bind(0)` comes from the ephemeral range, the range it
//! also takes the local ports of outgoing connections from: between the test releasing it and
//! the server binding it, any connection of a test running beside it can take it, and the
//! server then fails to start. So these ports come from below that range, where the kernel
//! never allocates by itself; each is checked free by binding it, and ports handed out in this
//! process are not handed out again.

use std::collections::HashSet;
use std::net::TcpListener;
use std::sync::Mutex;

/// The lowest port handed out: above the well-known and most registered services' ports.
const LOWEST: u16 = 10_000;

/// The ports handed out so far in this process.
static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);

/// The first port of the kernel's ephemeral range (`net.ipv4.ip_local_port_range`).
fn ephemeral_start() -> u16 {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .unwrap_or(32_768)
}

/// A free loopback port outside the kernel's ephemeral range, not handed out before in this
/// process.
///
/// # Panics
///
/// When no port of that range can be bound.
pub fn free_port() -> u16 {
    let end = ephemeral_start().max(LOWEST + 1_000);
    let span = u32::from(end - LOWEST);
    // Processes start at different places (their pid), so that two test binaries running at
    // once rarely try the same ports; within a process, `GIVEN` keeps them apart.
    let offset = std::process::id().wrapping_mul(7_919) % span;
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let given = given.get_or_insert_with(HashSet::new);
    for i in 0..span {
        let port = LOWEST + ((offset + i) % span) as u16;
        if given.contains(&port) {
            continue;
        }
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
    panic!("no free loopback port in {LOWEST}..{end}");
}

/// `n` distinct free loopback ports, as [`free_port`].
pub fn free_ports(n: usize) -> Vec<u16> {
    (0..n).map(|_| free_port()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_distinct_free_and_outside_the_ephemeral_range() {
        let ports = free_ports(50);
        let distinct: HashSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), 50);
        for p in ports {
            assert!((LOWEST..ephemeral_start()).contains(&p), "{p}");
            TcpListener::bind(("127.0.0.1", p)).expect("free");
        }
    }
}
