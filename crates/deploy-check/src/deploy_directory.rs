//! The real `deploy/` directory: every YAML file parses, and every check passes.

use crate::chart::{CHART_RENDERINGS, chart_problems, partitions, render_chart};
use crate::compose::compose_problems;
use crate::env_names::{env_name_problems, k8s_env_names};
use crate::images::{dockerfile_problems, image_problems};
use crate::k8s::k8s_problems;
use crate::nats_values::nats_values_problems;
use crate::replicas::{compose_replica_problems, k8s_replica_problems};
use crate::support::{
    BINARIES, array_at, fail_on, object_at, parse_documents, repo_root, yaml_files,
};
use serde_json::Value;
use std::collections::BTreeSet;

/// The real deploy/ directory: every YAML file parses, and every check passes.
#[test]
fn deploy_directory_is_consistent() {
    let root = repo_root();
    let deploy = root.join("deploy");
    let files = yaml_files(&deploy);
    let mut problems = Vec::new();
    let mut k8s = Vec::new();
    let mut env_names = BTreeSet::new();
    let (mut saw_compose, mut saw_values) = (false, false);
    let mut nats_values = Value::Null;
    for path in &files {
        let rel = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .display()
            .to_string();
        // A chart's templates are Go templates, not YAML: they are checked rendered.
        if path.components().any(|c| c.as_os_str() == "templates")
            && path.starts_with(deploy.join("helm"))
        {
            continue;
        }
        let text = std::fs::read_to_string(path).expect("read a YAML file");
        let docs = match parse_documents(&text) {
            Ok(docs) => docs,
            Err(e) => {
                problems.push(format!("{rel}: does not parse: {e}"));
                continue;
            }
        };
        for doc in &docs {
            let mut images = Vec::new();
            image_problems(doc, &mut images);
            problems.extend(images.into_iter().map(|p| format!("{rel}: {p}")));
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with("docker-compose") || name.starts_with("compose") {
            saw_compose = true;
            for doc in &docs {
                problems.extend(compose_problems(&rel, doc));
                problems.extend(compose_replica_problems(&rel, doc));
                // Only the arbiter's services: the NATS nodes' variables are their own.
                let ours = object_at(doc, "/services")
                    .into_iter()
                    .flatten()
                    .map(|(_, s)| s)
                    .filter(|s| {
                        let binary = array_at(s, "/command").first().and_then(Value::as_str);
                        BINARIES.iter().any(|(n, _)| Some(*n) == binary)
                    });
                for s in ours {
                    env_names.extend(
                        object_at(s, "/environment")
                            .into_iter()
                            .flatten()
                            .map(|(k, _)| k.clone()),
                    );
                }
            }
        } else if name == "nats-values.yaml" {
            saw_values = true;
            for doc in &docs {
                problems.extend(nats_values_problems(&rel, doc));
            }
            nats_values = docs.into_iter().next().unwrap_or(Value::Null);
        } else if path.starts_with(deploy.join("k8s")) {
            // The manifests beside the chart (the namespace): objects `kubectl apply -f`
            // takes, added to each rendering of the chart.
            for doc in docs {
                if doc.get("apiVersion").is_none() || doc.get("kind").is_none() {
                    problems.push(format!("{rel}: a document without apiVersion and kind"));
                } else {
                    k8s.push((rel.clone(), doc));
                }
            }
        }
    }
    assert!(saw_compose, "no compose file under {}", deploy.display());
    assert!(saw_values, "no nats-values.yaml under {}", deploy.display());
    let partitions = partitions(&root);
    for (label, args) in CHART_RENDERINGS {
        let mut objects =
            render_chart(&root, args).unwrap_or_else(|e| panic!("helm template ({label}): {e}"));
        objects.extend(k8s.iter().cloned());
        let kinds: BTreeSet<&str> = objects
            .iter()
            .filter_map(|(_, o)| o["kind"].as_str())
            .collect();
        for kind in [
            "Namespace",
            "Deployment",
            "Service",
            "PodDisruptionBudget",
            "ConfigMap",
            "NetworkPolicy",
            "Job",
        ] {
            assert!(
                kinds.contains(kind),
                "no {kind} in the chart rendered with {label} (found {kinds:?})"
            );
        }
        if *label == "values-full.yaml" {
            for kind in ["HorizontalPodAutoscaler", "ScaledObject", "Secret"] {
                assert!(
                    kinds.contains(kind),
                    "no {kind} in the chart rendered with {label} (found {kinds:?})"
                );
            }
        }
        env_names.extend(k8s_env_names(&objects));
        let found = k8s_problems(&objects)
            .into_iter()
            .chain(k8s_replica_problems(&nats_values, &objects))
            .chain(chart_problems(&objects, partitions));
        problems.extend(found.map(|p| format!("{label}: {p}")));
    }
    let dockerfile = std::fs::read_to_string(deploy.join("Dockerfile")).expect("deploy/Dockerfile");
    problems.extend(
        dockerfile_problems(&dockerfile)
            .into_iter()
            .map(|p| format!("deploy/Dockerfile: {p}")),
    );
    problems.extend(env_name_problems(&root, &env_names));
    fail_on(problems);
}
