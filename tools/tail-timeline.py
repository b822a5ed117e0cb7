#!/usr/bin/env python3
"""The timeline of one slow verdict, from what the servers recorded.

Reads a run traced by the cluster benchmark (`cargo bench -p arbiter-stack --bench cluster_load
-- --trace-dir DIR ...`, which writes DIR/<run>/{games.tsv, n0.log, n1.log, n2.log, jsz.jsonl})
and prints, for the game with the slowest verdict (or `--game ID`):

- when its last SubmitMove was sent and answered, when the stream stored that move (its
  sequence) and the verdict, and when the benchmark heard the verdict (games.tsv);
- from the servers' trace logs, for each of the partition's two durable consumers: every pull
  request the worker sent (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`), every status the
  server answered it with (408 expired, 100 heartbeat), when the consumer's leader delivered the
  move (the ack reply subject carries the stream sequence and the delivery count) and when the
  worker acknowledged it, the consumer's leader elections, and how many other deliveries the
  consumer made in between;
- from the `/jsz` samples (every 100 ms, every node): the consumer's state as its leader
  reported it, each time it changed (delivered and ack floor stream sequences, pending, ack
  pending, redelivered, waiting pulls, leader), at the answer's `now`: when the server began
  it; on a loaded server the state read can be some tens of milliseconds later than that.

Times are milliseconds after the last SubmitMove was sent.

With `--stalls`, instead: every delivery's lag (its trace line's time minus the store time its
ack subject carries), and each episode where a consumer's deliveries lagged more than 200 ms,
with the Raft snapshots (`Installing snapshot` debug lines) of that consumer's group taken
meanwhile, in seconds after the run's first delivery.

    tools/tail-timeline.py DIR/<run> [--game ID] [--consumer NAME]
    tools/tail-timeline.py DIR/<run> --stalls
"""

import argparse
import glob
import json
import os
import re
import sys
from datetime import datetime, timezone

STREAM = "SHOGI_GAMES"
LOG_LINE = re.compile(r"^\[\d+\] (\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d+) \[(\w+)\] (.*)$")
# $JS.ACK.<stream>.<consumer>.<delivered count>.<stream seq>.<consumer seq>.<ts>.<pending>
ACK = re.compile(r"\$JS\.ACK\.%s\.([\w-]+)\.(\d+)\.(\d+)\.(\d+)\.(\d+)\.(\d+)" % STREAM)
PULL = re.compile(r"\$JS\.API\.CONSUMER\.MSG\.NEXT\.%s\.([\w-]+) (_INBOX\.\S+)" % STREAM)


def us_of_log(stamp):
    t = datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1_000_000)


def games(run):
    with open(os.path.join(run, "games.tsv")) as f:
        header = f.readline().rstrip("\n").split("\t")
        return [dict(zip(header, line.rstrip("\n").split("\t"))) for line in f if line.strip()]


def jsz_records(path):
    """The samples of jsz.jsonl: one JSON object a line (or, from older runs, pretty-printed
    objects each starting with `{"t_us"`)."""
    if not os.path.exists(path):
        return
    with open(path) as f:
        buf = []
        for line in f:
            if line.startswith('{"t_us"') and buf:
                yield json.loads("".join(buf))
                buf = []
            buf.append(line)
        if buf:
            yield json.loads("".join(buf))


def jsz_now_us(jsz):
    """The `now` of a /jsz answer (RFC 3339, nanoseconds), in UTC microseconds."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$", jsz.get("now", ""))
    if not m:
        return None
    t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    frac = (m.group(2) or "0")[:6].ljust(6, "0")
    return int(t.timestamp()) * 1_000_000 + int(frac)


def consumers_in(jsz):
    for acc in jsz.get("account_details") or []:
        for st in acc.get("stream_detail") or []:
            if st.get("name") != STREAM:
                continue
            for c in st.get("consumer_detail") or []:
                yield c


def stalls(run):
    """Prints the delivery lags of a run and its stall episodes (`--stalls`)."""
    group, snaps, deliveries = {}, {}, []
    for path in sorted(glob.glob(os.path.join(run, "n*.log"))):
        node = os.path.basename(path)[:-4]
        with open(path, errors="replace") as f:
            for line in f:
                m = LOG_LINE.match(line)
                if not m:
                    continue
                text = m.group(3)
                if "Starting consumer monitor" in text:
                    g = re.search(r"> ([\w-]+)' \[(C-[\w-]+)\]", text)
                    if g:
                        group[g.group(1)] = g.group(2)
                elif "Installing snapshot" in text:
                    g = re.search(r"RAFT \[\w+ - ([\w-]+)\]", text)
                    if g:
                        snaps.setdefault(g.group(1), []).append((us_of_log(m.group(1)), node))
                elif "->> [HMSG" in text and "cid:" in text and "$JS.ACK" in text:
                    a = ACK.search(text)
                    if a:
                        t = us_of_log(m.group(1))
                        stored = int(a.group(5)) // 1000
                        deliveries.append((t, a.group(1), t - stored, stored, node))
    if not deliveries:
        sys.exit("no deliveries in the trace")
    deliveries.sort()
    lags = sorted(d[2] for d in deliveries)
    n = len(lags)
    print(f"{n} deliveries; lag p50 {lags[n // 2] / 1000:.1f} ms, p99 {lags[int(n * 0.99)] / 1000:.1f} ms, max {lags[-1] / 1000:.1f} ms")
    t0 = deliveries[0][0]
    episodes = {}
    for d in deliveries:
        if d[2] <= 200_000:
            continue
        eps = episodes.setdefault(d[1], [])
        if eps and d[0] - eps[-1][-1][0] < 500_000:
            eps[-1].append(d)
        else:
            eps.append([d])
    rows = []
    for c, eps in episodes.items():
        for e in eps:
            start, end = min(x[3] for x in e), max(x[0] for x in e)
            taken = [f"{(t - t0) / 1e6:.2f}s@{node}" for t, node in snaps.get(group.get(c), []) if start - 300_000 <= t <= end]
            rows.append((start, f"{c:<24} stored from {(start - t0) / 1e6:6.2f} s, delivered by {(end - t0) / 1e6:6.2f} s: {len(e):3d} messages, lag up to {max(x[2] for x in e) / 1000:6.0f} ms; snapshots of its group meanwhile: {', '.join(taken) or 'none'}"))
    for _, row in sorted(rows):
        print(row)


def main():
    if "--stalls" in sys.argv:
        stalls(next(a for a in sys.argv[1:] if a != "--stalls"))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", help="a run's directory, DIR/<run>")
    ap.add_argument("--game", help="the game id (default: the slowest verdict)")
    ap.add_argument("--consumer", action="append", help="a consumer to follow (default: the partition's judge and watcher)")
    ap.add_argument("--window-ms", type=float, default=500.0, help="context before the last move and after the verdict")
    args = ap.parse_args()

    rows = games(args.run)
    if not rows:
        sys.exit("no games in games.tsv")
    game = next((g for g in rows if g["game_id"] == args.game), None) if args.game else rows[0]
    if game is None:
        sys.exit(f"no game {args.game}")
    gid, part = game["game_id"], game["partition"]
    t0 = int(game["last_move_sent_us"])
    seq = int(game["move_seq"])
    consumers = args.consumer or [f"impasse-judge-p{part}", f"repetition-watcher-p{part}"]
    lo = t0 - int(args.window_ms * 1000)
    hi = int(game["verdict_heard_us"]) + int(args.window_ms * 1000)

    def ms(us):
        return f"{(us - t0) / 1000:>10.1f}"

    print(f"game {gid}, partition {part}: verdict {float(game['latency_ms']):.1f} ms after its last SubmitMove")
    events = [
        (t0, "bench", "last SubmitMove sent"),
        (int(game["answered_us"]), "bench", "last SubmitMove answered"),
        (int(game["move_stored_us"]), "stream", f"last move stored, stream seq {seq}"),
        (int(game["verdict_stored_us"]), "stream", f"verdict stored, stream seq {game['verdict_seq']}"),
        (int(game["verdict_heard_us"]), "bench", "verdict heard"),
    ]

    inboxes = {}  # pull inbox -> consumer
    groups = {}  # consumer -> raft group
    between = {c: [] for c in consumers}  # other deliveries made by the consumer in the window
    logs = sorted(glob.glob(os.path.join(args.run, "n*.log")))
    for path in logs:
        node = os.path.basename(path)[:-4]
        with open(path, errors="replace") as f:
            for line in f:
                m = LOG_LINE.match(line)
                if not m:
                    continue
                text = m.group(3)
                if "MSG_PAYLOAD" in text:
                    continue
                for c in consumers:
                    if f"> {c}'" in text and "[C-" in text:
                        g = re.search(r"\[(C-[\w-]+)\]", text)
                        if g:
                            groups[c] = g.group(1)
                p = PULL.search(text)
                if p and p.group(1) in consumers:
                    inboxes[p.group(2)] = p.group(1)
                us = None
                # Only the window is kept; the pass above also learns inboxes and groups.
                relevant = any(c in text for c in consumers) or any(i in text for i in inboxes) or any(
                    g in text for g in groups.values())
                if not relevant:
                    continue
                us = us_of_log(m.group(1))
                if us < lo or us > hi:
                    continue
                level = m.group(2)
                a = ACK.search(text)
                who = re.search(r" - (cid|rid):\d+ - ", text)
                conn = who.group(0).strip(" -") if who else ""
                if a and a.group(1) in consumers:
                    c, dc, sseq = a.group(1), int(a.group(2)), int(a.group(3))
                    # The ack itself is published on the ack subject; a delivery carries it as
                    # its reply subject.
                    is_ack = "[PUB $JS.ACK" in text or "[RMSG $G $JS.ACK" in text
                    if is_ack:
                        kind = "ack from the worker" if "<<- [PUB" in text else (
                            "ack forwarded over a route" if "->> [" in text else "ack received over a route")
                    elif "->> [HMSG" in text and "cid:" in text:
                        kind = "delivered to the worker"
                    else:
                        kind = "delivery forwarded over a route" if "->> [" in text else "delivery received over a route"
                    if sseq == seq:
                        what = f"{c}: seq {sseq} {kind} ({conn}"
                        events.append((us, node, what + (")" if is_ack else f", delivery {dc})")))
                    elif kind == "delivered to the worker":
                        between[c].append((us, sseq))
                    continue
                if p and p.group(1) in consumers:
                    inboxes[p.group(2)] = p.group(1)
                us = None
                # Only the window is kept; the pass above also learns inboxes and groups.
                relevant = any(c in text for c in consumers) or any(i in text for i in inboxes) or any(
                    g in text for g in groups.values())
                if not relevant:
                    continue
                us = us_of_log(m.group(1))
                if us < lo or us > hi:
                    continue
                level = m.group(2)
                a = ACK.search(text)
                who = re.search(r" - (cid|rid):\d+ - ", text)
                conn = who.group(0).strip(" -") if who else ""
                if a and a.group(1) in consumers:
                    c, dc, sseq = a.group(1), int(a.group(2)), int(a.group(3))
                    if "->> [HMSG" in text or "->> [MSG" in text or "<<- [HMSG" in text or "<<- [RMSG" in text:
                        kind = "delivered to the worker" if "->> [HMSG" in text and "cid:" in text else "delivery forwarded"
                        if "<<- [" in text:
                            kind = "delivery received over a route"
                        if sseq == seq:
                            events.append((us, node, f"{c}: seq {sseq} {kind} ({conn}, delivery {dc})"))
                        elif kind == "delivered to the worker":
                            between[c].append((us, sseq))
                    elif "<<- [PUB" in text or "->> [RMSG" in text or "<<- [RMSG" in text:
                        if sseq == seq:
                            kind = "ack from the worker" if "<<- [PUB" in text else "ack over a route"
                            events.append((us, node, f"{c}: seq {sseq} {kind} ({conn})"))
                    continue
                if p and p.group(1) in consumers:
                    if "<<- [PUB" in text:
                        events.append((us, node, f"{p.group(1)}: pull request sent by the worker ({conn})"))
                    elif "->> [RMSG" in text:
                        events.append((us, node, f"{p.group(1)}: pull request forwarded over a route ({conn})"))
                    elif "<<- [RMSG" in text:
                        events.append((us, node, f"{p.group(1)}: pull request received over a route ({conn})"))
                    continue
                hit = next((i for i in inboxes if i in text), None)
                if hit and "->> [HMSG" in text and "cid:" in text and "$JS.ACK" not in text:
                    events.append((us, node, f"{inboxes[hit]}: status to the worker's pull ({text.split('->> ')[1][:80]})"))
                    continue
                if level in ("INF", "WRN", "ERR", "DBG") and (any(c in text for c in consumers) or any(g in text for g in groups.values())):
                    events.append((us, node, f"[{level}] {text[:160]}"))

    for c in consumers:
        d = sorted(between[c])
        if d:
            gaps = [(b[0] - a[0], a[0]) for a, b in zip(d, d[1:])]
            gap, at = max(gaps) if gaps else (0, d[0][0])
            events.append((d[0][0], "summary", f"{c}: {len(d)} other deliveries to the worker in the window, seq {d[0][1]}..{d[-1][1]}; longest pause {gap / 1000:.1f} ms from {ms(at).strip()} ms"))

    last = {}
    for rec in jsz_records(os.path.join(args.run, "jsz.jsonl")):
        # The server's own time of the answer (`now`), not the sampler's before asking: on a
        # loaded machine an answer can take a hundred milliseconds and more.
        us = jsz_now_us(rec["jsz"]) or rec["t_us"]
        if us < lo or us > hi:
            continue
        for c in consumers_in(rec["jsz"]):
            name = c.get("name")
            if name not in consumers:
                continue
            cl = c.get("cluster") or {}
            if cl.get("leader") != rec["node"]:
                continue  # the leader's view only
            state = (
                (c.get("delivered") or {}).get("stream_seq"),
                (c.get("ack_floor") or {}).get("stream_seq"),
                c.get("num_pending"),
                c.get("num_ack_pending"),
                c.get("num_redelivered"),
                c.get("num_waiting"),
                cl.get("leader"),
            )
            if last.get(name) != state:
                last[name] = state
                events.append((us, rec["node"], "%s (jsz): delivered seq %s, ack floor %s, pending %s, ack pending %s, redelivered %s, waiting pulls %s, leader %s" % ((name,) + state)))

    print(f"{'ms':>10}  {'where':<7} what")
    for us, node, what in sorted(events, key=lambda e: e[0]):
        print(f"{ms(us)}  {node:<7} {what}")


if __name__ == "__main__":
    main()
