//! The moves of every game of the front end on one SubmitMoves stream, as a platform that sends
//! many games' moves sends them: a message a move on a stream kept open, where a SubmitMove call
//! costs the arbiter and the front end a request and an answer of their own (BENCHMARKS.md, "A
//! message on a stream against a call").
//!
//! One task holds the stream. A move handed to it is sent with a tag of its own and answered
//! when the answer with that tag comes; its error comes back as the status SubmitMove would have
//! ended with (`shogi_proto::status::from_submit_move_error`), so that the caller cannot tell
//! the two apart. The stream is opened when a move comes and none is open; when it ends (the
//! arbiter draining or gone, the connection lost) every move still unanswered gets the stream's
//! end as its error, UNAVAILABLE unless the stream said otherwise, which [`crate::Arbiter`]
//! makes again as it makes a call again; the next move opens a new stream. An arbiter that does
//! not know SubmitMoves (UNIMPLEMENTED: a release before it) is sent single calls from then on.

use shogi_proto::v1 as pb;
use shogi_proto::v1::move_validator_client::MoveValidatorClient;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::{mpsc, oneshot};
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::Channel;
use tonic::{Code, Status};

/// A move's answer, as SubmitMove's.
pub(crate) type Answer = Result<pb::SubmitMoveResponse, Status>;

/// A move handed to the stream's task, and where its answer goes.
struct Job {
    request: pb::SubmitMoveRequest,
    answer: oneshot::Sender<Answer>,
}

/// The handle of the stream's task; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Mover {
    jobs: mpsc::UnboundedSender<Job>,
    /// The arbiter answered SubmitMoves UNIMPLEMENTED: single calls from then on.
    unsupported: Arc<AtomicBool>,
}

impl Mover {
    /// The task, on the client's channel, with the bearer `token`.
    pub(crate) fn start(
        client: MoveValidatorClient<Channel>,
        token: Option<MetadataValue<Ascii>>,
    ) -> Mover {
        let (jobs, queue) = mpsc::unbounded_channel();
        let unsupported = Arc::new(AtomicBool::new(false));
        tokio::spawn(run(client, token, queue, unsupported.clone()));
        Mover { jobs, unsupported }
    }

    /// Whether the arbiter has no SubmitMoves.
    pub(crate) fn unsupported(&self) -> bool {
        self.unsupported.load(Ordering::Relaxed)
    }

    /// `request` sent on the stream; its answer.
    pub(crate) async fn submit(&self, request: pb::SubmitMoveRequest) -> Answer {
        let (answer, answered) = oneshot::channel();
        if self.jobs.send(Job { request, answer }).is_err() {
            return Err(Status::unavailable("the front end's move stream is gone"));
        }
        answered
            .await
            .unwrap_or_else(|_| Err(Status::unavailable("the move stream dropped the move")))
    }
}

/// Opens a stream for each run of moves and answers them, until every handle is dropped.
async fn run(
    client: MoveValidatorClient<Channel>,
    token: Option<MetadataValue<Ascii>>,
    mut queue: mpsc::UnboundedReceiver<Job>,
    unsupported: Arc<AtomicBool>,
) {
    while let Some(first) = queue.recv().await {
        let (sent, requests) = mpsc::unbounded_channel();
        let mut request = tonic::Request::new(
            tokio_stream::wrappers::UnboundedReceiverStream::new(requests),
        );
        if let Some(t) = &token {
            request.metadata_mut().insert("authorization", t.clone());
        }
        let mut answers = match client.clone().submit_moves(request).await {
            Ok(answers) => answers.into_inner(),
            Err(status) => {
                if status.code() == Code::Unimplemented {
                    tracing::info!(
                        "the arbiter has no SubmitMoves; each move is a call of its own"
                    );
                    unsupported.store(true, Ordering::Relaxed);
                }
                let _ = first.answer.send(Err(status));
                continue;
            }
        };
        let mut pending: HashMap<u64, oneshot::Sender<Answer>> = HashMap::new();
        let mut tag = 0u64;
        let mut send = |job: Job, pending: &mut HashMap<u64, oneshot::Sender<Answer>>| {
            tag += 1;
            pending.insert(tag, job.answer);
            // The stream's body is read by the connection as HTTP/2 lets it; a closed one
            // shows as the answers' end below.
            let _ = sent.send(pb::SubmitMovesRequest {
                tag,
                r#move: Some(job.request),
            });
        };
        send(first, &mut pending);
        let ended = loop {
            tokio::select! {
                job = queue.recv() => match job {
                    Some(job) => send(job, &mut pending),
                    // Every handle is gone: the front end stopped.
                    None => return,
                },
                answer = answers.message() => match answer {
                    Ok(Some(a)) => {
                        if let Some(to) = pending.remove(&a.tag) {
                            let _ = to.send(answer_of(a.answer));
                        }
                    }
                    Ok(None) => break Status::unavailable("the arbiter ended the move stream"),
                    Err(status) => break status,
                },
            }
        };
        if !pending.is_empty() {
            tracing::warn!(moves = pending.len(), error = %ended, "the move stream ended under moves; they are made again");
        }
        for (_, to) in pending.drain() {
            let _ = to.send(Err(ended.clone()));
        }
    }
}

/// A stream answer as SubmitMove's answer or error.
fn answer_of(answer: Option<pb::submit_moves_response::Answer>) -> Answer {
    match answer {
        Some(pb::submit_moves_response::Answer::Submitted(s)) => Ok(s),
        Some(pb::submit_moves_response::Answer::Error(e)) => {
            Err(shogi_proto::status::from_submit_move_error(&e))
        }
        None => Err(Status::internal("a stream answer without an answer")),
    }
}
