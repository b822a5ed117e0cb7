//! The environment variables the deploy files set are the ones the binaries read.

use crate::replicas::REPLICAS_VAR;
use crate::support::{BINARIES, array_at, check, env_prefix, object_at, opens_bus, str_at};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The environment variables the deploy files set for each binary must be ones its crate
/// declares (`env = "NAME"` in its clap arguments), and the crate must exist. The worker
/// binaries share arbiter-worker's flags (`cli.rs`), whose variables carry the role's prefix:
/// `<PREFIX>_NAME` is declared there as `"NAME"` in `ROLE_VARIABLES`.
pub(crate) fn env_name_problems(root: &Path, names: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for (binary, dir) in BINARIES {
        let prefix = format!("{}_", env_prefix(binary));
        let mut wanted: Vec<&String> = names.iter().filter(|n| n.starts_with(&prefix)).collect();
        if *binary == "move-validator" {
            // The shared variables, read by every service; move-validator (and the
            // arbiter-bus flags it flattens) define them.
            wanted.extend(names.iter().filter(|n| n.starts_with("NATS_")));
        } else if opens_bus(binary) {
            wanted.extend(names.iter().filter(|n| *n == REPLICAS_VAR));
        }
        let src = root.join(dir).join("src");
        if !src.is_dir() {
            problems.push(format!(
                    "deploy/ runs {binary}, but there is no {dir}/src to check its {} variables against",
                    wanted.len()
                ));
            continue;
        }
        let mut sources = String::new();
        let mut stack = vec![src];
        // The NATS connection flags live in arbiter-bus (`NatsArgs`), which every binary
        // flattens into its own.
        let shared = root.join("crates/arbiter-bus/src");
        if *binary == "move-validator" && shared.is_dir() {
            stack.push(shared);
        }
        let worker = root.join("crates/arbiter-worker/src");
        let role_flags = if *binary != "move-validator" && worker.is_dir() {
            stack.push(worker.clone());
            let cli = std::fs::read_to_string(worker.join("cli.rs")).unwrap_or_default();
            // The names of the `ROLE_VARIABLES` array, and nothing else of the file.
            cli.split_once("ROLE_VARIABLES: [&str;")
                .and_then(|(_, rest)| rest.split_once("];"))
                .map(|(names, _)| names.to_owned())
                .unwrap_or_default()
        } else {
            String::new()
        };
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).expect("read source dir") {
                let path = entry.expect("entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    sources.push_str(&std::fs::read_to_string(&path).expect("read source"));
                }
            }
        }
        for name in wanted {
            let role_flag = name
                .strip_prefix(&prefix)
                .is_some_and(|flag| role_flags.contains(&format!("\"{flag}\"")));
            if !role_flag && !sources.contains(&format!("\"{name}\"")) {
                problems.push(format!(
                    "deploy/ sets {name} for {binary}, but {dir}/src declares no such variable: \
                         rename it in deploy/helm/shogi-arbiter and deploy/docker-compose.yml"
                ));
            }
        }
    }
    problems
}

/// The environment variables Kubernetes objects set: ConfigMap keys and containers' `env`.
pub(crate) fn k8s_env_names(objects: &[(String, Value)]) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (_, o) in objects {
        for c in array_at(o, "/spec/template/spec/containers") {
            names.extend(
                array_at(c, "/env")
                    .iter()
                    .filter_map(|e| str_at(e, "/name"))
                    .map(str::to_owned),
            );
        }
        if o["kind"] == "ConfigMap" {
            names.extend(
                object_at(o, "/data")
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.clone()),
            );
        }
    }
    names
}

#[test]
fn variables_must_be_declared_by_the_crates() {
    let root = std::env::temp_dir().join(format!("deploy-check-{}", std::process::id()));
    let src = root.join("crates/move-validator/src");
    std::fs::create_dir_all(&src).expect("create a scratch crate");
    std::fs::write(
        src.join("main.rs"),
        r#"#[arg(long, env = "MOVE_VALIDATOR_LISTEN")] #[arg(env = "NATS_URL")]"#,
    )
    .expect("write a scratch main.rs");
    let bus = root.join("crates/arbiter-bus/src");
    std::fs::create_dir_all(&bus).expect("create a scratch arbiter-bus");
    std::fs::write(bus.join("args.rs"), r#"#[arg(long, env = "NATS_TLS_CA")]"#)
        .expect("write a scratch args.rs");
    // A worker binary's variables: the role's prefix on a name of arbiter-worker's
    // `ROLE_VARIABLES`, not on any other string of its flags.
    let watcher = root.join("crates/repetition-watcher/src");
    std::fs::create_dir_all(&watcher).expect("create a scratch worker binary");
    std::fs::write(watcher.join("main.rs"), "fn main() {}").expect("write its main.rs");
    let worker = root.join("crates/arbiter-worker/src");
    std::fs::create_dir_all(&worker).expect("create a scratch arbiter-worker");
    std::fs::write(
        worker.join("cli.rs"),
        r#"#[arg(env = "NATS_URL")] pub const ROLE_VARIABLES: [&str; 1] = ["HEALTH_LISTEN"];"#,
    )
    .expect("write a scratch cli.rs");
    // The CSA front end's variables start `CSA_`, not `CSA_SERVER_`.
    let csa = root.join("crates/csa-server/src");
    std::fs::create_dir_all(&csa).expect("create a scratch csa-server");
    std::fs::write(csa.join("main.rs"), r#"#[arg(long, env = "CSA_LISTEN")]"#)
        .expect("write its main.rs");
    let names: BTreeSet<String> = [
        "CSA_LISTEN",
        "CSA_LISTENER",
        "MOVE_VALIDATOR_LISTEN",
        "MOVE_VALIDATOR_LISTEN_ADDR",
        "NATS_URL",
        "NATS_TLS_CA",
        "NATS_TLS_CAFILE",
        "REPETITION_WATCHER_HEALTH_LISTEN",
        "REPETITION_WATCHER_NATS_URL",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    let problems = env_name_problems(&root, &names);
    std::fs::remove_dir_all(&root).expect("remove the scratch crate");
    check(
        problems,
        &[
            "sets MOVE_VALIDATOR_LISTEN_ADDR for move-validator",
            "sets NATS_TLS_CAFILE for move-validator",
            "sets REPETITION_WATCHER_NATS_URL for repetition-watcher",
            "no crates/impasse-judge/src",
            "sets CSA_LISTENER for csa-server",
        ],
    );
}
