//! The operator's view, `shogi.v1.Operator` (`proto/shogi/v1/operator.proto`): live and ended
//! games, verdicts per minute by kind, the last calls answered with an error, and the events
//! set aside, for the console's operator page. Only a credential with the `operate` scope may
//! call it (`auth.rs`): the error list names every platform's games.
//!
//! It keeps no books of its own on the games: it reads the bus forward from where its last call
//! stopped (the creation events, the verdicts the validator recorded on `.result` with the bus's
//! time, the copies set aside), so a call costs what was stored since the one before. The one
//! thing the bus does not have is the errors this instance answered: [`ErrorLog`] keeps the last
//! few, recorded by a layer around every route ([`recording_errors`]).
//!
//! What a call reads is applied message by message, each cursor moved past a message only once
//! it is applied, so a call given up at any await (a client's deadline, a cancel) leaves the
//! view as it was plus what it applied. Every part of it is bounded whatever the bus holds:
//! - live games by id, at most [`LIVE_MAX`]; creations past it are counted without their ids;
//! - verdicts as counts per minute and [`ResultCode`], for [`MINUTES_MAX`] minutes: at most 61
//!   minutes times 12 codes, named by the code (never by a text read from the bus);
//! - the last [`LAST`] errors and [`LAST`] copies set aside, each text cut to [`TEXT_MAX`]
//!   bytes.

use crate::error::Error;
use arbiter_bus::{Bus, Message};
use shogi_adjudication::ResultCode;
use shogi_proto::convert::{MAX_GAME_ID_LEN, result_code_from_pb};
use shogi_proto::event::{decode_created, decode_verdict};
use shogi_proto::subject::{self, Kind};
use shogi_proto::v1 as pb;
use shogi_proto::{ASIDE_DETAIL_HEADER, ASIDE_REASON_HEADER, ASIDE_SEQ_HEADER};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use tonic::service::Routes;
use tonic::{Request, Response, Status};

/// How many errors and set-aside entries an answer lists.
const LAST: usize = 20;

/// The longest text (an error's message, a set-aside entry's reason and detail) an answer
/// carries, in bytes: the bus and the clients write these texts, and an answer must fit the
/// smallest client's limit whatever they wrote.
const TEXT_MAX: usize = 512;

/// How many live games the view knows by id; past it, creations are counted without their id
/// (and a verdict of a game not known by id ends one of those).
const LIVE_MAX: usize = 200_000;

/// How many messages of one kind a call reads at most, so that the first call on a long-lived
/// bus answers in bounded time; the next calls read on.
const SCAN_MAX: usize = 5_000;

/// The longest window of verdicts an answer counts, in minutes, and the default one.
const MINUTES_MAX: u32 = 60;
const MINUTES_DEFAULT: u32 = 10;

/// The last calls answered with an error at once, newest last, and the count of the calls
/// refused before they reached a service (no or a wrong credential, out of scope, over quota),
/// which are counted and never listed: an attacker's calls must not push out the real errors.
#[derive(Debug, Clone, Default)]
pub(crate) struct ErrorLog {
    log: Arc<Mutex<VecDeque<pb::CallError>>>,
    refused: Arc<std::sync::atomic::AtomicU64>,
}

impl ErrorLog {
    fn push(&self, error: pb::CallError) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if log.len() == LAST {
            log.pop_front();
        }
        log.push_back(error);
    }

    fn refused(&self) {
        self.refused
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    fn newest_first(&self) -> Vec<pb::CallError> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.iter().rev().cloned().collect()
    }

    fn refused_count(&self) -> u64 {
        self.refused.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// `routes` with every call whose answer is an error status in its headers (a unary error, a
/// stream refused before it started) recorded in `log`, under the method's name in the contract
/// (`unknown` for any other path) and the credential that made it. A call the credentials
/// layer refused (`auth.rs`) is counted, not listed.
pub(crate) fn recording_errors(routes: Routes, log: ErrorLog) -> Routes {
    let router = routes
        .prepare()
        .into_axum_router()
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let log = log.clone();
                async move {
                    let method = crate::calls::contract_method(req.uri().path());
                    let response = next.run(req).await;
                    if let Some(status) = Status::from_header_map(response.headers())
                        && status.code() != tonic::Code::Ok
                    {
                        let caller = response.extensions().get::<crate::auth::Caller>();
                        match caller {
                            Some(crate::auth::Caller::Refused) => log.refused(),
                            _ => log.push(pb::CallError {
                                unix_ms: unix_ms(SystemTime::now()),
                                method: method.to_owned(),
                                code: arbiter_telemetry::metrics::status_name(status.code())
                                    .to_owned(),
                                message: cut(status.message()),
                                credential: match caller {
                                    Some(crate::auth::Caller::Admitted(name)) => name.to_string(),
                                    _ => String::new(),
                                },
                            }),
                        }
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
    /// The next stream sequence to read creation events, recorded verdicts and copies set
    /// aside from: each moved past a message once it is applied.
    created_from: u64,
    result_from: u64,
    aside_from: u64,
    /// Games created and without a recorded verdict, by id, at most [`LIVE_MAX`].
    live: HashSet<String>,
    /// Creations past [`LIVE_MAX`], live and not known by id.
    untracked: u64,
    /// Games with a recorded verdict.
    ended: u64,
    /// The recorded verdicts of the last [`MINUTES_MAX`] minutes: per minute (its start, Unix
    /// ms), a count per [`ResultCode`] in the order of [`ResultCode::ALL`].
    minutes: BTreeMap<i64, [u32; ResultCode::ALL.len()]>,
    /// The last copies set aside, newest last.
    aside: VecDeque<pb::SetAsideEntry>,
}

impl Scan {
    fn new() -> Scan {
        Scan {
            created_from: 1,
            result_from: 1,
            aside_from: 1,
            live: HashSet::new(),
            untracked: 0,
            ended: 0,
            minutes: BTreeMap::new(),
            aside: VecDeque::new(),
        }
    }

    /// A creation event: its game is live (an event naming another game, or garbage, is
    /// nobody's game).
    fn created(&mut self, msg: &Message) {
        let Ok(game) = decode_created(&msg.payload) else {
            return;
        };
        if subject::created(&game.game_id) != msg.subject {
            return;
        }
        if self.live.len() < LIVE_MAX {
            self.live.insert(game.game_id);
        } else {
            self.untracked += 1;
        }
    }

    /// An entry on a game's `.result`: the verdict the validator checked and recorded. It ends
    /// a live game once; an entry that is not a verdict of a known code, names another game,
    /// or comes for a game not live (a second entry) changes nothing.
    fn result(&mut self, msg: &Message, now: SystemTime) {
        let Some((game, Kind::Result)) = subject::parse(&msg.subject) else {
            return;
        };
        let Ok(verdict) = decode_verdict(msg.message_type.as_deref(), &msg.payload) else {
            return;
        };
        let Some(code) = result_code_from_pb(verdict.code) else {
            return;
        };
        if verdict.game_id != game {
            return;
        }
        if !self.live.remove(game) {
            if self.untracked == 0 {
                return;
            }
            self.untracked -= 1;
        }
        self.ended += 1;
        let at = unix_ms(msg.time.unwrap_or(now));
        let minute = at / 60_000 * 60_000;
        let index = ResultCode::ALL
            .iter()
            .position(|c| *c == code)
            .unwrap_or_default();
        self.minutes.entry(minute).or_default()[index] += 1;
    }

    fn aside(&mut self, msg: &Message, now: SystemTime) {
        if self.aside.len() == LAST {
            self.aside.pop_front();
        }
        self.aside.push_back(aside_entry(msg, now));
    }

    /// Forgets the minutes before the window.
    fn expire(&mut self, now: SystemTime) {
        let first = unix_ms(now) / 60_000 * 60_000 - 60_000 * i64::from(MINUTES_MAX);
        self.minutes = self.minutes.split_off(&first);
    }
}

impl Overview {
    pub(crate) fn new(bus: Bus, errors: ErrorLog) -> Overview {
        Overview {
            bus,
            errors,
            scan: tokio::sync::Mutex::new(Scan::new()),
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

        // Every creation stored by now is read below unless the call stops at SCAN_MAX.
        let stored = bus.state().await.map_err(Error::unavailable)?.last_sequence;
        // Each message applied, then its cursor moved past it: a call dropped at an await
        // keeps what it applied and nothing more.
        let mut all_created = false;
        for _ in 0..SCAN_MAX {
            let Some(msg) = next(bus, subject::ALL_CREATED, scan.created_from).await? else {
                all_created = true;
                break;
            };
            scan.created(&msg);
            scan.created_from = msg.sequence + 1;
        }
        // A game's verdict is stored after its creation: verdicts are read only where every
        // creation before them has been, so that none comes before the game it ends.
        let horizon = if all_created {
            scan.created_from.max(stored + 1)
        } else {
            scan.created_from
        };
        for _ in 0..SCAN_MAX {
            let Some(msg) = next(bus, subject::ALL_RESULTS, scan.result_from).await? else {
                break;
            };
            if msg.sequence >= horizon {
                break;
            }
            scan.result(&msg, now);
            scan.result_from = msg.sequence + 1;
        }
        scan.expire(now);
        // The embedded bus holds the copies set aside; a JetStream bus reads only the games'
        // stream, where there are none (and a failure to read them is no reason to fail).
        for _ in 0..SCAN_MAX {
            let Ok(Some(msg)) = next(bus, shogi_proto::ASIDE_SUBJECTS, scan.aside_from).await
            else {
                break;
            };
            scan.aside(&msg, now);
            scan.aside_from = msg.sequence + 1;
        }

        let this_minute = unix_ms(now) / 60_000 * 60_000;
        let first_minute = this_minute - 60_000 * (i64::from(minutes) - 1);
        let per_minute = scan
            .minutes
            .range(first_minute..)
            .flat_map(|(minute, counts)| {
                ResultCode::ALL
                    .iter()
                    .zip(counts)
                    .filter(|(_, n)| **n > 0)
                    .map(|(code, n)| pb::VerdictMinute {
                        minute_unix_ms: *minute,
                        code_name: code.as_str().to_owned(),
                        count: *n,
                    })
            })
            .collect::<Vec<_>>();
        let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let live = scan.live.len() as u64 + scan.untracked;
        Ok(pb::GetOverviewResponse {
            now_unix_ms: unix_ms(now),
            live_games: count(live),
            ended_games: count(scan.ended),
            verdicts: per_minute,
            errors: self.errors.newest_first(),
            set_aside: scan.aside.iter().rev().cloned().collect(),
            set_aside_counts: crate::GAME_LOG
                .aside()
                .counts()
                .into_iter()
                .map(|(reason, count)| pb::SetAsideCount {
                    reader: crate::GAME_LOG.name().to_owned(),
                    reason: reason.to_owned(),
                    count,
                })
                .collect(),
            refused_calls: self.errors.refused_count(),
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

/// The first message matching `filter` at or after `from`.
async fn next(bus: &Bus, filter: &str, from: u64) -> Result<Option<Message>, Error> {
    bus.next(filter, from).await.map_err(Error::unavailable)
}

/// The game id of a subject `shogi.game.<id>.<...>` or `shogi.aside.<id>`, cut to the longest
/// game id.
fn game_of(subject: &str) -> String {
    let id = subject::parse(subject)
        .map(|(id, _)| id)
        .or_else(|| subject.strip_prefix("shogi.aside."))
        .unwrap_or(subject);
    cut_to(id, MAX_GAME_ID_LEN)
}

fn aside_entry(msg: &Message, now: SystemTime) -> pb::SetAsideEntry {
    let header = |name: &str| {
        msg.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| cut(v))
            .unwrap_or_default()
    };
    pb::SetAsideEntry {
        game_id: game_of(&msg.subject),
        sequence: header(ASIDE_SEQ_HEADER).parse().unwrap_or(0),
        reason: header(ASIDE_REASON_HEADER),
        detail: header(ASIDE_DETAIL_HEADER),
        unix_ms: unix_ms(msg.time.unwrap_or(now)),
    }
}

/// `text` cut to [`TEXT_MAX`] bytes.
fn cut(text: &str) -> String {
    cut_to(text, TEXT_MAX)
}

/// `text` cut to at most `max` bytes, on a character boundary.
fn cut_to(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
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
        assert_eq!(
            game_of(&format!("shogi.aside.{}", "x".repeat(5000))).len(),
            64
        );
    }

    #[test]
    fn texts_are_cut_on_a_character_boundary() {
        assert_eq!(cut_to("王手", 4), "王");
        assert_eq!(cut(&"é".repeat(1000)).len(), TEXT_MAX);
    }
}
