"""A platform listening to the arbiter's verdicts on NATS, processing each game's verdict once.

Which subject (proto/shogi/v1/bus.proto, deploy/STREAMS.md "What a platform can rely on"):

- `shogi.game.<game_id>.result` in stream `SHOGI_GAMES` holds exactly one Verdict per game:
  the verdict the move validator checked against the game's log, written by the validator
  alone, expecting the subject empty. This listener reads it with a durable JetStream pull
  consumer, so it misses none (a verdict stored while it was down comes when it is back) and
  sees none twice unless it failed to acknowledge one, through server restarts and cluster
  failovers alike.
- `shogi.verdict.*` on core NATS is the same verdict republished by the stream: simpler, but a
  listener that is not connected at that moment misses it, and a cluster failover can repeat
  one. Good for a live display, not for settling games.
- Never `shogi.game.*.verdict`: it holds the announcements before the validator checks them
  (one written with a stolen worker credential could be false), and its raw publishes repeat.

Exactly once: JetStream redelivers a verdict whose ack it did not get (the listener died
between its work and its ack), so the work must be idempotent. Here it is a row in SQLite keyed
by game id, written before the ack and ignored when already there; a platform does the same in
the transaction that records the game's result.

    .venv/bin/python verdict_listener.py --nats-url nats://127.0.0.1:4222 --db verdicts.sqlite

With `--expect CODE,CODE...` (for tests) it stops once its database holds verdicts with exactly
those result codes and nothing arrives for `--idle` seconds, and exits 1 otherwise.
`--crash-before-ack` (for tests) exits after recording one verdict, before acknowledging it.
"""

import argparse
import asyncio
import os
import sqlite3
import sys
from collections import Counter

import nats
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))
from shogi.v1 import arbiter_pb2 as pb  # noqa: E402

STREAM = "SHOGI_GAMES"
SUBJECT = "shogi.game.*.result"
TYPE_HEADER = "Shogi-Message-Type"


def open_db(path):
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE IF NOT EXISTS verdicts ("
        " game_id TEXT PRIMARY KEY, code TEXT NOT NULL, winner TEXT NOT NULL, ply INTEGER NOT NULL)"
    )
    return db


def held(db):
    """The result codes the database holds, with how many games each."""
    return Counter(dict(db.execute("SELECT code, COUNT(*) FROM verdicts GROUP BY code")))


def record(db, verdict):
    """Stores the game's result once; False when it was already stored (a redelivery)."""
    with db:
        cursor = db.execute(
            "INSERT OR IGNORE INTO verdicts (game_id, code, winner, ply) VALUES (?, ?, ?, ?)",
            (verdict.game_id, verdict.code_name, pb.Color.Name(verdict.winner), verdict.ply),
        )
    return cursor.rowcount == 1


async def fetch(sub, batch=64, timeout=1):
    """The next verdicts, or none when none came within `timeout` seconds.

    nats-py signals "nothing came" in two ways: its own `nats.errors.TimeoutError`, and, from
    one path of `fetch` (nats-py 2.16's `_fetch_n`, when the server's answer to the no-wait
    probe used up the timeout, as happens on a busy machine), a bare `asyncio.TimeoutError`.
    The first is a subclass of the second, so catching `asyncio.TimeoutError` takes both.
    """
    try:
        return await sub.fetch(batch=batch, timeout=timeout)
    except asyncio.TimeoutError:
        return []


async def listen(args):
    db = open_db(args.db)
    nc = await nats.connect(args.nats_url, name="verdict-listener")
    # As the `reader` of deploy/nats/auth.conf, the platform's account imports the arbiter's
    # JetStream API under its own prefix: --js-prefix JS.ARBITER.API.
    js = nc.jetstream(prefix=args.js_prefix) if args.js_prefix else nc.jetstream()
    # A durable consumer: the server remembers what this listener acknowledged, across its
    # restarts. Explicit acks; everything from the stream's start the first time.
    sub = await js.pull_subscribe(
        SUBJECT,
        durable=args.durable,
        stream=STREAM,
        config=ConsumerConfig(
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.ALL,
            ack_wait=args.ack_wait,
        ),
    )
    processed, again = 0, 0
    expected = Counter(c for c in args.expect.split(",") if c) if args.expect is not None else None
    loop = asyncio.get_running_loop()
    idle_since = loop.time()
    try:
        while True:
            messages = await fetch(sub)
            for msg in messages:
                kind = (msg.headers or {}).get(TYPE_HEADER)
                if kind != "shogi.v1.Verdict":
                    raise SystemExit(f"{msg.subject}: header {TYPE_HEADER} is {kind!r}")
                verdict = pb.Verdict.FromString(msg.data)
                if record(db, verdict):
                    processed += 1
                    print(
                        f"verdict {verdict.game_id}: {verdict.code_name}, "
                        f"winner {pb.Color.Name(verdict.winner)}, ply {verdict.ply}",
                        flush=True,
                    )
                    if args.crash_before_ack:
                        print("crashing before the acknowledgement", flush=True)
                        return 3
                else:
                    again += 1
                    print(f"verdict {verdict.game_id}: already processed, acknowledged again")
                # Only once the result is stored: a crash before this line redelivers it.
                await msg.ack_sync()
            if messages:
                idle_since = loop.time()
            elif loop.time() - idle_since >= args.idle and (
                expected is None or held(db) == expected
            ):
                break
            if loop.time() - idle_since >= args.timeout:
                break
        holds = held(db)
    finally:
        await nc.close()
        db.close()
    if expected is not None and holds != expected:
        print(f"WRONG ANSWER: recorded {dict(holds)}, expected {dict(expected)}", file=sys.stderr)
        return 1
    print(f"verdict listener: {processed} verdicts processed, {again} redelivered ones skipped")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nats-url", default="nats://127.0.0.1:4222")
    parser.add_argument("--durable", default="platform-verdicts", help="the consumer's name")
    parser.add_argument(
        "--js-prefix",
        help="the JetStream API prefix (JS.ARBITER.API as the reader of deploy/nats/auth.conf)",
    )
    parser.add_argument("--db", default="verdicts.sqlite", help="where results are recorded")
    parser.add_argument("--expect", help="result codes to process, comma-separated (tests)")
    parser.add_argument("--idle", type=float, default=2.0, help="seconds without a verdict to stop")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait at most")
    parser.add_argument("--ack-wait", type=float, default=30.0, help="seconds before a redelivery")
    parser.add_argument("--crash-before-ack", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.expect is None and args.idle == parser.get_default("idle"):
        args.idle = float("inf")  # a real listener runs until stopped
        args.timeout = float("inf")
    return asyncio.run(listen(args))


if __name__ == "__main__":
    sys.exit(main())
