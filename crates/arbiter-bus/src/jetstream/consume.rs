//! Consuming: the messages of a durable consumer, pulled in short requests or pushed with flow
//! control, as deliveries to acknowledge.

use super::JetStreamBus;
use super::message::{headers, message_type};
use super::setup::{
    PULL_EXPIRES, PULL_HEARTBEAT, acks_of, differences, durable_config, mode_of, push_config,
    storage_of, wanted_config,
};
use crate::{Acker, BusError, Delivery, DeliveryMode, DurableConfig, Message, Provision};
use async_nats::jetstream::context::ConsumerInfoErrorKind;
use async_nats::jetstream::{self, AckKind, consumer};
use futures::StreamExt;
use futures::stream::BoxStream;

impl JetStreamBus {
    /// The deliveries of the durable consumer `config`, pulled or pushed as it says
    /// ([`DeliveryMode`]); or, when the consumer exists in the other mode, as it is.
    ///
    /// The server cannot change a consumer's mode, and a service never deletes one. So a
    /// worker configured to push that finds its consumer made to pull (a deployment older than
    /// `streams apply` making push consumers, or one that chose pull) consumes it by pulling,
    /// and the other way round, with a warning that names the command that replaces it: the
    /// partition keeps its verdicts coming meanwhile, only with the other mode's latency.
    pub(super) async fn consume_durable(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<Delivery, BusError>>, BusError> {
        let mut config = self.resolved(config);
        match self.stream.consumer_info(&config.name).await {
            Ok(info) => {
                let storage = storage_of(&info.config);
                if storage != config.storage {
                    tracing::warn!(
                        consumer = %config.name,
                        found = storage.as_str(),
                        configured = config.storage.as_str(),
                        "the durable consumer keeps its state elsewhere than configured, which \
                         the server cannot change, and is consumed as it is; `shogi-arbiter \
                         streams apply --consumer-storage {}` replaces it, starting after its \
                         ack floor (deploy/STREAMS.md, \"Consumer storage\")",
                        config.storage.as_str()
                    );
                    config.storage = storage;
                }
                let found = mode_of(&info.config);
                if found != config.delivery {
                    tracing::warn!(
                        consumer = %config.name,
                        found = ?found,
                        configured = ?config.delivery,
                        "the durable consumer exists in the other delivery mode, which the \
                         server cannot change, and is consumed as it is; `shogi-arbiter \
                         streams apply --consumer-delivery {}` replaces it, starting after \
                         its ack floor (deploy/STREAMS.md)",
                        match config.delivery {
                            DeliveryMode::Pull => "pull",
                            DeliveryMode::Push => "push",
                        }
                    );
                    config.delivery = found;
                }
                let acks = acks_of(&info.config);
                if acks != config.acks {
                    tracing::warn!(
                        consumer = %config.name,
                        found = ?acks,
                        configured = ?config.acks,
                        "the durable consumer has the other ack policy, which the server cannot \
                         change, and is acknowledged as it is; `shogi-arbiter streams apply` \
                         replaces it, starting after its ack floor (deploy/STREAMS.md)"
                    );
                    config.acks = acks;
                }
            }
            // Missing: refused in bind mode, where it stays missing until `streams apply`
            // makes it; otherwise created below in the configured mode.
            Err(e) if matches!(e.kind(), ConsumerInfoErrorKind::NotFound) => {
                if self.provision == Provision::Bind {
                    return Err(BusError::Missing {
                        what: format!("consumer {}", config.name),
                    });
                }
            }
            Err(e) => return Err(consumer_error(&config, &e)),
        }
        let messages = match config.delivery {
            DeliveryMode::Pull => self.pull_messages(&config).await?,
            DeliveryMode::Push => self.push_messages(&config).await?,
        };
        Ok(deliveries(config.name.clone(), config.acks, messages))
    }
}

/// The header of an idle heartbeat that says the consumer is stalled: the server sent a flow
/// control request that was never answered and delivers nothing more until it is; the value
/// is the subject to answer on (nats-server's `JSConsumerStalled`).
const CONSUMER_STALLED: &str = "Nats-Consumer-Stalled";

/// The messages a push consumer delivers to `subscriber`, its flow control answered.
///
/// async-nats's push consumer answers a flow control request, but not the stall its idle
/// heartbeats report: when a request was lost (sent to an instance that stopped before it
/// answered, as in a rolling upgrade, or dropped with a connection to a restarted server),
/// the consumer delivers nothing more to any instance, for ever, while its heartbeats keep
/// the subscription looking alive. So the bus reads the subscription itself and answers both
/// (as the Go client does). Two heartbeat intervals without a message of any kind end the
/// stream with an error, on which a worker opens its consumer again.
fn pushed(
    client: async_nats::Client,
    context: jetstream::Context,
    subscriber: async_nats::Subscriber,
    idle_heartbeat: std::time::Duration,
) -> BoxStream<'static, Result<jetstream::Message, String>> {
    let silence = (!idle_heartbeat.is_zero()).then(|| idle_heartbeat.saturating_mul(2));
    futures::stream::unfold(
        Some((client, context, subscriber)),
        move |state| async move {
            let (client, context, mut subscriber) = state?;
            loop {
                let next = match silence {
                    Some(silence) => match tokio::time::timeout(silence, subscriber.next()).await {
                        Ok(next) => next,
                        Err(_) => return Some((Err("missed idle heartbeat".to_owned()), None)),
                    },
                    None => subscriber.next().await,
                };
                let message = next?;
                if message.status == Some(async_nats::StatusCode::IDLE_HEARTBEAT) {
                    // A flow control request has a reply subject; a heartbeat of a stalled
                    // consumer names the request it still waits for.
                    let answer = message.reply.clone().or_else(|| {
                        message
                            .headers
                            .as_ref()
                            .and_then(|h| h.get(CONSUMER_STALLED))
                            .map(|v| v.as_str().into())
                    });
                    if let Some(subject) = answer {
                        if message.reply.is_none() {
                            tracing::debug!(%subject, "answering a stalled flow control");
                        }
                        if let Err(e) = client.publish(subject, bytes::Bytes::new()).await {
                            return Some((Err(format!("answer flow control: {e}")), None));
                        }
                    }
                    continue;
                }
                if message.status.is_some() {
                    continue;
                }
                let message = jetstream::Message {
                    message,
                    context: context.clone(),
                };
                return Some((Ok(message), Some((client, context, subscriber))));
            }
        },
    )
    .boxed()
}

/// The deliveries of a consumer's `messages`.
fn deliveries(
    name: String,
    acks: crate::AckMode,
    messages: BoxStream<'static, Result<jetstream::Message, String>>,
) -> BoxStream<'static, Result<Delivery, BusError>> {
    messages
        .map(move |m| match m {
            Ok(m) => {
                let info = m.info().ok();
                let (sequence, delivered, pending, consumer_sequence) = info
                    .as_ref()
                    .map(|i| {
                        let delivered = i.delivered.max(1) as u64;
                        (i.stream_sequence, delivered, i.pending, i.consumer_sequence)
                    })
                    .unwrap_or((0, 1, 0, 0));
                let message = Message {
                    subject: m.subject.to_string(),
                    sequence,
                    message_type: message_type(m.headers.as_ref()),
                    headers: headers(m.headers.as_ref()),
                    time: info.map(|i| i.published.into()),
                    payload: m.payload.clone(),
                };
                Ok(Delivery {
                    message,
                    delivered,
                    pending,
                    acks,
                    consumer_sequence,
                    acker: Box::new(JsAcker(m)),
                })
            }
            Err(e) => Err(BusError::Consumer {
                name: name.clone(),
                reason: e.to_string(),
            }),
        })
        .boxed()
}

/// The messages of `consumer`, pulled in short requests: a pull request waiting on a server
/// that dies is only noticed after two missed heartbeats, then sent again to the consumer's new
/// leader; with async-nats's defaults (30 s pulls, 15 s heartbeats) a partition could wait
/// 30 s after a node loss.
async fn pull(
    consumer: &consumer::PullConsumer,
) -> Result<consumer::pull::Stream, consumer::StreamError> {
    consumer
        .stream()
        .expires(PULL_EXPIRES)
        .heartbeat(PULL_HEARTBEAT)
        .messages()
        .await
}

struct JsAcker(jetstream::Message);

#[async_trait::async_trait]
impl Acker for JsAcker {
    async fn ack(&self, sequence: u64) -> Result<(), BusError> {
        // A plain ack, not confirmed by the server: a lost one only brings the message back,
        // and the consumers judge a message again without effect. Confirming every ack would
        // cost a round trip per event.
        self.0
            .ack_with(AckKind::Ack)
            .await
            .map_err(|e| BusError::Ack {
                sequence,
                reason: e.to_string(),
            })
    }
}

impl JetStreamBus {
    /// The durable consumer `config`, created as `wanted` when missing (or, with
    /// [`Provision::Bind`], bound to as it is), pull or push as `wanted` is: the one place
    /// both delivery modes find their consumer.
    async fn durable<C>(
        &self,
        config: &DurableConfig,
        wanted: C,
    ) -> Result<consumer::Consumer<C>, BusError>
    where
        C: consumer::FromConsumer + consumer::IntoConsumerConfig,
    {
        match self.provision {
            Provision::Create => self
                .stream
                .get_or_create_consumer(&config.name, wanted)
                .await
                .map_err(|e| consumer_error(config, &e)),
            Provision::Bind => self.stream.get_consumer(&config.name).await.map_err(|e| {
                consumer_error(
                    config,
                    &format!(
                        "{e}; this service only binds to its durable consumers: \
                         `shogi-arbiter streams apply` makes them"
                    ),
                )
            }),
        }
    }

    /// The messages of the durable push consumer `config` ([`DeliveryMode::Push`]), created
    /// when missing (or, with [`Provision::Bind`], bound to).
    async fn push_messages(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<jetstream::Message, String>>, BusError> {
        let consumer = self.durable(config, push_config(config)).await?;
        let found = &consumer.cached_info().config;
        self.say_differences(config, found);
        let Some(deliver) = found.deliver_subject.clone() else {
            return Err(consumer_error(
                config,
                &"a push consumer without a deliver subject",
            ));
        };
        let subscriber = match found.deliver_group.clone() {
            Some(group) => self.client.queue_subscribe(deliver, group).await,
            None => self.client.subscribe(deliver).await,
        }
        .map_err(|e| consumer_error(config, &e))?;
        Ok(pushed(
            self.client.clone(),
            self.js.clone(),
            subscriber,
            found.idle_heartbeat,
        ))
    }

    /// The messages of the durable pull consumer `config` ([`DeliveryMode::Pull`]), created
    /// when missing (or, with [`Provision::Bind`], bound to).
    async fn pull_messages(
        &self,
        config: &DurableConfig,
    ) -> Result<BoxStream<'static, Result<jetstream::Message, String>>, BusError> {
        let consumer = self.durable(config, durable_config(config)).await?;
        self.say_differences(config, &consumer.cached_info().config);
        let messages = pull(&consumer)
            .await
            .map_err(|e| consumer_error(config, &e))?
            .map(|m| m.map_err(|e| e.to_string()))
            .boxed();
        Ok(messages)
    }
}

impl JetStreamBus {
    /// In bind mode, logs the settings of this service's (its ack wait, say) that the durable
    /// consumer `config`, found as `found`, does not have: bound, not changed, and said rather
    /// than silently ignored.
    fn say_differences(&self, config: &DurableConfig, found: &consumer::Config) {
        if self.provision != Provision::Bind {
            return;
        }
        let differ = differences(found, &wanted_config(config));
        if !differ.is_empty() {
            tracing::warn!(
                consumer = %config.name,
                settings = differ.join(", "),
                "the durable consumer is not as this service is configured, and is used \
                 as it is (ARBITER_STREAMS=bind); `shogi-arbiter streams apply` with the \
                 same settings changes it"
            );
        }
    }
}

/// A failure of the durable consumer `config`.
fn consumer_error(config: &DurableConfig, e: &dyn std::fmt::Display) -> BusError {
    BusError::Consumer {
        name: config.name.clone(),
        reason: e.to_string(),
    }
}
