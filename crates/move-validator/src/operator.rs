//! The operator's view, `shogi.v1.Operator` (`proto/shogi/v1/operator.proto`): live and ended
//! games, verdicts per minute by kind, the last calls answered with an error, and the events
//! set aside, for the console's operator page.
//!
//! It keeps no books of its own on the games: it reads the bus forward from where its last call
//! stopped (the creation events, the stored verdicts with the bus's time, the copies set aside),
//! so a call costs what was stored since the one before. The one thing the bus does not have is
//! the errors this instance answered: [`ErrorLog`] keeps the last few, recorded by a layer
//! around every route ([`recording_errors`]).

use crate::error::Error;
use arbiter_bus::{Bus, Message};
use shogi_proto::event::{decode_created, decode_verdict};
use shogi_proto::subject;
use shogi_proto::v1 as pb;
use shogi_proto::{ASIDE_DETAIL_HEADER, ASIDE_REASON_HEADER, ASIDE_SEQ_HEADER};
use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// How many errors and set-aside entries an answer lists.
const LAST: usize = 20;

/// How many messages of one kind a call reads at most, so that the first call on a long-lived
/// bus answers in bounded time; the next calls read on.
const SCAN_MAX: usize = 5_000;

/// The longest window of verdicts an answer counts, in minutes, and the default one.
const MINUTES_MAX: u32 = 60;
const MINUTES_DEFAULT: u32 = 10;

/// The last calls answered with an error at once, newest last.
#[derive(Debug, Clone, Default)]
pub(crate) struct ErrorLog(Arc<Mutex<VecDeque<pb::CallError>>>);

impl ErrorLog {
    fn push(&self, error: pb::CallError) {
        let mut log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if log.len() == LAST {
            log.pop_front();
        }
        log.push_back(error);
    }

    fn newest_first(&self) -> Vec<pb::CallError> {
        let log = self.0.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().rev().cloned().collect()
    }
}

/// `routes` with every call whose answer is an error status in its headers (a unary error, a
/// refused token, a stream refused before it started) recorded in `log`.
pub(crate) fn recording_errors(routes: Routes, log: ErrorLog) -> Routes {
    let router = routes
        .prepare()
        .into_axum_router()
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let log = log.clone();
                async move {
                    let method = req.uri().path().to_owned();
                    let response = next.run(req).await;
                    if let Some(status) = Status::from_header_map(response.headers())
                        && status.code() != tonic::Code::Ok
                    {
                        log.push(pb::CallError {
                            unix_ms: unix_ms(SystemTime::now()),
                            method,
                            code: arbiter_telemetry::metrics::status_name(status.code()).to_owned(),
                            message: status.message().to_owned(),
                        });
                    }
                    response
                }
            },
        ));
    Routes::from(router)
}

/// The service: the bus it reads and where its last reads stopped.
#[derive(Debug)]
pub(crate) struct Overview {
    bus: Bus,
    errors: ErrorLog,
    scan: tokio::sync::Mutex<Scan>,
}

/// What the calls so far have read.
#[derive(Debug)]
struct Scan {
    /// The next stream sequence to read creation events, verdicts and copies set aside from.
    created_from: u64,
    verdict_from: u64,
    aside_from: u64,
    created: HashSet<String>,
    ended: HashSet<String>,
    /// The verdicts of the last hour: when (Unix ms) and their code name, oldest first.
    verdicts: VecDeque<(i64, String)>,
    /// The last copies set aside, newest last.
    aside: VecDeque<pb::SetAsideEntry>,
}

impl Overview {
    pub(crate) fn new(bus: Bus, errors: ErrorLog) -> Overview {
        Overview {
            bus,
            errors,
            scan: tokio::sync::Mutex::new(Scan {
                created_from: 1,
                verdict_from: 1,
                aside_from: 1,
                created: HashSet::new(),
                ended: HashSet::new(),
                verdicts: VecDeque::new(),
                aside: VecDeque::new(),
            }),
        }
    }

    async fn overview(
        &self,
        req: pb::GetOverviewRequest,
    ) -> Result<pb::GetOverviewResponse, Error> {
        let minutes = match req.minutes {
            0 => MINUTES_DEFAULT,
            n if n <= MINUTES_MAX => n,
            n => {
                return Err(Error::invalid(
                    "minutes",
                    format!("{n} is more than {MINUTES_MAX}"),
                ));
            }
        };
        let now = SystemTime::now();
        let mut scan = self.scan.lock().await;
        let bus = &self.bus;

        let created = read_on(bus, &subject::created("*"), &mut scan.created_from).await?;
        for msg in created {
            if let Ok(game) = decode_created(&msg.payload)
                && subject::created(&game.game_id) == msg.subject
            {
                scan.created.insert(game.game_id);
            }
        }
        let verdicts = read_on(bus, &subject::verdict("*"), &mut scan.verdict_from).await?;
        for msg in verdicts {
            let Ok(verdict) = decode_verdict(msg.message_type.as_deref(), &msg.payload) else {
                continue;
            };
            let game = game_of(&msg.subject).to_owned();
            // `.verdict` holds one verdict per game; a repeated announcement counts once.
            if scan.ended.insert(game) {
                let at = unix_ms(msg.time.unwrap_or(now));
                scan.verdicts.push_back((at, verdict.code_name));
            }
        }
        let hour_ago = unix_ms(now - Duration::from_secs(60 * u64::from(MINUTES_MAX)));
        while scan.verdicts.front().is_some_and(|(at, _)| *at < hour_ago) {
            scan.verdicts.pop_front();
        }
        // The embedded bus holds the copies set aside; a JetStream bus reads only the games'
        // stream, where there are none (and a failure to read them is no reason to fail).
        if let Ok(aside) = read_on(bus, shogi_proto::ASIDE_SUBJECTS, &mut scan.aside_from).await {
            for msg in aside {
                if scan.aside.len() == LAST {
                    scan.aside.pop_front();
                }
                scan.aside.push_back(aside_entry(&msg, now));
            }
        }

        let this_minute = unix_ms(now) / 60_000 * 60_000;
        let first_minute = this_minute - 60_000 * (i64::from(minutes) - 1);
        let mut per_minute: Vec<pb::VerdictMinute> = Vec::new();
        for (at, code) in &scan.verdicts {
            let minute = at / 60_000 * 60_000;
            if minute < first_minute {
                continue;
            }
            match per_minute
                .iter_mut()
                .find(|m| m.minute_unix_ms == minute && &m.code_name == code)
            {
                Some(m) => m.count += 1,
                None => per_minute.push(pb::VerdictMinute {
                    minute_unix_ms: minute,
                    code_name: code.clone(),
                    count: 1,
                }),
            }
        }
        per_minute.sort_by(|a, b| {
            (a.minute_unix_ms, &a.code_name).cmp(&(b.minute_unix_ms, &b.code_name))
        });

        let ended = scan
            .created
            .iter()
            .filter(|g| scan.ended.contains(*g))
            .count();
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Ok(pb::GetOverviewResponse {
            now_unix_ms: unix_ms(now),
            live_games: count(scan.created.len() - ended),
            ended_games: count(ended),
            verdicts: per_minute,
            errors: self.errors.newest_first(),
            set_aside: scan.aside.iter().rev().cloned().collect(),
            set_aside_counts: crate::READER
                .counts()
                .into_iter()
                .map(|(reason, count)| pb::SetAsideCount {
                    reader: crate::READER.name().to_owned(),
                    reason: reason.to_owned(),
                    count,
                })
                .collect(),
        })
    }
}

#[tonic::async_trait]
impl pb::operator_server::Operator for Overview {
    async fn get_overview(
        &self,
        request: Request<pb::GetOverviewRequest>,
    ) -> Result<Response<pb::GetOverviewResponse>, Status> {
        self.overview(request.into_inner())
            .await
            .map(Response::new)
            .map_err(Status::from)
    }
}

/// The messages matching `filter` from `*from` on (at most [`SCAN_MAX`]), moving `*from` past
/// them.
async fn read_on(bus: &Bus, filter: &str, from: &mut u64) -> Result<Vec<Message>, Error> {
    let mut out = Vec::new();
    while out.len() < SCAN_MAX {
        let Some(msg) = bus.next(filter, *from).await.map_err(Error::unavailable)? else {
            break;
        };
        *from = msg.sequence + 1;
        out.push(msg);
    }
    Ok(out)
}

/// The game id of a subject `shogi.game.<id>.<...>` or `shogi.aside.<id>`.
fn game_of(subject: &str) -> &str {
    subject::parse(subject).map_or(subject, |(id, _)| id)
}

fn aside_entry(msg: &Message, now: SystemTime) -> pb::SetAsideEntry {
    let header = |name: &str| {
        msg.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    pb::SetAsideEntry {
        game_id: game_of(&msg.subject).to_owned(),
        sequence: header(ASIDE_SEQ_HEADER).parse().unwrap_or(0),
        reason: header(ASIDE_REASON_HEADER),
        detail: header(ASIDE_DETAIL_HEADER),
        unix_ms: unix_ms(msg.time.unwrap_or(now)),
    }
}

fn unix_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_ids_from_subjects() {
        assert_eq!(game_of("shogi.game.g-1.verdict"), "g-1");
        assert_eq!(game_of("shogi.aside.g_2"), "g_2");
    }
}
