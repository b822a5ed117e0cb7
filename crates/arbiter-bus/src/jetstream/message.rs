//! A JetStream message as the bus's [`Message`]: its type and headers from the JetStream
//! headers.

use crate::{GUARDED_ID_HEADER, MESSAGE_TYPE_HEADER, Message};
use async_nats::jetstream;

/// The message's type, from the bus's type header.
pub(super) fn message_type(headers: Option<&async_nats::HeaderMap>) -> Option<String> {
    headers
        .and_then(|h| h.get(MESSAGE_TYPE_HEADER))
        .map(|v| v.as_str().to_owned())
}

/// The headers a message was published with, without the bus's own, in name order.
pub(super) fn headers(headers: Option<&async_nats::HeaderMap>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = headers
        .into_iter()
        .flat_map(|h| h.iter())
        .filter(|(name, _)| {
            let name: &str = name.as_ref();
            !name.starts_with("Nats-") && name != MESSAGE_TYPE_HEADER && name != GUARDED_ID_HEADER
        })
        .flat_map(|(name, values)| {
            values
                .iter()
                .map(move |v| (name.to_string(), v.as_str().to_owned()))
        })
        .collect();
    out.sort();
    out
}

/// A message read from the stream by a message get.
pub(super) fn from_raw(m: jetstream::message::StreamMessage) -> Message {
    Message {
        subject: m.subject.to_string(),
        sequence: m.sequence,
        message_type: message_type(Some(&m.headers)),
        headers: headers(Some(&m.headers)),
        time: Some(m.time.into()),
        payload: m.payload,
    }
}
