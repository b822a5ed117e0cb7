//! [`NatsCluster`]: three `nats-server` processes on loopback joined by cluster routes, with
//! JetStream clustering, so that streams can be replicated (R3) and a node can be stopped and
//! started again under a running system.
//!
//! Each node has its own configuration file and store directory in one temporary directory,
//! and fixed ports (picked free by binding `127.0.0.1:0` and releasing), so that a restarted
//! node comes back at the same URL with the same store, as a crashed server in a StatefulSet
//! does. Readiness is never waited for with a sleep: a node is up when its log says "Server is
//! ready", and the cluster is usable once every running node's monitoring endpoint answers
//! `/healthz` with 200 (JetStream is current with the metadata leader) and `/jsz` names the same
//! running node as that leader (JetStream refuses to create streams before that). Those two are
//! polled with a deadline. The logs' "new metadata leader" lines are not enough: a restarted
//! node on a loaded machine was seen to catch up without writing one within 30 seconds.

use crate::free_ports;
use crate::link::Link;
use crate::{INSTALL_HINT, READY, nats_server_binary};
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How many nodes: the smallest cluster that keeps a quorum (2) with one node down.
pub const NODES: usize = 3;

/// How long a node, or the cluster's leader election, may take before the test fails. A
/// deadline, not a sleep: waits end as soon as the logs say so. An election after a node is
/// killed takes a few seconds (Raft timeouts); on a loaded 2-core machine, more.
const DEADLINE: crate::Deadline = crate::Deadline::secs(30);

/// The cluster's name (every node's `cluster { name }`).
const CLUSTER_NAME: &str = "arbiter-test";

/// How often the monitoring endpoints are asked while the cluster settles.
const POLL: Duration = Duration::from_millis(25);

/// How long a node may answer `/healthz` with an error, while [`NatsCluster::wait_healthy`]
/// waits, before it is restarted: the liveness probe of `deploy/k8s/nats-values.yaml`
/// (`/healthz`, 5 minutes), scaled down as every deadline here is.
const LIVENESS: crate::Deadline = crate::Deadline::secs(20);

/// At most this many nodes restarted by [`LIVENESS`] in one wait.
const LIVENESS_RESTARTS: usize = 2;

/// How many times a cluster that formed a smaller metadata group is started again.
const BOOTSTRAPS: usize = 3;

/// How long, on an idle machine, a metadata group may count fewer than [`NODES`] once its
/// leader is known before the cluster is taken as formed without a node.
const SIZE_SETTLES: crate::Deadline = crate::Deadline::secs(5);

/// Three `nats-server -js` nodes in one cluster on loopback; every node is killed on drop and
/// the stores removed.
#[derive(Debug)]
pub struct NatsCluster {
    bin: PathBuf,
    nodes: Vec<Node>,
    /// With [`ClusterOptions::links`]: `links[i][j]`, node `i`'s route to node `j`.
    links: Vec<Vec<Option<Link>>>,
    dir: tempfile::TempDir,
}

/// How the nodes of a [`NatsCluster`] run, beyond the defaults of [`NatsCluster::start`].
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    /// The nats-server binary; `None`: as [`NatsCluster::start`] finds it.
    pub bin: Option<PathBuf>,
    /// Lines added to every node's configuration (`debug: true`, `trace: true`, ...).
    pub extra_config: String,
    /// A directory where each node's whole log goes, as `<node>.log` (appended to across
    /// restarts); the log kept in memory for failure messages then leaves out the debug and
    /// trace lines, which a traced run writes by the million.
    pub log_dir: Option<PathBuf>,
    /// Whether the routes between the nodes go through [`Link`]s, so that a node can be cut
    /// off from the others ([`NatsCluster::cut_off`]) and joined again ([`NatsCluster::heal`]).
    pub links: bool,
}

#[derive(Debug)]
struct Node {
    name: String,
    client_port: u16,
    monitor_port: u16,
    config: PathBuf,
    child: Option<Child>,
    log: Arc<Log>,
    /// Where its whole log is copied, if anywhere.
    log_file: Option<PathBuf>,
    /// The thread draining its stderr, which ends once the process has.
    drain: Option<std::thread::JoinHandle<()>>,
}

impl Node {
    /// Kills the process, if running, and waits until its log is drained (and its copy
    /// written).
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(drain) = self.drain.take() {
            let _ = drain.join();
        }
    }
}

/// A node's log lines, filled by a thread that drains its stderr.
impl Node {
    /// The metadata leader this node names, if it is running, JetStream is current with the
    /// leader (`/healthz` is 200), and it knows one (`/jsz`).
    fn leader(&self) -> Option<String> {
        self.child.as_ref()?;
        let (status, _) = http_get(self.monitor_port, "/healthz")?;
        if status != 200 {
            return None;
        }
        let (_, jsz) = http_get(self.monitor_port, "/jsz")?;
        // `"meta_cluster": { "name": ..., "leader": "n1", ... }`: the only "leader" key of
        // the plain /jsz answer. Read without a JSON parser, to keep this crate's dependencies
        // to tempfile.
        let meta = &jsz[jsz.find("\"meta_cluster\"")?..];
        let after = &meta[meta.find("\"leader\"")? + "\"leader\"".len()..];
        let value = after
            .trim_start()
            .strip_prefix(':')?
            .trim_start()
            .strip_prefix('"')?;
        Some(value[..value.find('"')?].to_owned())
    }
}

impl Node {
    /// The metadata group's size as this node reports it, if it answers.
    fn meta_size(&self) -> Option<usize> {
        self.child.as_ref()?;
        let (_, jsz) = http_get(self.monitor_port, "/jsz")?;
        let meta = &jsz[jsz.find("\"meta_cluster\"")?..];
        let after = &meta[meta.find("\"cluster_size\"")? + "\"cluster_size\"".len()..];
        let digits: String = after
            .trim_start()
            .strip_prefix(':')?
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    }
}

/// `GET path` on the loopback monitoring port: the status code and the body, or `None` when
/// the server does not answer (not listening yet, or stopped).
pub(crate) fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(conn, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    conn.read_to_string(&mut answer).ok()?;
    let status = answer.split_whitespace().nth(1)?.parse().ok()?;
    let body = answer
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Some((status, body))
}

#[derive(Debug, Default)]
struct Log {
    lines: Mutex<Vec<String>>,
    grew: Condvar,
}

impl Log {
    /// Waits until `f` finds what it wants in the lines from `from` on, or the deadline.
    fn wait<T>(
        &self,
        from: usize,
        deadline: Instant,
        f: impl Fn(&[String]) -> Option<T>,
    ) -> Option<T> {
        let mut lines = self.lines.lock().expect("log lock");
        loop {
            if let Some(found) = f(&lines[from.min(lines.len())..]) {
                return Some(found);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            lines = self.grew.wait_timeout(lines, left).expect("log lock").0;
        }
    }

    fn len(&self) -> usize {
        self.lines.lock().expect("log lock").len()
    }

    fn text(&self) -> String {
        self.lines.lock().expect("log lock").join("\n")
    }
}

impl NatsCluster {
    /// Starts three nodes and waits until every one is ready and they agree on a JetStream
    /// metadata leader, so that a stream with three replicas can be created at once.
    ///
    /// The binary is found as [`crate::NatsServer::start`] finds it.
    ///
    /// # Panics
    ///
    /// When nats-server is not installed (with how to install it), a node does not start, or the
    /// cluster has no leader within 30 seconds (with the nodes' logs).
    pub fn start() -> NatsCluster {
        NatsCluster::start_with(&ClusterOptions::default())
    }

    /// As [`NatsCluster::start`], with `options`: more configuration, the logs to files.
    ///
    /// # Panics
    ///
    /// As [`NatsCluster::start`], and when the log directory cannot be made.
    pub fn start_with(options: &ClusterOptions) -> NatsCluster {
        let bin = options.bin.clone().unwrap_or_else(nats_server_binary);
        if let Some(dir) = &options.log_dir {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
        }
        let dir = tempfile::Builder::new()
            .prefix("nats-cluster-test-")
            .tempdir()
            .expect("create a temporary directory for the cluster");
        // All at once, so that no two are the same.
        let ports = free_ports(3 * NODES);
        let (client_ports, rest) = ports.split_at(NODES);
        let (route_ports, monitor_ports) = rest.split_at(NODES);
        // With links, node `i` reaches node `j` through `links[i][j]` only, and advertises
        // a port nothing listens on, so that no node learns another's real route port from
        // the gossip and goes round a cut.
        let links: Vec<Vec<Option<Link>>> = (0..NODES)
            .map(|i| {
                (0..NODES)
                    .map(|j| (options.links && i != j).then(|| Link::start(route_ports[j])))
                    .collect()
            })
            .collect();
        let routes_of = |i: usize| {
            (0..NODES)
                .filter_map(|j| match &links[i][j] {
                    Some(link) => Some(format!("nats-route://127.0.0.1:{}", link.port())),
                    None if options.links => None,
                    None => Some(format!("nats-route://127.0.0.1:{}", route_ports[j])),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let advertise = |_: usize| {
            if options.links {
                format!("\n  advertise: 127.0.0.1:{}", crate::free_port())
            } else {
                String::new()
            }
        };
        let nodes = (0..NODES)
            .map(|i| {
                let name = format!("n{i}");
                let store = dir.path().join(&name);
                let config = dir.path().join(format!("{name}.conf"));
                // Every node lists every route, itself included (nats-server skips its own);
                // one identical list keeps the configuration of the nodes symmetrical.
                let text = format!(
                    "server_name: {name}\n\
                     listen: 127.0.0.1:{client}\n\
                     http: 127.0.0.1:{monitor}\n\
                     jetstream {{ store_dir: {store:?} }}\n\
                     cluster {{\n  \
                       name: {CLUSTER_NAME}\n  \
                       listen: 127.0.0.1:{route}{advertise}\n  \
                       routes: [{routes}]\n\
                     }}\n\
                     {extra}\n",
                    client = client_ports[i],
                    monitor = monitor_ports[i],
                    route = route_ports[i],
                    routes = routes_of(i),
                    advertise = advertise(i),
                    store = store.display().to_string(),
                    extra = options.extra_config,
                );
                std::fs::write(&config, text).expect("write a node's configuration");
                let log_file = options
                    .log_dir
                    .as_ref()
                    .map(|d| d.join(format!("{name}.log")));
                Node {
                    name,
                    client_port: client_ports[i],
                    monitor_port: monitor_ports[i],
                    config,
                    child: None,
                    log: Arc::default(),
                    log_file,
                    drain: None,
                }
            })
            .collect();
        let mut cluster = NatsCluster {
            bin,
            nodes,
            links,
            dir,
        };
        // A fresh cluster's JetStream metadata group is made of the nodes it hears of while
        // it bootstraps. On a busy machine a node can be late (seen on 2.10.26 with every core
        // busy: n1 and n2 formed a group of two and n0 never joined it, so no stream with
        // three replicas could ever be placed, and the test waited for ever). Such a cluster is
        // started again from empty stores; a platform's cluster would be restarted the same way.
        for attempt in 1..=BOOTSTRAPS {
            for i in 0..NODES {
                cluster.spawn(i);
            }
            if cluster.wait_formed() {
                return cluster;
            }
            let sizes = cluster.meta_sizes();
            assert!(
                attempt < BOOTSTRAPS,
                "the NATS cluster did not form one JetStream metadata group of {NODES} \
                 ({BOOTSTRAPS} starts, each waiting {DEADLINE:?} for a leader and {SIZE_SETTLES:?} \
                 for the group, scaled to the load); last sizes seen {sizes:?}; logs:\n{}",
                cluster.logs()
            );
            eprintln!(
                "test-support: the NATS cluster formed a metadata group of {sizes:?} nodes, not \
                 {NODES} (attempt {attempt}): starting it again from empty stores"
            );
            for node in &mut cluster.nodes {
                if let Some(mut child) = node.child.take() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                let _ = std::fs::remove_dir_all(cluster.dir.path().join(&node.name));
            }
        }
        unreachable!("the loop returns or panics")
    }

    /// Waits until every node is running and agrees on a metadata leader (within
    /// `DEADLINE`, scaled by `patience`), then until each counts all [`NODES`] in the metadata group. The
    /// group's size is settled by its first election: one that stays smaller for
    /// [`SIZE_SETTLES`] (scaled to the load) after the leader is known stays so for good (seen
    /// for 33 minutes), so `false` then.
    fn wait_formed(&self) -> bool {
        let deadline = Instant::now() + DEADLINE.get();
        while self.meta_leader().is_none() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(POLL);
        }
        let deadline = Instant::now() + SIZE_SETTLES.get();
        loop {
            if self.meta_sizes().iter().all(|s| *s == Some(NODES)) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(POLL);
        }
    }

    /// The size of the metadata group each node reports (`/jsz` `meta_cluster.cluster_size`).
    fn meta_sizes(&self) -> Vec<Option<usize>> {
        self.nodes.iter().map(Node::meta_size).collect()
    }

    /// The client URLs of all nodes, running or not, in node order.
    pub fn urls(&self) -> Vec<String> {
        (0..NODES).map(|i| self.url(i)).collect()
    }

    /// The client URL of node `i`, `nats://127.0.0.1:<port>`; the same after a restart.
    pub fn url(&self, i: usize) -> String {
        format!("nats://127.0.0.1:{}", self.nodes[i].client_port)
    }

    /// `GET path` on node `i`'s monitoring port (`/jsz?consumers=true`, say): the body, or
    /// `None` when the node does not answer or answers with an error.
    pub fn monitor(&self, i: usize, path: &str) -> Option<String> {
        match http_get(self.nodes[i].monitor_port, path)? {
            (200, body) => Some(body),
            _ => None,
        }
    }

    /// The `server_name` of node `i` (`n0`, `n1`, `n2`), as JetStream reports peers and leaders.
    pub fn name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }

    /// The node every running node names as the JetStream metadata leader while current with
    /// it (`/healthz`), if they agree and it runs.
    pub fn meta_leader(&self) -> Option<usize> {
        let running: Vec<&Node> = self.nodes.iter().filter(|n| n.child.is_some()).collect();
        let first = running.first()?.leader()?;
        let agreed = running
            .iter()
            .all(|n| n.leader().as_deref() == Some(first.as_str()));
        let index = self.nodes.iter().position(|n| n.name == first)?;
        (agreed && self.nodes[index].child.is_some()).then_some(index)
    }

    /// Whether node `i` is running.
    pub fn is_running(&self, i: usize) -> bool {
        self.nodes[i].child.is_some()
    }

    /// Kills node `i` (SIGKILL, as a crash or a lost machine: no lame-duck mode, no goodbye to
    /// the routes), then waits until the other two agree on a metadata leader, electing a new
    /// one if node `i` was it, and answer `/healthz` with 200. nats-server's health check
    /// covers the streams and consumers a node replicates, so this also waits for those that
    /// node `i` led to elect new leaders: a few seconds.
    ///
    /// # Panics
    ///
    /// When the others are not healthy with a leader within 30 seconds (scaled to the load, [`crate::patience`]).
    pub fn stop(&mut self, i: usize) {
        self.nodes[i].kill();
        self.wait_leader();
    }

    /// Stops node `i` as an orderly shutdown does (SIGTERM: the node leaves its routes and
    /// hands its leaderships over), as a rolling upgrade or a Kubernetes pod's termination
    /// would, then waits as [`NatsCluster::stop`] does.
    ///
    /// # Panics
    ///
    /// When the node does not exit within 30 seconds (scaled to the load), or as
    /// [`NatsCluster::stop`].
    pub fn terminate(&mut self, i: usize) {
        assert!(
            self.sigterm(i),
            "node {i} did not exit within {:?} of SIGTERM",
            DEADLINE.get()
        );
        self.wait_leader();
    }

    /// Sends node `i` SIGTERM and waits for it to exit; then reaps it (killed if it has not
    /// exited within 30 seconds, scaled to the load) and drains its log. Whether it exited on
    /// SIGTERM.
    fn sigterm(&mut self, i: usize) -> bool {
        self.signal(i, "-TERM");
        let deadline = Instant::now() + DEADLINE.get();
        let child = self.nodes[i].child.as_mut().expect("node running");
        let mut exited = false;
        while !exited && Instant::now() < deadline {
            exited = child.try_wait().expect("wait for the node").is_some();
            if !exited {
                std::thread::sleep(POLL);
            }
        }
        self.nodes[i].kill();
        exited
    }

    /// Cuts node `i` off from the other nodes: every route between it and them is closed and
    /// cannot open again until [`NatsCluster::heal`]. Its clients keep their connections (a
    /// partition between the servers, not between the clients and their server).
    ///
    /// # Panics
    ///
    /// When the cluster was started without [`ClusterOptions::links`].
    pub fn cut_off(&self, i: usize) {
        for (a, b) in self.pairs_of(i) {
            self.link(a, b).cut();
        }
    }

    /// Joins node `i` to the others again after [`NatsCluster::cut_off`]; the routes open again
    /// as the nodes retry them (each on its own, within a few seconds).
    ///
    /// # Panics
    ///
    /// As [`NatsCluster::cut_off`].
    pub fn heal(&self, i: usize) {
        for (a, b) in self.pairs_of(i) {
            self.link(a, b).heal();
        }
    }

    /// Every ordered pair of nodes with `i` on one side.
    fn pairs_of(&self, i: usize) -> Vec<(usize, usize)> {
        (0..NODES)
            .filter(|&j| j != i)
            .flat_map(|j| [(i, j), (j, i)])
            .collect()
    }

    fn link(&self, from: usize, to: usize) -> &Link {
        self.links[from][to]
            .as_ref()
            .expect("a cluster started with ClusterOptions { links: true, .. }")
    }

    /// Waits until every running node is healthy (`/healthz`: current with the metadata
    /// leader and with the streams and consumers it replicates), they agree on the metadata
    /// leader, and the leader of every stream and consumer reports every other running node
    /// current with it and that node holds it (`/jsz`): what a node restarted or healed has to
    /// reach before the next one may go, after [`NatsCluster::heal`], say. `/healthz` alone
    /// does not say so just after a start: nats-server 2.10 answered 200 before the node knew
    /// its streams, and a rolling upgrade that went on then restarted all three nodes within
    /// five seconds.
    ///
    /// A node that fails `/healthz` for [`LIVENESS`] meanwhile is restarted (SIGTERM, then
    /// started again), at most [`LIVENESS_RESTARTS`] times, as the liveness probe that
    /// `deploy/k8s/nats-values.yaml` gives each server does: on nats-server 2.10.26 a node
    /// restarted under load could stay behind on every Raft group led by one peer, its
    /// catch-up requests never answered ("Catchup may be stalled, will request again" every
    /// two seconds), until it was restarted again (2026-12-05, deploy/STREAMS.md "Upgrading
    /// the servers"). Each such restart is printed.
    ///
    /// # Panics
    ///
    /// When the cluster is not healthy within 30 seconds (scaled to the load) of the last
    /// start, with why.
    pub fn wait_healthy(&mut self) {
        let mut deadline = Instant::now() + DEADLINE.get();
        let mut failing_since: Vec<Option<Instant>> = vec![None; self.nodes.len()];
        let mut restarted = 0;
        loop {
            for (node, since) in self.nodes.iter().zip(&mut failing_since) {
                let healthy = node.child.is_none()
                    || http_get(node.monitor_port, "/healthz").is_some_and(|(s, _)| s == 200);
                *since = if healthy {
                    None
                } else {
                    since.or(Some(Instant::now()))
                };
            }
            let failing: Vec<&str> = (self.nodes.iter().zip(&failing_since))
                .filter(|(_, since)| since.is_some())
                .map(|(node, _)| node.name.as_str())
                .collect();
            // `meta_leader` asks `/healthz` too: only once every node has answered 200 here.
            let why = if !failing.is_empty() {
                format!("{} failing /healthz", failing.join(", "))
            } else {
                match (self.meta_leader(), self.replicas_current()) {
                    (Some(_), Ok(())) => return,
                    (None, _) => "no metadata leader that every running node agrees on".into(),
                    (_, Err(lagging)) => lagging,
                }
            };
            let dead = failing_since
                .iter()
                .position(|since| since.is_some_and(|t| t.elapsed() >= LIVENESS.get()));
            if let Some(i) = dead.filter(|_| restarted < LIVENESS_RESTARTS) {
                let (_, health) = http_get(self.nodes[i].monitor_port, "/healthz")
                    .unwrap_or((0, "no answer".into()));
                eprintln!(
                    "nats-server {} has failed /healthz for {:?} ({}; {why}): restarted, as its \
                     liveness probe would",
                    self.nodes[i].name,
                    LIVENESS.get(),
                    health.trim()
                );
                self.bounce(i);
                restarted += 1;
                failing_since[i] = None;
                deadline = Instant::now() + DEADLINE.get();
                continue;
            }
            assert!(
                Instant::now() < deadline,
                "the NATS cluster is not healthy within {:?}: {why}; logs:\n{}",
                DEADLINE.get(),
                self.logs()
            );
            std::thread::sleep(POLL);
        }
    }

    /// Stops node `i` (SIGTERM, waiting for it to exit) and starts it again, without waiting
    /// for the cluster.
    fn bounce(&mut self, i: usize) {
        self.sigterm(i);
        self.spawn(i);
    }

    /// Whether every stream and every consumer is led by a running node that reports every
    /// other running replica current with it, and is known to each of those replicas; else
    /// what is not. Consumers count as much as streams: a node restarted holds a Raft group for
    /// each, and on nats-server 2.10.26 a node stopped while the one before it was still
    /// catching up on its consumers handed their leadership to it, and came back to a catch-up
    /// that never finished (2026-12-05).
    fn replicas_current(&self) -> Result<(), String> {
        let running: Vec<&Node> = self.nodes.iter().filter(|n| n.child.is_some()).collect();
        let names: Vec<&str> = running.iter().map(|n| n.name.as_str()).collect();
        // Each asset ("stream" or "stream > consumer"): what its leader says is behind, if a
        // running node leads it.
        let mut assets = std::collections::BTreeMap::<String, Option<String>>::new();
        // Which node holds which asset, and which replicas each leader names.
        let mut held = std::collections::BTreeSet::<(String, String)>::new();
        let mut expected = Vec::<(String, String)>::new();
        for node in &running {
            let (_, body) = http_get(
                node.monitor_port,
                "/jsz?accounts=true&streams=true&consumers=true",
            )
            .ok_or_else(|| format!("{} does not answer /jsz", node.name))?;
            let jsz: serde_json::Value = serde_json::from_str(&body)
                .map_err(|e| format!("{}'s /jsz is not JSON: {e}", node.name))?;
            let details = jsz["account_details"].as_array().into_iter().flatten();
            for stream in details.flat_map(|a| a["stream_detail"].as_array().into_iter().flatten())
            {
                let stream_name = stream["name"].as_str().unwrap_or_default();
                let consumers = stream["consumer_detail"].as_array().into_iter().flatten();
                let groups = std::iter::once((stream_name.to_owned(), &stream["cluster"])).chain(
                    consumers.map(|c| {
                        let name = c["name"].as_str().unwrap_or_default();
                        (format!("{stream_name} > {name}"), &c["cluster"])
                    }),
                );
                for (name, cluster) in groups {
                    held.insert((node.name.clone(), name.clone()));
                    let entry = assets.entry(name.clone()).or_default();
                    if cluster["leader"].as_str() != Some(node.name.as_str()) {
                        continue;
                    }
                    let replicas: Vec<&serde_json::Value> = cluster["replicas"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|r| names.contains(&r["name"].as_str().unwrap_or_default()))
                        .collect();
                    for r in &replicas {
                        let replica = r["name"].as_str().unwrap_or_default().to_owned();
                        expected.push((replica, name.clone()));
                    }
                    let behind: Vec<String> = replicas
                        .iter()
                        .filter(|r| r["current"].as_bool() != Some(true))
                        .map(|r| format!("{} (lag {})", r["name"], r["lag"]))
                        .collect();
                    *entry = Some(if behind.is_empty() {
                        String::new()
                    } else {
                        format!("{name} led by {}: {} behind", node.name, behind.join(", "))
                    });
                }
            }
        }
        let mut lagging: Vec<String> = assets
            .into_iter()
            .filter_map(|(name, state)| match state {
                None => Some(format!("{name} without a leader")),
                Some(behind) if !behind.is_empty() => Some(behind),
                Some(_) => None,
            })
            .collect();
        lagging.extend(
            expected
                .into_iter()
                .filter(|pair| !held.contains(pair))
                .map(|(node, name)| format!("{name}: replica {node} does not know it yet")),
        );
        if lagging.is_empty() {
            Ok(())
        } else {
            Err(lagging.join("; "))
        }
    }

    /// Freezes node `i` with SIGSTOP, as a machine that stops answering without closing its
    /// connections, and waits until all its threads are stopped. The node stays a member:
    /// with two of three frozen, the third cannot commit anything.
    ///
    /// # Panics
    ///
    /// When node `i` is not running, or not stopped within 30 seconds (scaled by
    /// [`crate::patience`]).
    pub fn pause(&self, i: usize) {
        let pid = self.signal(i, "-STOP");
        let patience = crate::patience(Duration::from_secs(30));
        let deadline = Instant::now() + patience;
        while !crate::restartable::all_threads_stopped(pid) {
            assert!(
                Instant::now() < deadline,
                "node {i} (pid {pid}) not stopped within {patience:?} of SIGSTOP"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The state of each of node `i`'s threads now, counted (`T x14` when it is paused), for
    /// a test's message when a paused node seems to have taken part.
    pub fn thread_states(&self, i: usize) -> String {
        match &self.nodes[i].child {
            Some(child) => crate::restartable::thread_states(child.id()),
            None => "not running".into(),
        }
    }

    /// Lets node `i` run again after [`NatsCluster::pause`].
    pub fn resume(&self, i: usize) {
        self.signal(i, "-CONT");
    }

    /// Sends `signal` to node `i`'s process; its pid.
    fn signal(&self, i: usize, signal: &str) -> u32 {
        let pid = self.nodes[i]
            .child
            .as_ref()
            .unwrap_or_else(|| panic!("node {i} is not running"))
            .id();
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal} {pid}");
        pid
    }

    /// Starts node `i` again on the same ports and store, and waits until it is ready, knows
    /// the cluster's metadata leader and is current with every stream and consumer it holds
    /// ([`NatsCluster::wait_healthy`], which restarts it again if it stays unhealthy).
    ///
    /// # Panics
    ///
    /// As [`NatsCluster::start`] and [`NatsCluster::wait_healthy`].
    pub fn restart(&mut self, i: usize) {
        assert!(self.nodes[i].child.is_none(), "node {i} is running");
        self.spawn(i);
        self.wait_healthy();
    }

    /// Starts node `i` again on the same ports and store and waits only until it is ready as
    /// the NATS chart's readiness probe asks (`/healthz?js-server-only=true`): what `kubectl
    /// wait --for=condition=Ready` waits for once a deleted pod is back
    /// (`deploy/k8s/upgrade-nats.sh`). Whether its streams and consumers are current is for
    /// the caller to ask (`shogi-arbiter streams replicas --wait`); nothing here restarts it.
    ///
    /// # Panics
    ///
    /// When node `i` is running, or does not answer the probe within 30 seconds (scaled to
    /// the load).
    pub fn start_ready(&mut self, i: usize) {
        assert!(self.nodes[i].child.is_none(), "node {i} is running");
        self.spawn(i);
        let port = self.nodes[i].monitor_port;
        let deadline = Instant::now() + DEADLINE.get();
        while http_get(port, "/healthz?js-server-only=true").is_none_or(|(s, _)| s != 200) {
            assert!(
                Instant::now() < deadline,
                "node {i} not ready (/healthz?js-server-only=true) within {:?}",
                DEADLINE.get()
            );
            std::thread::sleep(POLL);
        }
    }

    /// Stops node `i` as a deleted pod's server stops (SIGTERM) and waits for it to exit, and
    /// for nothing else: what `kubectl delete pod --wait` waits for.
    ///
    /// # Panics
    ///
    /// When the node does not exit within 30 seconds (scaled to the load).
    pub fn shut_down(&mut self, i: usize) {
        assert!(
            self.sigterm(i),
            "node {i} did not exit within {:?} of SIGTERM",
            DEADLINE.get()
        );
    }

    /// Stops node `i` as [`NatsCluster::shut_down`] does and starts it again as
    /// [`NatsCluster::start_ready`] does: a pod deleted once more.
    ///
    /// # Panics
    ///
    /// As those two.
    pub fn restart_ready(&mut self, i: usize) {
        self.shut_down(i);
        self.start_ready(i);
    }

    /// Kills every node at once (SIGKILL: a power cut, or every pod of the cluster lost
    /// together), then starts them all again on the same ports and stores, and waits until they
    /// agree on a metadata leader and every stream's replicas are current
    /// ([`NatsCluster::wait_healthy`]). What was only in the servers' memory (consumers kept in
    /// memory) is gone; what was on their disks is not.
    ///
    /// # Panics
    ///
    /// As [`NatsCluster::start`] and [`NatsCluster::wait_healthy`].
    pub fn restart_all(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        for i in 0..self.nodes.len() {
            self.spawn(i);
        }
        self.wait_healthy();
    }

    /// Spawns node `i` and waits for its "Server is ready".
    fn spawn(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        // In a process group of its own, so that a paused node stays paused whatever the
        // test's process group goes through (`crate::restartable::Nats::restart` says why).
        let mut child = Command::new(&self.bin)
            .process_group(0)
            .arg("-c")
            .arg(&node.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}. {INSTALL_HINT}", self.bin.display()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let log = node.log.clone();
        let from = log.len();
        let mut copy = node.log_file.as_ref().map(|path| {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()));
            std::io::BufWriter::new(file)
        });
        // Drains the pipe for the node's whole life, so that it never blocks on a full pipe.
        let drain = std::thread::spawn(move || {
            use std::io::Write as _;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(copy) = &mut copy {
                    // A copy cut short by a full disk only shortens the trace.
                    let _ = writeln!(copy, "{line}");
                    if line.contains("] [TRC] ") || line.contains("] [DBG] ") {
                        continue;
                    }
                }
                log.lines.lock().expect("log lock").push(line);
                log.grew.notify_all();
            }
            if let Some(copy) = &mut copy {
                let _ = copy.flush();
            }
        });
        node.drain = Some(drain);
        let ready = node
            .log
            .wait(from, Instant::now() + DEADLINE.get(), |lines| {
                lines.iter().any(|l| l.contains(READY)).then_some(())
            })
            .is_some();
        if !ready {
            let _ = child.kill();
            let status = child.wait();
            panic!(
                "nats-server {} did not report ready within {DEADLINE:?} (exit status \
                 {status:?}); its log:\n{}",
                node.name,
                node.log.text()
            );
        }
        node.child = Some(child);
    }

    /// Waits until the running nodes agree on a running metadata leader.
    fn wait_leader(&self) {
        let deadline = Instant::now() + DEADLINE.get();
        while self.meta_leader().is_none() {
            assert!(
                Instant::now() < deadline,
                "the NATS cluster has no JetStream metadata leader that every running node is \
                 current with, within {DEADLINE:?}; logs:\n{}",
                self.logs()
            );
            // Polled with a deadline: the monitoring endpoints do not push.
            std::thread::sleep(POLL);
        }
    }

    /// Every node's log so far, for a failure message.
    pub fn logs(&self) -> String {
        self.nodes
            .iter()
            .map(|n| format!("--- {} ---\n{}", n.name, n.log.text()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The directory holding the nodes' configurations and stores.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpStream;

    fn greets(port: u16) -> bool {
        let Ok(mut conn) = TcpStream::connect(("127.0.0.1", port)) else {
            return false;
        };
        let mut greeting = [0u8; 4];
        conn.read_exact(&mut greeting).is_ok() && &greeting == b"INFO"
    }

    #[test]
    fn three_nodes_elect_a_leader_survive_a_stop_and_rejoin() {
        let mut cluster = NatsCluster::start();
        assert_eq!(cluster.urls().len(), NODES);
        let leader = cluster.meta_leader().expect("a leader after start");
        for i in 0..NODES {
            assert!(
                greets(cluster.nodes[i].client_port),
                "node {i} serves clients"
            );
        }
        // The leader goes: the other two elect one of themselves.
        cluster.stop(leader);
        assert!(!greets(cluster.nodes[leader].client_port));
        let next = cluster.meta_leader().expect("a leader after the stop");
        assert_ne!(next, leader);
        // Back on the same port and store, it follows the new leader.
        cluster.restart(leader);
        assert!(greets(cluster.nodes[leader].client_port));
        assert_eq!(cluster.meta_leader(), Some(next));
        let dir = cluster.dir().to_owned();
        drop(cluster);
        assert!(!dir.exists());
    }
}
