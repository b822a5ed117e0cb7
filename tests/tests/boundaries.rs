//! The boundary rules of ARCHITECTURE.md ("Boundary rules"), checked on the crate graph as
//! Cargo sees it (`cargo metadata`), the way rust-analyzer's tidy tests hold its boundaries, so
//! that a review never has to:
//!
//! 1. `shogi-proto` is the only crate that knows protobuf: no other package of the workspace
//!    has a protobuf crate ([`PROTOBUF`]) among its normal or build dependencies. Tests and
//!    benchmarks (dev-dependencies) may, to forge and read raw payloads as a foreign client.
//! 2. No service crate depends on another service crate ([`SERVICES`]); the worker binaries
//!    depend on the library they run, `arbiter-worker` ([`ALLOWED`]).
//! 3. The rules core and the adjudication layer depend on nothing but each other and
//!    `thiserror` ([`PURE`]): no IO, no async runtime, no serde, no logging.

use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

/// The crates that encode, decode or describe protobuf messages.
const PROTOBUF: &[&str] = &[
    "prost",
    "prost-types",
    "prost-reflect",
    "prost-build",
    "protox",
    "tonic-prost",
    "tonic-prost-build",
    "tonic-types",
];

/// The contract crate: the one allowed to depend on [`PROTOBUF`].
const CONTRACT: &str = "shogi-proto";

/// The service crates: a process each, that meet only on the bus (and in `arbiter-stack`, the
/// composition, which is no service).
const SERVICES: &[&str] = &[
    "move-validator",
    "arbiter-worker",
    "repetition-watcher",
    "impasse-judge",
];

/// The service-to-service dependencies allowed: the worker binaries run the worker library.
const ALLOWED: &[(&str, &str)] = &[
    ("repetition-watcher", "arbiter-worker"),
    ("impasse-judge", "arbiter-worker"),
];

/// The pure cores and everything each may depend on.
const PURE: &[(&str, &[&str])] = &[
    ("shogi-rules", &["thiserror"]),
    ("shogi-adjudication", &["shogi-rules", "thiserror"]),
];

/// One package and its normal and build dependencies, by package name.
struct Package {
    name: String,
    deps: BTreeSet<String>,
}

/// The workspace's packages, as `cargo metadata` describes them.
fn workspace() -> Vec<Package> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--no-deps",
        ])
        .current_dir(root)
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    packages
        .iter()
        .map(|p| Package {
            name: p["name"].as_str().expect("a package name").to_owned(),
            deps: p["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                // `kind` is null for normal dependencies, "build" or "dev" otherwise.
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .map(|d| d["name"].as_str().expect("a dependency name").to_owned())
                .collect(),
        })
        .collect()
}

/// Every dependency of the workspace that breaks a rule, as `package -> dependency: rule`.
fn violations(packages: &[Package]) -> Vec<String> {
    let mut found = Vec::new();
    for p in packages {
        for dep in &p.deps {
            if p.name != CONTRACT && PROTOBUF.contains(&dep.as_str()) {
                found.push(format!(
                    "{} -> {dep}: only {CONTRACT} knows protobuf",
                    p.name
                ));
            }
            if SERVICES.contains(&p.name.as_str())
                && SERVICES.contains(&dep.as_str())
                && !ALLOWED.contains(&(p.name.as_str(), dep.as_str()))
            {
                found.push(format!(
                    "{} -> {dep}: a service crate does not depend on another",
                    p.name
                ));
            }
            if let Some((_, allowed)) = PURE.iter().find(|(name, _)| *name == p.name)
                && !allowed.contains(&dep.as_str())
            {
                found.push(format!(
                    "{} -> {dep}: a pure core depends only on {allowed:?}",
                    p.name
                ));
            }
        }
    }
    found
}

#[test]
fn the_crate_graph_keeps_the_boundary_rules() {
    let packages = workspace();
    // The rules name real packages: a rename must not turn a rule off silently.
    for name in SERVICES
        .iter()
        .chain([&CONTRACT])
        .chain(PURE.iter().map(|(n, _)| n))
    {
        assert!(
            packages.iter().any(|p| p.name == *name),
            "no package {name} in the workspace: update the boundary rules"
        );
    }
    let found = violations(&packages);
    assert!(
        found.is_empty(),
        "boundary rules broken (ARCHITECTURE.md, \"Boundary rules\"):\n{}",
        found.join("\n")
    );
}

/// Each rule catches what it forbids, on a made-up graph.
#[test]
fn each_rule_catches_its_violation() {
    let package = |name: &str, deps: &[&str]| Package {
        name: name.to_owned(),
        deps: deps.iter().map(|d| (*d).to_owned()).collect(),
    };
    let check = |p: Package, expect: &[&str]| {
        let name = p.name.clone();
        let found = violations(&[p]);
        assert_eq!(found.len(), expect.len(), "{name}: {found:?}");
        for (f, e) in found.iter().zip(expect) {
            assert!(f.contains(e), "{name}: {f} should name {e}");
        }
    };
    check(package("shogi-proto", &["prost", "tonic-types"]), &[]);
    check(package("move-validator", &["prost"]), &["prost"]);
    check(package("arbiter-bus", &["prost-types"]), &["prost-types"]);
    check(
        package("move-validator", &["arbiter-worker"]),
        &["arbiter-worker"],
    );
    check(
        package("arbiter-worker", &["move-validator"]),
        &["move-validator"],
    );
    check(
        package("impasse-judge", &["repetition-watcher"]),
        &["repetition-watcher"],
    );
    check(package("impasse-judge", &["arbiter-worker"]), &[]);
    check(
        package("arbiter-stack", &["move-validator", "arbiter-worker"]),
        &[],
    );
    check(
        package("shogi-adjudication", &["shogi-rules", "thiserror"]),
        &[],
    );
    check(package("shogi-rules", &["tokio"]), &["tokio"]);
}
