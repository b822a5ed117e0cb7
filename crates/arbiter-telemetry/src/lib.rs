//! The arbiter's telemetry, shared by every binary: logs, traces and metrics.
//!
//! - Logs: `tracing` events through `tracing-subscriber`, as text for people or as one JSON
//!   object a line ([`LogFormat::Json`]), filtered by `RUST_LOG` (default `info`). Spans carry
//!   `game_id` and `ply`, so every line logged inside them names the game.
//! - Traces: when an OTLP endpoint is configured, `tracing` spans become OpenTelemetry spans
//!   (`tracing-opentelemetry`), batched and exported over OTLP/gRPC. The W3C trace context
//!   (`traceparent`, `tracestate`) crosses every hop: gRPC metadata in, bus message headers out
//!   and in ([`propagation`]), so one move is one trace across the validator and the workers.
//! - Metrics: the instruments of [`metrics()`], exported over OTLP/gRPC by a periodic reader
//!   when an endpoint is configured, and served for Prometheus on `GET /metrics` when a
//!   metrics address is configured ([`scrape`]); either, both or neither.
//! - JSON log lines carry the `trace_id` and `span_id` of the span they are logged in when it
//!   belongs to a trace (without the OpenTelemetry layer, only the `trace_id` of the caller's
//!   context carried through), so that a log line leads to its trace.
//!
//! Without an endpoint nothing is exported and no OpenTelemetry layer is installed: spans are
//! only log context. Without an endpoint or a metrics address no meter provider is installed
//! and the instruments are the API's no-ops. A caller's trace context is still carried
//! through onto the bus unchanged ([`propagation`]).
//!
//! [`init`] installs all of it process-wide and returns a [`Guard`] that flushes and shuts
//! the exporters down when dropped. The OTLP exporter is a tonic client, which needs the tokio
//! runtime: call [`init`] from inside it (`#[tokio::main]`).

mod logs;
pub mod metrics;
pub mod propagation;
pub mod scrape;

pub use metrics::{Metrics, metrics};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::{MeterProviderBuilder, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanExporter};
use std::net::SocketAddr;
use std::time::Duration;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::writer::BoxMakeWriter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer};

/// The longest one export to the collector may take, so that a collector that does not answer
/// holds up neither the exporters nor a shutdown for long.
const EXPORT_TIMEOUT: Duration = Duration::from_secs(2);

/// How log lines are written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable text.
    #[default]
    Text,
    /// One JSON object a line, with the fields of the event and of its spans.
    Json,
}

/// The telemetry flags every binary takes (flatten them into its arguments).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TelemetryArgs {
    /// Log line format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    /// OTLP/gRPC endpoint (http://collector:4317) to export traces and metrics to; unset:
    /// nothing is exported.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// Address (0.0.0.0:9464) to serve the metrics on for Prometheus, `GET /metrics`; unset:
    /// not served.
    #[arg(long, env = "METRICS_ADDR")]
    pub metrics_addr: Option<SocketAddr>,
}

impl TelemetryArgs {
    /// The configuration of `service` with these flags.
    pub fn config(&self, service: &'static str) -> Config {
        Config {
            service,
            log_format: self.log_format,
            otlp_endpoint: self.otlp_endpoint.clone().filter(|e| !e.trim().is_empty()),
            metrics_addr: self.metrics_addr,
            metrics_interval: Duration::from_secs(15),
        }
    }
}

/// What [`init`] sets up.
#[derive(Debug, Clone)]
pub struct Config {
    /// The service name (`service.name` of the exported resource).
    pub service: &'static str,
    /// The log line format.
    pub log_format: LogFormat,
    /// Where traces and metrics go (OTLP/gRPC); `None`: nowhere.
    pub otlp_endpoint: Option<String>,
    /// Where the metrics are served for Prometheus (`GET /metrics`); `None`: nowhere.
    pub metrics_addr: Option<SocketAddr>,
    /// How often metrics are exported.
    pub metrics_interval: Duration,
}

impl Config {
    /// Text logs, nothing exported.
    pub fn new(service: &'static str) -> Config {
        TelemetryArgs::default().config(service)
    }
}

/// Telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An OTLP exporter could not be built.
    #[error("otlp exporter: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// A global subscriber is already installed.
    #[error("install the log subscriber: {0}")]
    Subscriber(#[from] tracing_subscriber::util::TryInitError),
    /// The Prometheus reader could not be built.
    #[error("prometheus exporter: {0}")]
    Prometheus(String),
    /// The metrics address could not be bound.
    #[error("bind the metrics endpoint {addr}: {source}")]
    MetricsBind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// The installed exporters: dropping it flushes what is buffered and shuts them down.
#[derive(Debug)]
pub struct Guard {
    tracer_provider: Option<SdkTracerProvider>,
    meter_provider: Option<SdkMeterProvider>,
    metrics_endpoint: Option<(SocketAddr, tokio::task::JoinHandle<()>)>,
}

impl Guard {
    /// The address the Prometheus endpoint listens on (the bound port when 0 was asked), if
    /// it is served.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_endpoint.as_ref().map(|(addr, _)| *addr)
    }

    /// Exports every finished span and the metrics now.
    pub fn flush(&self) {
        if let Some(p) = &self.tracer_provider {
            let _ = p.force_flush();
        }
        if let Some(p) = &self.meter_provider {
            let _ = p.force_flush();
        }
    }
}

impl Drop for Guard {
    /// Flushes and shuts both exporters down side by side, each bounded by the export timeout,
    /// so that a shutdown waits for a silent collector about [`EXPORT_TIMEOUT`], not twice.
    fn drop(&mut self) {
        if let Some((_, task)) = self.metrics_endpoint.take() {
            task.abort();
        }
        let (tracer, meter) = (self.tracer_provider.take(), self.meter_provider.take());
        std::thread::scope(|scope| {
            if let Some(p) = meter {
                scope.spawn(move || {
                    if let Err(e) = p.shutdown() {
                        eprintln!("telemetry: metric exporter shutdown: {e}");
                    }
                });
            }
            if let Some(p) = tracer
                && let Err(e) = p.shutdown_with_timeout(EXPORT_TIMEOUT + Duration::from_secs(1))
            {
                eprintln!("telemetry: span exporter shutdown: {e}");
            }
        });
    }
}

/// Installs logging, and tracing and metrics over OTLP when `config` names an endpoint, for
/// the whole process. Call it once, inside the tokio runtime.
pub fn init(config: Config) -> Result<Guard, Error> {
    Builder::new(config).install()
}

/// [`init`] with parts replaced: the exporters (tests use in-memory ones) and the log writer.
pub struct Builder {
    config: Config,
    tracer_provider: Option<SdkTracerProvider>,
    /// The meter provider being built, with the readers given so far.
    meter_builder: Option<MeterProviderBuilder>,
    /// Whether a push exporter was given (which replaces the OTLP one).
    metric_exporter_given: bool,
    writer: BoxMakeWriter,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Builder {
    /// Logs to standard output, exporters from `config`.
    pub fn new(config: Config) -> Builder {
        Builder {
            config,
            tracer_provider: None,
            meter_builder: None,
            metric_exporter_given: false,
            writer: BoxMakeWriter::new(std::io::stdout),
        }
    }

    fn resource(&self) -> Resource {
        Resource::builder()
            .with_service_name(self.config.service)
            .build()
    }

    /// Spans go to `exporter` (batched) instead of the configured endpoint.
    pub fn span_exporter(mut self, exporter: impl SpanExporter + 'static) -> Builder {
        self.tracer_provider = Some(
            SdkTracerProvider::builder()
                .with_resource(self.resource())
                .with_batch_exporter(exporter)
                .build(),
        );
        self
    }

    /// Metrics go to `exporter` (by a periodic reader) instead of the configured endpoint.
    pub fn metric_exporter(mut self, exporter: impl PushMetricExporter) -> Builder {
        let reader = opentelemetry_sdk::metrics::PeriodicReader::builder(exporter)
            .with_interval(self.config.metrics_interval)
            .build();
        self.meter_builder = Some(self.meter_builder().with_reader(reader));
        self.metric_exporter_given = true;
        self
    }

    fn meter_builder(&mut self) -> MeterProviderBuilder {
        self.meter_builder
            .take()
            .unwrap_or_else(|| SdkMeterProvider::builder().with_resource(self.resource()))
    }

    /// Log lines go to `writer` instead of standard output.
    pub fn log_writer<W>(mut self, writer: W) -> Builder
    where
        W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
    {
        self.writer = BoxMakeWriter::new(writer);
        self
    }

    /// Installs the subscriber and the providers process-wide.
    pub fn install(mut self) -> Result<Guard, Error> {
        if let Some(endpoint) = self.config.otlp_endpoint.clone() {
            if self.tracer_provider.is_none() {
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_tonic()
                    .with_endpoint(endpoint.clone())
                    .with_timeout(EXPORT_TIMEOUT)
                    .build()?;
                self = self.span_exporter(exporter);
            }
            if !self.metric_exporter_given {
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_tonic()
                    .with_endpoint(endpoint)
                    .with_timeout(EXPORT_TIMEOUT)
                    .build()?;
                self = self.metric_exporter(exporter);
            }
        }
        // The Prometheus endpoint: a pull reader on the same provider, bound before anything
        // is installed so that a port in use fails the start with nothing half done.
        let mut metrics_endpoint = None;
        if let Some(addr) = self.config.metrics_addr {
            let registry = prometheus::Registry::new();
            let reader = opentelemetry_prometheus::exporter()
                .with_registry(registry.clone())
                .build()
                .map_err(|e| Error::Prometheus(e.to_string()))?;
            let bind = |addr| {
                let listener = std::net::TcpListener::bind(addr)?;
                listener.set_nonblocking(true)?;
                tokio::net::TcpListener::from_std(listener)
            };
            let listener = bind(addr).map_err(|source| Error::MetricsBind { addr, source })?;
            let bound = listener
                .local_addr()
                .map_err(|source| Error::MetricsBind { addr, source })?;
            metrics_endpoint = Some((bound, listener, registry));
            self.meter_builder = Some(self.meter_builder().with_reader(reader));
        }
        let meter_provider = self.meter_builder.take().map(MeterProviderBuilder::build);
        let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
        // Colours only for a person at a terminal, never into a log file or a collector.
        let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let fmt = tracing_subscriber::fmt::layer()
            .with_ansi(ansi)
            .with_writer(self.writer);
        let dispatch_cell = std::sync::Arc::new(std::sync::OnceLock::new());
        let fmt = match self.config.log_format {
            LogFormat::Text => fmt.boxed(),
            LogFormat::Json => fmt
                .event_format(logs::WithTraceIds {
                    format: tracing_subscriber::fmt::format()
                        .json()
                        .with_current_span(true)
                        .with_span_list(true),
                    dispatch: dispatch_cell.clone(),
                })
                .fmt_fields(tracing_subscriber::fmt::format::JsonFields::new())
                .boxed(),
        };
        let otel = self.tracer_provider.as_ref().map(|p| {
            tracing_opentelemetry::layer()
                .with_tracer(p.tracer(self.config.service))
                // Thread ids and source locations would be noise on every span.
                .with_threads(false)
                .with_location(false)
        });
        let dispatch = tracing::Dispatch::new(
            tracing_subscriber::registry()
                .with(filter)
                .with(fmt)
                .with(otel),
        );
        let _ = dispatch_cell.set(dispatch.downgrade());
        dispatch.try_init()?;
        if let Some(p) = &meter_provider {
            opentelemetry::global::set_meter_provider(p.clone());
        }
        let metrics_endpoint = metrics_endpoint.map(|(addr, listener, registry)| {
            tracing::info!(%addr, "metrics endpoint serving /metrics");
            (addr, tokio::spawn(scrape::serve(listener, registry)))
        });
        Ok(Guard {
            tracer_provider: self.tracer_provider,
            meter_provider,
            metrics_endpoint,
        })
    }
}
