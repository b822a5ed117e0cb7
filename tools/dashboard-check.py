#!/usr/bin/env python3
"""The dashboard's queries and the alert rules on a real Prometheus (Debian's), by hand.

Starts a nats-server, `shogi-arbiter serve` on it with its metrics on a port, and a Prometheus
that scrapes them every 5 s (labelled as a ServiceMonitor would: namespace shogi-arbiter, job
move-validator, a pod name) and evaluates deploy/prometheus/shogi-arbiter.rules.yaml. Then
plays games for --seconds from two loops of `shogi-arbiter play` (the README's perpetual-check
game; every third game one with a clock whose side to move goes silent and is flagged; an
illegal move every fifth game; a call without the bearer token every seventh), and
prints, for every panel of the dashboard, the series its query returns, and every alert's
state. With --outage it then stops the nats-server and plays on for three minutes, so that the
alerts of a lost bus (NOT_SERVING, error answers) are seen pending and firing. Screenshots of
the queries graphed in Prometheus's own web UI and of its alerts page, taken by headless
Chromium, go to --out.

The NATS panels stay empty here: their metrics come from the NATS chart's
prometheus-nats-exporter, which this machine cannot build.

    make dashboard-check                      # or:
    python3 tools/dashboard-check.py --cli target/debug/shogi-arbiter --seconds 240 --outage

Exits 1 when an arbiter panel's query returns nothing after the games.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DASHBOARD = ROOT / "deploy/helm/shogi-arbiter/dashboards/shogi-arbiter.json"
RULES = ROOT / "deploy/prometheus/shogi-arbiter.rules.yaml"
SFEN = "6k2/1+p7/9/9/9/9/9/1+P2R4/6K2 b - 1"
CYCLE = "5h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h 3a2a 3h2h 2a3a 2h3h".split()
TOKEN = "dashboard-check-token"


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def wait_for(what, check, seconds=30):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"dashboard-check: {what} not ready within {seconds} s")


def query(prom, expr):
    url = f"http://{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    answer = json.loads(get(url))
    if answer["status"] != "success":
        sys.exit(f"dashboard-check: {expr}: {answer}")
    return answer["data"]["result"]


def panel_queries(dash):
    for panel in dash["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"].replace("$__rate_interval", "1m")
            yield panel["title"], expr.replace("$namespace", "shogi-arbiter")


def play_loop(cli, addr, seconds, counts):
    env = dict(os.environ, SHOGI_ARBITER_TOKEN=TOKEN)
    bare = {k: v for k, v in os.environ.items() if not k.startswith("SHOGI_ARBITER_TOKEN")}
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        i += 1
        run = lambda args, e=env: subprocess.run(  # noqa: E731
            [cli, "play", "--addr", f"http://{addr}", *args], env=e,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run(["--rules", "online", "--sfen", SFEN, *CYCLE])
        if i % 3 == 0:
            # A game with a clock whose side to move then goes silent: flagged two seconds
            # later, for the flag delay's panel and ShogiClockFlagsLate.
            run(["--time-main", "2", "7g7f"])
        if i % 5 == 0:
            run(["7g7f", "7g7f"])
        if i % 7 == 0:
            run(["7g7f"], bare)
    counts.append(i)


def load(cli, addr, seconds):
    counts = []
    loops = [threading.Thread(target=play_loop, args=(cli, addr, seconds, counts)) for _ in range(2)]
    for t in loops:
        t.start()
    for t in loops:
        t.join()
    return sum(counts)


def screenshot(prom, exprs, out):
    params = {}
    for i, expr in enumerate(exprs):
        params.update({f"g{i}.expr": expr, f"g{i}.tab": "0", f"g{i}.range_input": "15m"})
    url = f"http://{prom}/classic/graph?" + urllib.parse.urlencode(params)
    shoot(url, out, 700 * len(exprs))


def shoot(url, out, height):
    subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--window-size=1400,{height}", "--virtual-time-budget=15000",
                    f"--screenshot={out}", url], check=True, capture_output=True)
    print(f"  screenshot {out}")


def report(prom):
    dash = json.loads(DASHBOARD.read_text())
    empty = []
    for title, expr in panel_queries(dash):
        result = query(prom, expr)
        shown = ", ".join(
            "{}={}".format(",".join(v for k, v in r["metric"].items()
                                    if k not in ("namespace", "job", "instance", "pod", "otel_scope_name")) or "-",
                           f"{float(r['value'][1]):.4g}")
            for r in result[:5])
        print(f"  {title}: {len(result)} series  {shown}")
        if not result and "nats_" not in expr and "arbiter_nats_refused" not in expr:
            empty.append(title)
    rules = json.loads(get(f"http://{prom}/api/v1/rules"))
    for group in rules["data"]["groups"]:
        for rule in group["rules"]:
            if rule["health"] != "ok":
                empty.append(f"rule {rule['name']}: {rule.get('lastError')}")
    for alert in json.loads(get(f"http://{prom}/api/v1/alerts"))["data"]["alerts"]:
        print(f"  alert {alert['labels']['alertname']} {alert['state']}: {alert['annotations']['summary']}")
    return empty


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", default=str(ROOT / "target/debug/shogi-arbiter"))
    parser.add_argument("--nats-server", default=None)
    parser.add_argument("--seconds", type=int, default=240)
    parser.add_argument("--outage", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "target/dashboard-check"))
    args = parser.parse_args()
    nats_bin = args.nats_server or subprocess.run(
        ["bash", str(ROOT / "tools/nats-server.sh"), "path", "current"],
        check=True, capture_output=True, text=True).stdout.strip()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="dashboard-check-"))
    nats_port, metrics_port, prom_port = free_port(), free_port(), free_port()
    prom = f"127.0.0.1:{prom_port}"
    # A copy, so that the alerts page names the file, not this checkout's path.
    (work / RULES.name).write_text(RULES.read_text())
    (work / "prometheus.yml").write_text(f"""global:
  scrape_interval: 5s
  evaluation_interval: 5s
rule_files: ["{RULES.name}"]
scrape_configs:
  - job_name: move-validator
    static_configs:
      - targets: ["127.0.0.1:{metrics_port}"]
        labels: {{namespace: shogi-arbiter, pod: shogi-arbiter-serve-0}}
""")
    procs = []
    try:
        nats = subprocess.Popen([nats_bin, "-a", "127.0.0.1", "-p", str(nats_port), "-js", "-sd",
                                 str(work / "store")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(nats)
        serve = subprocess.Popen(
            [args.cli, "serve", "--listen", "127.0.0.1:0", "--metrics-addr", f"127.0.0.1:{metrics_port}",
             "--nats-url", f"nats://127.0.0.1:{nats_port}"],
            env=dict(os.environ, MOVE_VALIDATOR_AUTH_TOKEN=TOKEN),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        procs.append(serve)
        addr = serve.stdout.readline().strip()
        if not addr:
            sys.exit("dashboard-check: shogi-arbiter serve did not start")
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'data'}",
             f"--web.listen-address={prom}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(prometheus)
        wait_for("Prometheus", lambda: "Ready" in get(f"http://{prom}/-/ready"))
        print(f"dashboard-check: {args.seconds} s of games against {addr}, Prometheus on {prom}")
        games = load(args.cli, addr, args.seconds)
        print(f"dashboard-check: {games} games; every panel's query:")
        empty = report(prom)
        dash = json.loads(DASHBOARD.read_text())
        exprs = [e for _, e in panel_queries(dash) if "nats_" not in e]
        for n in range(0, len(exprs), 4):
            screenshot(prom, exprs[n:n + 4], out / f"panels-{n // 4}.png")
        if args.outage:
            print("dashboard-check: nats-server stopped; three minutes of calls without a bus")
            nats.terminate()
            load(args.cli, addr, 180)
            report(prom)
            shoot(f"http://{prom}/classic/alerts", out / "alerts.png", 1000)
        if empty:
            sys.exit("dashboard-check: no data: " + "; ".join(empty))
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
