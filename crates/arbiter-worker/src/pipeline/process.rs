//! A pipeline service process: the workers of one instance, by lease or by a fixed share, as a
//! part of the one composition ([`arbiter_runtime::compose`], which serves health and drains).

use super::config::{Error, Stats, WorkerConfig};
use super::judge::Worker;
use crate::lease::LeaseConfig;
use crate::telemetry;
use arbiter_bus::Bus;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Starts the workers of one instance: with `leases`, the partitions it holds by lease, each in
/// a task of its own as they come and go; without, its fixed share of the partitions
/// (`config.instance` of `config.instances`), one task per partition, so that a round trip
/// for one game (loading it, a warning) does not hold up the others and the partitions use
/// every core. They stop when `stop` turns true; the task ends when they all have.
pub(crate) fn spawn_workers(
    bus: Bus,
    config: &WorkerConfig,
    leases: Option<LeaseConfig>,
    stats: Arc<Stats>,
    stop: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<Result<(), Error>> {
    telemetry::observe(config.role, stats.clone());
    tokio::spawn(telemetry::poll_lag(
        bus.clone(),
        config.clone(),
        stop.clone(),
    ));
    let stopped = move || {
        let mut stop = stop.clone();
        async move {
            let _ = stop.wait_for(|s| *s).await;
        }
    };
    match leases {
        Some(leases) => tokio::spawn(crate::lease::run_leased(
            bus,
            config.clone(),
            leases,
            stats,
            stopped(),
        )),
        None => {
            let tasks: Vec<_> = config
                .partitions()
                .into_iter()
                .map(|p| {
                    let worker =
                        Worker::for_partitions(bus.clone(), config.clone(), vec![p], stats.clone());
                    tokio::spawn(worker.run(stopped()))
                })
                .collect();
            tokio::spawn(async move {
                for t in futures::future::join_all(tasks).await {
                    t.map_err(|e| Error::Config(format!("worker: {e}")))??;
                }
                Ok(())
            })
        }
    }
}

/// How an instance takes part in the leases, before the bus is open: [`LeaseConfig`] without
/// its bus, which the composition gives.
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    /// This instance's name, unique among the live instances of the role; one subject token.
    pub holder: String,
    /// How long a lease or a membership lasts unrenewed; renewed every third of it.
    pub ttl: Duration,
}

/// The workers of one instance of a role as a part of the composition
/// ([`arbiter_runtime::compose`]): partitions by lease (over the composition's lease bus) or,
/// with `leases` `None`, the fixed share of `config.instance` among `config.instances`. It does
/// its job (health SERVING, the bus connected besides) once it consumes, or, with leases, once
/// it has joined them (holding nothing for now), and as long as no consumer of a partition it
/// holds is missing or refused; on shutdown it stops after its in-flight delivery. `stats` are its counters.
pub fn part(
    config: WorkerConfig,
    leases: Option<LeaseSettings>,
    stats: Arc<Stats>,
) -> Box<dyn arbiter_runtime::compose::Part> {
    Box::new(WorkerPart {
        config,
        leases,
        stats,
    })
}

/// See [`part`].
struct WorkerPart {
    config: WorkerConfig,
    leases: Option<LeaseSettings>,
    stats: Arc<Stats>,
}

impl arbiter_runtime::compose::Part for WorkerPart {
    fn name(&self) -> &'static str {
        self.config.role.name()
    }

    fn start(
        self: Box<Self>,
        cx: arbiter_runtime::compose::Context,
    ) -> Result<arbiter_runtime::compose::Started, arbiter_runtime::compose::BoxError> {
        let WorkerPart {
            config,
            leases,
            stats,
        } = *self;
        config.validate()?;
        let leases = leases.map(|l| LeaseConfig {
            bus: cx.leases.clone(),
            holder: l.holder,
            ttl: l.ttl,
        });
        if let Some(leases) = &leases {
            leases.validate()?;
        }
        let ready = {
            let stats = stats.clone();
            move || {
                stats.unavailable.load(Ordering::Relaxed) == 0
                    && (stats.consuming.load(Ordering::Relaxed) > 0
                        || stats.joined.load(Ordering::Relaxed))
            }
        };
        let run = async move {
            spawn_workers(cx.bus, &config, leases, stats, cx.stop)
                .await
                .map_err(|e| Error::Config(format!("worker: {e}")))??;
            Ok::<(), arbiter_runtime::compose::BoxError>(())
        };
        Ok(arbiter_runtime::compose::Started {
            ready: Box::new(ready),
            run: Box::pin(run),
        })
    }
}
