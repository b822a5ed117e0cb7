//! What the pipeline benchmarks share: the random games they play, their move events on the
//! bus, and percentiles.

// Each benchmark uses a part of this module.
#![allow(dead_code)]

use prost::Message as _;
use shogi_adjudication::{Game, Ruleset};
use shogi_proto::subject;
use shogi_proto::v1 as pb;
use shogi_rules::{Move, Position};
use std::time::Duration;

/// Plies of every random game.
pub const PLIES: usize = 100;

/// SplitMix64: a deterministic source for the random games.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A random legal game of [`PLIES`] plies that does not end before its last ply under the
/// online rules (with no cap, it does not end at all).
pub fn random_game(rng: &mut Rng) -> Vec<Move> {
    'again: loop {
        let mut game = Game::startpos(Ruleset::online());
        let mut moves = Vec::with_capacity(PLIES);
        while moves.len() < PLIES {
            let legal = game.position().legal_moves();
            if legal.is_empty() {
                continue 'again;
            }
            let mv = legal
                .iter()
                .copied()
                .nth(rng.next() as usize % legal.len())
                .expect("a legal move");
            if game.play(mv).expect("legal").verdict.is_some() {
                continue 'again;
            }
            moves.push(mv);
        }
        return moves;
    }
}

/// The `p` quantile of `sorted` (zero when empty).
pub fn pct(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The `MoveAccepted` events of game `id` playing `moves` from the start position.
pub fn events(id: &str, moves: &[Move]) -> Vec<pb::MoveAccepted> {
    let mut pos = Position::startpos();
    moves
        .iter()
        .enumerate()
        .map(|(i, &mv)| {
            pos.play_unchecked(mv);
            pb::MoveAccepted {
                received_unix_ms: 0,
                comment: String::new(),
                game_id: id.to_owned(),
                ply: i as u32 + 1,
                usi: mv.to_string(),
                sfen_after: pos.to_sfen(),
                gives_check: pos.in_check(),
                position_hash: pos.hash(),
            }
        })
        .collect()
}

/// Publishes each game's `GameCreated` and move events to the games' stream (prefixing the
/// game ids with `prefix`), acknowledgements awaited in batches; returns the move events' count.
pub async fn publish_games(
    js: &async_nats::jetstream::Context,
    prefix: &str,
    games: &[Vec<Move>],
) -> usize {
    let mut acks = Vec::new();
    let mut n = 0;
    for (g, moves) in games.iter().enumerate() {
        let id = format!("{prefix}{g}");
        let created = pb::GameCreated {
            game_id: id.clone(),
            ruleset: Some(pb::Ruleset {
                preset: "online".into(),
                overrides: None,
            }),
            start_sfen: Position::startpos().to_sfen(),
            ..Default::default()
        };
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(
            shogi_proto::MESSAGE_TYPE_HEADER,
            shogi_proto::GAME_CREATED_TYPE,
        );
        acks.push(
            js.publish_with_headers(
                subject::created(&id),
                headers,
                created.encode_to_vec().into(),
            )
            .await
            .unwrap(),
        );
        for e in events(&id, moves) {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert(
                shogi_proto::MESSAGE_TYPE_HEADER,
                shogi_proto::MOVE_ACCEPTED_TYPE,
            );
            acks.push(
                js.publish_with_headers(subject::moves(&id), headers, e.encode_to_vec().into())
                    .await
                    .unwrap(),
            );
            n += 1;
        }
        if acks.len() > 2000 {
            for a in acks.drain(..) {
                a.await.unwrap();
            }
        }
    }
    for a in acks {
        a.await.unwrap();
    }
    n
}

/// The stream sequence and store time (nats-server's wall clock) of the last message on
/// `subject`, if there is one: where a slow verdict's time went, hop by hop.
pub async fn last_stored(
    stream: &async_nats::jetstream::stream::Stream,
    subject: &str,
) -> Option<(u64, std::time::SystemTime)> {
    stream
        .get_last_raw_message_by_subject(subject)
        .await
        .ok()
        .map(|m| (m.sequence, std::time::SystemTime::from(m.time)))
}
