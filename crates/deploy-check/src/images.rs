//! Images pinned everywhere: every `image:` of a YAML document, and the Dockerfile's base images
//! and runtime user.

use crate::support::{check, parse_documents};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The user the image runs as (deploy/Dockerfile), which the manifests must name.
pub(crate) const IMAGE_UID: u64 = 10001;

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
pub(crate) fn image_problems(v: &Value, problems: &mut Vec<String>) {
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
pub(crate) fn dockerfile_problems(text: &str) -> Vec<String> {
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
