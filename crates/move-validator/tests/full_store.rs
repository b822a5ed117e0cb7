//! A full store answered with a clear error, never a stall: on a nats-server whose
//! `max_file_store` is tiny, games are created until JetStream refuses a write; that call, and
//! every write after it, is UNAVAILABLE (BUS_UNAVAILABLE, the limit named: `store`) with a
//! message naming the store's limit, each answered within a deadline.

mod common;

use common::Running;
use move_validator::Config;
use shogi_proto::v1 as pb;
use test_support::{Deadline, NatsServer};

const DEADLINE: Deadline = Deadline::secs(20);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_store_is_a_clear_unavailable_not_a_stall() {
    let nats = NatsServer::start_with_config("jetstream { max_file_store: 256KB }\n");
    let mut v = Running::start(Config::new(nats.url())).await;
    let client = &mut v.client;
    let mut created = 0;
    let mut refused = Vec::new();
    for i in 0..10_000 {
        let asked = tokio::time::timeout(
            DEADLINE.get(),
            client.create_game(pb::CreateGameRequest {
                ruleset: None,
                start: None,
                game_id: format!("full-{i:05}-{}", "x".repeat(40)),
                strict: false,
            }),
        )
        .await
        .unwrap_or_else(|_| panic!("create {i} not answered within {DEADLINE:?}: a stall"));
        match asked {
            Ok(_) => created += 1,
            // Still connecting to the server.
            Err(e) if created == 0 && !e.message().contains("store") => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            Err(e) => {
                refused.push(e);
                if refused.len() == 3 {
                    break;
                }
            }
        }
    }
    eprintln!("{created} games created before the store was full");
    assert!(created > 0, "nothing created: {refused:?}");
    assert_eq!(refused.len(), 3, "the store never filled");
    for e in &refused {
        assert_eq!(e.code(), tonic::Code::Unavailable, "{e:?}");
        assert!(
            e.message().contains("store is full") && e.message().contains("max_file_store"),
            "the message does not name the store's limit: {e:?}"
        );
        let info = tonic_types::StatusExt::get_details_error_info(e).expect("an ErrorInfo");
        assert_eq!(info.reason, "BUS_UNAVAILABLE", "{info:?}");
        assert_eq!(
            info.metadata.get("limit").map(String::as_str),
            Some("store")
        );
    }
}
