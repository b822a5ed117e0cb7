//! Publishing: one publish, and what the server's answer says of it (stored, a duplicate, a
//! conflict, refused, unknown, or still in flight on the server and sent again).

use super::JetStreamBus;
use crate::{BusError, EventBus, GUARDED_ID_HEADER, MESSAGE_TYPE_HEADER, Outgoing, Published};
use async_nats::jetstream::{
    self, ErrorCode, context::PublishErrorKind, message::PublishMessage,
    stream::RawMessageErrorKind,
};
use std::time::Duration;

impl JetStreamBus {
    /// Publishes `out` (a publish, without its span).
    ///
    /// A replicated stream's leader answers the retry of a publish it has proposed but not yet
    /// stored (its replicas have not confirmed it) as a duplicate at sequence 0 (nats-server
    /// stages the message id before the proposal commits; 2.14 and later answer it with error
    /// 10158, "duplicate message id is in process"), or, where it checks the expected sequence
    /// first, as a conflict with nothing stored after that sequence. None is an outcome: the caller would read a game that is not there yet (issue 18: a CreateGame
    /// answered NOT_FOUND with a node killed). The publish is sent again after a pause until the
    /// server answers with a sequence or a real conflict, for at most [`IN_FLIGHT_PATIENCE`];
    /// then the outcome is unknown, as for a publish with no answer. So is any later answer
    /// that is not an outcome ([`until_stored`]).
    pub(super) async fn store(&self, out: Outgoing) -> Result<Published, BusError> {
        until_stored(&out.msg_id, IN_FLIGHT_PATIENCE, || self.store_once(&out)).await
    }

    /// One publish of `out` and what the server's answer says of it.
    async fn store_once(&self, out: &Outgoing) -> Result<Stored, BusError> {
        let mut msg = PublishMessage::build()
            .payload(out.payload.clone())
            .header(MESSAGE_TYPE_HEADER, out.message_type);
        // A guarded write needs no duplicate window: its expected sequence refuses a second
        // copy at any time, and the refusal is read back by the id ([`GUARDED_ID_HEADER`]),
        // which the server does not keep for 120 s. Only an unguarded write is deduplicated by
        // the server (`Nats-Msg-Id`).
        msg = match out.expected_subject_seq {
            Some(_) => msg.header(GUARDED_ID_HEADER, out.msg_id.as_str()),
            None => msg.message_id(out.msg_id.as_str()),
        };
        for (k, v) in &out.headers {
            msg = msg.header(k.as_str(), v.as_str());
        }
        if let Some(seq) = out.expected_subject_seq {
            msg = msg.expected_last_subject_sequence(seq);
        }
        let subject = out.subject.as_str();
        let ack = match self.js.send_publish(subject.to_owned(), msg).await {
            Ok(future) => future.await,
            Err(e) => Err(e),
        };
        match ack {
            // A message id staged by a publish not yet stored.
            Ok(ack) if ack.duplicate && ack.sequence == 0 => Ok(Stored::InFlight(
                "the server holds an earlier publish of this message id, not yet stored",
            )),
            Ok(ack) if ack.duplicate => Ok(Stored::Done(Published::Duplicate(ack.sequence))),
            Ok(ack) => Ok(Stored::Done(Published::Stored(ack.sequence))),
            // 2.14 and later say so in so many words (10158, "duplicate message id is in
            // process").
            Err(e) if server_error(&e) == Some(ErrorCode::STREAM_DUPLICATE_MESSAGE_CONFLICT) => {
                Ok(Stored::InFlight(
                    "the server holds an earlier publish of this message id, in process",
                ))
            }
            // nats-server 2.12 checks the expected sequence before the message id, so the
            // retry of a publish that was stored is refused as a conflict, where 2.10 answered
            // it as a duplicate. Whether ours was stored is plain to see: with an expected
            // sequence, it is the subject's first message after that sequence. On a cluster,
            // 2.11 and later refuse a publish to a subject while another publish with an
            // expected sequence is in process for it (10164, "wrong last sequence", without a
            // sequence): ours sent again, or another writer's for the same ply. It is read the
            // same way: nothing after the expected sequence yet is in flight, and the wait
            // ends as a duplicate (ours) or a conflict (theirs), never as a refusal.
            Err(e)
                if e.kind() == PublishErrorKind::WrongLastSequence
                    || server_error(&e) == Some(ErrorCode::STREAM_WRONG_LAST_SEQUENCE_CONSTANT) =>
            {
                let Some(expected) = out.expected_subject_seq else {
                    return Ok(Stored::Done(Published::Conflict));
                };
                self.after_wrong_sequence(subject, expected, &out.msg_id)
                    .await
            }
            // No answer, or the connection lost while waiting for it: it may have been stored.
            // So may one the stream's store was closed under (10077, "stream store closed",
            // while the stream is reset or its leader changes): the entry its Raft group
            // committed is stored when it is applied again. Other store failures under the same
            // code (10077, "maximum messages exceeded") are refusals.
            Err(e)
                if matches!(
                    e.kind(),
                    PublishErrorKind::TimedOut | PublishErrorKind::BrokenPipe
                ) || store_closed(&e) =>
            {
                Err(BusError::Publish {
                    msg_id: out.msg_id.clone(),
                    reason: e.to_string(),
                })
            }
            // The server's answer is a refusal (a full store, a limit of the stream, no stream
            // for the subject), or the publish was never sent: nothing was stored, and saying
            // "outcome unknown" would have a client retry it for ever (issue 20).
            Err(e) => Err(BusError::PublishRefused {
                msg_id: out.msg_id.clone(),
                reason: e.to_string(),
            }),
        }
    }

    /// What a refusal for a wrong expected sequence means: ours stored before (a duplicate), a
    /// message of someone else's stored after `expected` (a conflict), or nothing stored after
    /// it though the subject's last message is the one expected: a publish to the subject
    /// proposed and not yet stored, ours or another's (in flight); or a last message past
    /// `expected` that the read after `expected` did not find (a replica behind: read again,
    /// in flight). A subject whose last message is older than `expected`, or gone, is a
    /// conflict (purged: the writer's copy is stale).
    async fn after_wrong_sequence(
        &self,
        subject: &str,
        expected: u64,
        msg_id: &str,
    ) -> Result<Stored, BusError> {
        let read_error = |reason: String| BusError::Read {
            filter: subject.to_owned(),
            reason,
        };
        match self
            .stream
            .raw_message_builder()
            .sequence(expected + 1)
            .next_by_subject(subject.to_owned())
            .send()
            .await
        {
            Ok(m) => {
                let ours = [
                    GUARDED_ID_HEADER,
                    async_nats::header::NATS_MESSAGE_ID.as_ref(),
                ]
                .iter()
                .any(|h| m.headers.get(*h).is_some_and(|id| id.as_str() == msg_id));
                return Ok(Stored::Done(if ours && m.subject.as_str() == subject {
                    Published::Duplicate(m.sequence)
                } else {
                    Published::Conflict
                }));
            }
            Err(e) if matches!(e.kind(), RawMessageErrorKind::NoMessageFound) => {}
            Err(e) => return Err(read_error(e.to_string())),
        }
        let last = EventBus::last(self, subject)
            .await?
            .map_or(0, |m| m.sequence);
        Ok(match last.cmp(&expected) {
            std::cmp::Ordering::Equal => Stored::InFlight(
                "the server refused the expected sequence with a publish to the subject not yet stored",
            ),
            // Something is stored after the expected entry, yet the read of the entry after it
            // found nothing: the two reads were answered by servers at different points (a
            // replica behind its leader). Which writer's it is is read again: a guarded write
            // carries no message id the server could answer a retry's duplicate by.
            std::cmp::Ordering::Greater => Stored::InFlight(
                "the subject's entry after the expected sequence is stored but not yet readable here",
            ),
            std::cmp::Ordering::Less => Stored::Done(Published::Conflict),
        })
    }
}

/// Sends a publish by `attempt` until the server answers with an outcome, while it answers that
/// an earlier send is still in flight, for at most `patience`.
///
/// Once one send was in flight, no later answer can say that the publish was not stored: a
/// refusal (no stream leader, a leader that lost its quorum) or a failed read speaks only of
/// that send, and the earlier one may still be stored when its Raft entry commits (a replica
/// that had it can be the next leader). Those answers are then "outcome unknown"
/// ([`BusError::Publish`]), like the patience running out; before any send was in flight, a
/// refusal is one.
async fn until_stored<F, Fut>(
    msg_id: &str,
    patience: Duration,
    mut attempt: F,
) -> Result<Published, BusError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Stored, BusError>>,
{
    let deadline = tokio::time::Instant::now() + patience;
    let mut pause = Duration::from_millis(10);
    let mut in_flight: Option<&'static str> = None;
    loop {
        let why = match (attempt().await, in_flight) {
            (Ok(Stored::Done(published)), _) => return Ok(published),
            (Ok(Stored::InFlight(why)), _) => why,
            (Err(e @ BusError::Publish { .. }), _) | (Err(e), None) => return Err(e),
            (Err(e), Some(earlier)) => {
                return Err(BusError::Publish {
                    msg_id: msg_id.to_owned(),
                    reason: format!(
                        "{e}, after an earlier send was in flight ({earlier}): it may yet be stored"
                    ),
                });
            }
        };
        in_flight = Some(why);
        if tokio::time::Instant::now() + pause > deadline {
            return Err(BusError::Publish {
                msg_id: msg_id.to_owned(),
                reason: format!("{why}, still after {patience:?}: it may yet be stored"),
            });
        }
        tracing::debug!(
            msg_id,
            why,
            "publish in flight on the server: sent again after a pause"
        );
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(500));
    }
}

/// Whether the server answered `e` because the stream's store was closed under the write.
fn store_closed(e: &jetstream::context::PublishError) -> bool {
    server_error(e) == Some(ErrorCode::STREAM_STORE_FAILED)
        && e.to_string().contains("store closed")
}

/// The JetStream error code of the server's answer `e` carries, if it carries one.
fn server_error(e: &jetstream::context::PublishError) -> Option<ErrorCode> {
    std::error::Error::source(e)?
        .downcast_ref::<jetstream::Error>()
        .map(jetstream::Error::error_code)
}

/// What one publish did: an outcome, or not yet one.
enum Stored {
    Done(Published),
    /// The server is storing a publish of this message id or to this subject: why.
    InFlight(&'static str),
}

/// How long a publish waits for an earlier one of the same message, or to the same subject,
/// that the server has proposed to its replicas but not stored.
const IN_FLIGHT_PATIENCE: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    /// The error async-nats gives for the server's JSON answer `{"code", "err_code",
    /// "description"}`.
    fn answered(err_code: u64, description: &str) -> jetstream::context::PublishError {
        let server: jetstream::Error = serde_json::from_value(serde_json::json!({
            "code": 400,
            "err_code": err_code,
            "description": description,
        }))
        .expect("a JetStream error");
        jetstream::context::PublishError::with_source(PublishErrorKind::Other, server)
    }

    #[test]
    fn the_servers_answers_that_a_write_may_yet_land_are_told_from_refusals() {
        let in_process = answered(10158, "duplicate message id is in process");
        assert_eq!(
            server_error(&in_process),
            Some(ErrorCode::STREAM_DUPLICATE_MESSAGE_CONFLICT)
        );
        assert!(!store_closed(&in_process));
        assert!(store_closed(&answered(10077, "stream store closed")));
        // The same code for a full stream is a refusal.
        assert!(!store_closed(&answered(10077, "maximum messages exceeded")));
        assert_eq!(
            server_error(&jetstream::context::PublishError::new(
                PublishErrorKind::TimedOut
            )),
            None
        );
    }

    /// `until_stored` over `answers`, given one per send (a send past the last is in flight),
    /// with a patience of `patience_ms`; its result and how many sends it made.
    async fn sends(
        answers: Vec<Result<Stored, BusError>>,
        patience_ms: u64,
    ) -> (Result<Published, BusError>, usize) {
        let answers = std::sync::Mutex::new(std::collections::VecDeque::from(answers));
        let sent = std::sync::atomic::AtomicUsize::new(0);
        let result = until_stored("m-1", Duration::from_millis(patience_ms), || {
            sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let next = answers.lock().unwrap().pop_front();
            async move { next.unwrap_or(Ok(Stored::InFlight("still"))) }
        })
        .await;
        (result, sent.into_inner())
    }

    fn refused() -> Result<Stored, BusError> {
        Err(BusError::PublishRefused {
            msg_id: "m-1".into(),
            reason: "no responders".into(),
        })
    }

    #[tokio::test]
    async fn a_send_in_flight_is_sent_again_until_it_has_an_outcome() {
        let (result, sent) = sends(
            vec![
                Ok(Stored::InFlight("staged")),
                Ok(Stored::InFlight("staged")),
                Ok(Stored::Done(Published::Stored(7))),
            ],
            5_000,
        )
        .await;
        assert!(matches!(result, Ok(Published::Stored(7))), "{result:?}");
        assert_eq!(sent, 3);
    }

    #[tokio::test]
    async fn a_refusal_is_an_outcome_only_before_any_send_was_in_flight() {
        let (first, sent) = sends(vec![refused()], 5_000).await;
        assert!(
            matches!(first, Err(BusError::PublishRefused { .. })),
            "{first:?}"
        );
        assert_eq!(sent, 1);
        let (later, _) = sends(vec![Ok(Stored::InFlight("staged")), refused()], 5_000).await;
        assert!(
            matches!(&later, Err(BusError::Publish { msg_id, reason }) if msg_id == "m-1" && reason.contains("no responders")),
            "{later:?}"
        );
        let read = Err(BusError::Read {
            filter: "shogi.game.g.move.3".into(),
            reason: "timed out".into(),
        });
        let (after_read, _) = sends(vec![Ok(Stored::InFlight("staged")), read], 5_000).await;
        assert!(
            matches!(after_read, Err(BusError::Publish { .. })),
            "{after_read:?}"
        );
    }

    #[tokio::test]
    async fn a_send_still_in_flight_after_the_patience_has_no_known_outcome() {
        let started = std::time::Instant::now();
        let (result, sent) = sends(Vec::new(), 100).await;
        assert!(
            matches!(&result, Err(BusError::Publish { reason, .. }) if reason.contains("still after")),
            "{result:?}"
        );
        assert!(sent >= 2, "sent {sent} times");
        assert!(started.elapsed() >= Duration::from_millis(50));
    }
}
