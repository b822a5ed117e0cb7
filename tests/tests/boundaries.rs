//! The boundary rules of ARCHITECTURE.md ("Boundary rules"), checked on the crate graph as
//! Cargo sees it (`cargo metadata`), the way rust-analyzer's tidy tests hold its boundaries, so
//! that a review never has to:
//!
//! 1. `shogi-proto` is the only crate that knows protobuf: no other package of the workspace
//!    has a protobuf crate ([`PROTOBUF`]) among its normal or build dependencies. Tests and
//!    benchmarks (dev-dependencies) may, to forge and read raw payloads as a foreign client.
//! 2. No service crate depends on another service crate ([`SERVICES`]); the worker binaries
//!    depend on the library they run, `arbiter-worker` ([`ALLOWED`]).
//! 3. The rules core, the adjudication layer and the CSA protocol layer depend on nothing but
//!    the rules core and `thiserror` ([`PURE`]): no IO, no async runtime, no serde, no logging.
//!
//! And ARCHITECTURE.md's drawing of the crate graph is generated from the same metadata
//! ([`mermaid`]), so that it cannot drift from what Cargo builds.

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
    "csa-server",
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
    ("csa-protocol", &["shogi-rules", "thiserror"]),
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
    check(package("csa-protocol", &["shogi-rules", "thiserror"]), &[]);
    check(package("csa-protocol", &["tokio"]), &["tokio"]);
}

/// Where ARCHITECTURE.md's generated crate graph begins and ends.
const GRAPH_BEGIN: &str = "<!-- crate graph: generated by tests/tests/boundaries.rs -->\n";
const GRAPH_END: &str = "<!-- end of crate graph -->\n";

/// The workspace's crate graph as a Mermaid flowchart, each package pointing at the workspace
/// packages it depends on (normal and build dependencies), without the edges implied by others
/// (A -> C is left out when A -> B -> ... -> C): the graph a reader needs, one arrow per layer.
fn mermaid(packages: &[Package]) -> String {
    let names: BTreeSet<&str> = packages.iter().map(|p| p.name.as_str()).collect();
    let deps = |name: &str| -> BTreeSet<&str> {
        packages
            .iter()
            .find(|p| p.name == name)
            .map(|p| {
                p.deps
                    .iter()
                    .map(String::as_str)
                    .filter(|d| names.contains(d))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Whether `to` is reachable from `from` in one step or more.
    let reaches = |from: &str, to: &str| -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for d in deps(n) {
                if d == to {
                    return true;
                }
                if seen.insert(d) {
                    stack.push(d);
                }
            }
        }
        false
    };
    let id = |name: &str| name.replace('-', "_");
    let mut out = String::from("```mermaid\nflowchart BT\n");
    for name in &names {
        out.push_str(&format!("    {}[{name}]\n", id(name)));
    }
    for name in &names {
        let direct = deps(name);
        for dep in &direct {
            let implied = direct
                .iter()
                .any(|other| other != dep && reaches(other, dep));
            if !implied {
                out.push_str(&format!("    {} --> {}\n", id(name), id(dep)));
            }
        }
    }
    out.push_str("```\n");
    out
}

/// ARCHITECTURE.md draws the crate graph Cargo sees: the block between its markers is what
/// [`mermaid`] generates from `cargo metadata`. `UPDATE_EXPECT=1 cargo test -p arbiter-tests
/// --test boundaries` writes it after a change to the graph.
#[test]
fn architecture_md_draws_the_real_crate_graph() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../ARCHITECTURE.md");
    let text = std::fs::read_to_string(path).expect("read ARCHITECTURE.md");
    let (before, rest) = text
        .split_once(GRAPH_BEGIN)
        .expect("ARCHITECTURE.md has the crate graph's begin marker");
    let (drawn, after) = rest
        .split_once(GRAPH_END)
        .expect("ARCHITECTURE.md has the crate graph's end marker");
    let real = mermaid(&workspace());
    if drawn == real {
        return;
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(
            path,
            format!("{before}{GRAPH_BEGIN}{real}{GRAPH_END}{after}"),
        )
        .expect("write ARCHITECTURE.md");
        return;
    }
    panic!(
        "ARCHITECTURE.md's crate graph is not the workspace's; run UPDATE_EXPECT=1 cargo test \
         -p arbiter-tests --test boundaries to write it. The real graph:\n{real}"
    );
}

/// The drawing keeps every dependency no other path implies and leaves out those one does.
#[test]
fn the_drawn_graph_leaves_out_only_implied_edges() {
    let package = |name: &str, deps: &[&str]| Package {
        name: name.to_owned(),
        deps: deps.iter().map(|d| (*d).to_owned()).collect(),
    };
    let drawn = mermaid(&[
        package("rules", &["thiserror"]),
        package("adjudication", &["rules"]),
        package("proto", &["adjudication", "rules", "prost"]),
        package("records", &["rules"]),
    ]);
    assert!(drawn.contains("    proto --> adjudication\n"), "{drawn}");
    assert!(drawn.contains("    adjudication --> rules\n"), "{drawn}");
    assert!(drawn.contains("    records --> rules\n"), "{drawn}");
    assert!(!drawn.contains("proto --> rules"), "implied: {drawn}");
    assert!(
        !drawn.contains("prost") && !drawn.contains("thiserror"),
        "{drawn}"
    );
}
