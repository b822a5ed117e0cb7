#!/usr/bin/env python3
"""The interoperability test (`make test-interop`): shogi-arbiter's records read by the libraries
platforms use, and their records read by shogi-arbiter.

- ours -> library: every corpus record converted by `shogi-arbiter convert` to each format, read
  by tsshogi and json-kifu-format (tools/interop/libs.mjs, npm, pinned) and by cshogi and
  python-shogi (.tools/venv, pinned); each library's reading is compared with ours of the same
  file.
- library -> ours: every corpus record read by each library and written by its own exporter;
  shogi-arbiter's reading of that file is compared with the library's reading of the record.

Compared: the start position (board, side to move, hands), the main line's moves as USI, and the
ending as a CSA special move (python-shogi says only who won: that is compared instead). A
disagreement is explained only by a row of known.tsv (library, format, direction, record, what):
a library's own bug, listed in docs/records.md with a minimal example. Any other disagreement,
and any row of known.tsv that no longer happens, fails the test.

Usage: interop.py --cli target/debug/shogi-arbiter [--corpus ../shared/corpus/records]
"""

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FORMATS = ["csa", "kif", "ki2", "jkf", "usi"]
EXT = {"csa": "csa", "kif": "kifu", "ki2": "ki2u", "jkf": "jkf", "usi": "usi"}
# What each library reads and writes, by format.
READS = {
    "tsshogi": ["csa", "kif", "ki2", "jkf", "usi"],
    "json-kifu-format": ["csa", "kif", "ki2", "jkf"],
    "cshogi": ["csa", "kif", "ki2", "usi"],
    "python-shogi": ["csa", "kif", "usi"],
}
WRITES = {
    "tsshogi": ["csa", "kif", "ki2", "jkf", "usi"],
    "json-kifu-format": ["jkf"],
    "cshogi": ["csa", "kif", "ki2"],
    "python-shogi": ["kif"],
}


def die(msg):
    print(f"interop: {msg}", file=sys.stderr)
    sys.exit(1)


# ---------------------------------------------------------------- views


def sfen_key(sfen):
    """The board, side to move and hands of an SFEN (hands as counts: writers order them
    differently), without the move number."""
    parts = sfen.split()
    if parts and parts[0] == "sfen":
        parts = parts[1:]
    board, side, hand = parts[0], parts[1], parts[2] if len(parts) > 2 else "-"
    counts = collections.Counter()
    n = ""
    for c in hand:
        if c.isdigit():
            n += c
        elif c != "-":
            counts[c] += int(n or 1)
            n = ""
    return (board, side, tuple(sorted(counts.items())))


def side_at_end(view):
    first = sfen_key(view["sfen"])[1]
    odd = len(view["moves"]) % 2 == 1
    return ("w" if first == "b" else "b") if odd else first


def norm_ending(view):
    """The ending as a CSA name; a foul by the side to move is ILLEGAL_MOVE, as KIF says it."""
    e = view.get("ending")
    if e is None:
        return None
    e = e.lstrip("%")
    # A KI2 ending read as its whole line (`まで52手で封じ手`): the word.
    e = re.sub(r"^(OTHER:)まで\d+手で", r"\1", e)
    side = side_at_end(view)
    if e in ("+ILLEGAL_ACTION", "-ILLEGAL_ACTION") and (e[0] == "+") == (side == "b"):
        return "ILLEGAL_MOVE"
    return e


def winner(view):
    """Who won, as python-shogi says it: 'b', 'w' or '-'."""
    e = norm_ending(view)
    side = side_at_end(view)
    other = "w" if side == "b" else "b"
    if e in ("TORYO", "TIME_UP", "ILLEGAL_MOVE", "TSUMI"):
        return other
    if e == "KACHI":
        return side
    if e == "+ILLEGAL_ACTION":
        return "w"
    if e == "-ILLEGAL_ACTION":
        return "b"
    return "-"


def compare(lib, ours, theirs, fmt=None):
    """The first difference between two views, as a short label, or None. A USI `position`
    line has no ending: none is compared."""
    if "error" in theirs:
        return "error: " + theirs["error"][:120]
    if "error" in ours:
        return "ours error: " + ours["error"][:120]
    if sfen_key(ours["sfen"]) != sfen_key(theirs["sfen"]):
        return "start"
    a, b = ours["moves"], theirs["moves"]
    for i in range(min(len(a), len(b))):
        if a[i] != b[i]:
            return f"ply {i + 1}"
    if len(a) != len(b):
        return f"ply {min(len(a), len(b)) + 1}"
    if fmt == "usi":
        return None
    if lib == "python-shogi":
        if winner(ours) != theirs["win"]:
            return f"winner {winner(ours)} vs {theirs['win']}"
        return None
    if norm_ending(ours) != norm_ending(theirs):
        return f"ending {norm_ending(ours)} vs {norm_ending(theirs)}"
    return None


# ---------------------------------------------------------------- shogi-arbiter


def convert(cli, to, inputs, out_dir, extra=()):
    """`convert --to` every input into out_dir; returns {input stem: error} for those it could not."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if not inputs:
        return {}
    cmd = [str(cli), "convert", "--to", to, *extra, "--out-dir", str(out_dir), *map(str, inputs)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    errors = {}
    for line in r.stderr.splitlines():
        if line.startswith("shogi-arbiter: ") and "variations not written" not in line:
            src, _, why = line[len("shogi-arbiter: ") :].partition(": ")
            errors[Path(src.split("#")[0]).stem] = why
    if r.returncode not in (0, 1):
        die(f"{' '.join(cmd[:4])}: exit {r.returncode}: {r.stderr}")
    return errors


def our_views(cli, files, work):
    """shogi-arbiter's reading of each file: start and moves from its USI, the ending from its
    CSA (both written by convert)."""
    files = list(files)
    usi_dir, csa_dir = work / "usi", work / "csa"
    errors = convert(cli, "usi", files, usi_dir)
    convert(cli, "csa", files, csa_dir)
    views = {}
    for f in files:
        stem = f.stem
        if stem in errors:
            views[f] = {"error": errors[stem]}
            continue
        usi = (usi_dir / f"{stem}.usi").read_text().split()
        i = usi.index("moves") if "moves" in usi else len(usi)
        sfen = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
        if usi[1] == "sfen":
            sfen = " ".join(usi[2:6])
        ending = None
        for line in (csa_dir / f"{stem}.csa").read_text().splitlines():
            if line.startswith("%"):
                ending = line[1:].split(",")[0]
            # An ending CSA has no special move for (封じ手 ...), which convert keeps as a comment.
            elif line.startswith("'ending: "):
                ending = "OTHER:" + line[len("'ending: ") :]
        views[f] = {"sfen": sfen, "moves": usi[i + 1 :], "ending": ending}
    return views


# ---------------------------------------------------------------- the JavaScript libraries


def node_jobs(jobs):
    if not jobs:
        return []
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(jobs, f)
    try:
        r = subprocess.run(["node", str(HERE / "libs.mjs"), f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if r.returncode != 0:
        die(f"node libs.mjs: exit {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


# ---------------------------------------------------------------- the Python libraries


def read_text(path):
    data = Path(path).read_bytes()
    for enc in ("utf-8-sig", "cp932", "euc_jp"):
        try:
            return data.decode(enc)
        except UnicodeDecodeError:
            pass
    return data.decode("utf-8", "replace")


def cshogi_read(fmt, text):
    import cshogi
    import cshogi.CSA
    import cshogi.KI2
    import cshogi.KIF

    if fmt == "usi":
        board = cshogi.Board()
        line = text.strip()
        line = line[len("position ") :] if line.startswith("position ") else line
        board.set_position(line)
        moves = [cshogi.move_to_usi(m) for m in board.history]
        sfen = line.split(" moves")[0]
        sfen = cshogi.STARTING_SFEN if sfen == "startpos" else sfen[len("sfen ") :]
        return {"sfen": sfen, "moves": moves, "ending": None}, None
    if fmt == "csa":
        games = cshogi.CSA.Parser.parse_str(text)
        p = games[0]
    elif fmt == "kif":
        p = cshogi.KIF.Parser.parse_str(text)
    else:
        p = cshogi.KI2.Parser.parse_str(text)
    view = {"sfen": p.sfen, "moves": [cshogi.move_to_usi(m) for m in p.moves], "ending": p.endgame or None}
    return view, p


def python_shogi_read(fmt, text):
    import shogi
    import shogi.CSA
    import shogi.KIF

    if fmt == "usi":
        words = text.split()
        if words and words[0] == "position":
            words = words[1:]
        if words[0] == "startpos":
            sfen, rest = shogi.STARTING_SFEN, words[1:]
        else:
            sfen, rest = " ".join(words[1:5]), words[5:]
        board = shogi.Board(sfen)
        moves = rest[1:] if rest[:1] == ["moves"] else rest
        for m in moves:
            board.push(shogi.Move.from_usi(m))
        return {"sfen": sfen, "moves": moves, "win": "-"}, None
    if fmt == "csa":
        s = shogi.CSA.Parser.parse_str(text)[0]
    else:
        s = shogi.KIF.Parser.parse_str(text)[0]
    # No result (None) and a draw ("-") are both "nobody won", as its CSA reader says them.
    return {"sfen": s["sfen"], "moves": list(s["moves"]), "win": s["win"] or "-"}, s


def py_read(lib, fmt, path):
    try:
        fn = cshogi_read if lib == "cshogi" else python_shogi_read
        return fn(fmt, read_text(path))
    except Exception as e:  # a library's refusal is a result, compared like any other
        return {"error": f"{type(e).__name__}: {e}".split("\n")[0]}, None


CSHOGI_KIF_END = {
    "%TORYO": "resign",
    "%KACHI": "win",
    "%JISHOGI": "draw",
    "%SENNICHITE": "sennichite",
    "%ILLEGAL_MOVE": "illegal_lose",
}


def cshogi_export(fmt, view, parsed, out):
    """cshogi's exporter writing what its parser read; False when it cannot say the record."""
    import cshogi
    import cshogi.CSA
    import cshogi.KI2
    import cshogi.KIF

    end = parsed.endgame

    def write(ex, finish):
        # Every cshogi exporter: its moves, then its own way of saying the ending.
        for m in parsed.moves:
            ex.move(m)
        if end:
            finish(ex)
        ex.close()
        return True

    if fmt == "csa":
        ex = cshogi.CSA.Exporter(str(out))
        ex.info(init_board=parsed.sfen, names=["b", "w"], version="V2.2")
        return write(ex, lambda ex: ex.endgame(end))
    start_is_even = sfen_key(parsed.sfen) == sfen_key(cshogi.STARTING_SFEN)
    if fmt == "kif":
        if end and end not in CSHOGI_KIF_END:
            return False
        ex = cshogi.KIF.Exporter(str(out))
        ex.header(["b", "w"], handicap=None if start_is_even else "sfen " + parsed.sfen)
        return write(ex, lambda ex: ex.end(CSHOGI_KIF_END[end]))
    # KI2: the even game only (its exporter has no start position).
    if not start_is_even or (end and end not in ("%TORYO", "%KACHI", "%SENNICHITE", "%JISHOGI")):
        return False
    ex = cshogi.KI2.Exporter(str(out))
    ex.header(["b", "w"])
    return write(ex, lambda ex: ex.end(end))


def python_shogi_export(fmt, view, parsed, out):
    import shogi.KIF

    # Its KIF writer says only a resignation ("NOTE: only resign", 投了 whatever the result).
    if parsed["win"] not in ("b", "w"):
        return False
    try:
        text = shogi.KIF.Exporter.kif({**parsed, "names": ["b", "w"]})
    except Exception:
        return False
    if sfen_key(parsed["sfen"]) != sfen_key(shogi.STARTING_SFEN):
        return False  # its KIF writer says 平手 whatever the start
    Path(out).write_text(text, encoding="utf-8")
    return True


def py_job(job):
    """One job of the Python libraries, as libs.mjs runs those of the JavaScript ones."""
    lib, fmt = job["lib"], job["format"]
    view, parsed = py_read(lib, fmt, job["path"])
    result = {"view": view, "exported": {}}
    if job["op"] == "export" and parsed is not None:
        export = cshogi_export if lib == "cshogi" else python_shogi_export
        for out_fmt, out in job["out"].items():
            try:
                ok = export(out_fmt, view, parsed, Path(out))
                why = None if ok else "not exportable by the library"
            except Exception as e:  # the library's exporter fails on its own reading
                why = f"the library's exporter fails ({type(e).__name__})"
            if why:
                Path(out).unlink(missing_ok=True)
            result["exported"][out_fmt] = why
    return result


def py_jobs(jobs):
    """Runs the jobs in child processes: cshogi can crash the interpreter (a segmentation fault
    on some records), and a crash is that job's result, not the end of the test."""
    results = []
    while len(results) < len(jobs):
        rest = jobs[len(results) :]
        with tempfile.TemporaryDirectory() as tmp:
            jf, out = Path(tmp) / "jobs.json", Path(tmp) / "out.jsonl"
            jf.write_text(json.dumps(rest))
            r = subprocess.run([sys.executable, __file__, "--worker", str(jf), str(out)], capture_output=True, text=True)
            done = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        results.extend(done)
        if r.returncode != 0 and len(results) < len(jobs):
            job = jobs[len(results)]
            why = f"the library crashed (exit {r.returncode})"
            results.append({"view": {"error": why}, "exported": {f: why for f in job.get("out", {})}})
    return results


def worker(jobs_file, out_file):
    jobs = json.loads(Path(jobs_file).read_text())
    with open(out_file, "w") as out:
        for job in jobs:
            out.write(json.dumps(py_job(job)) + "\n")
            out.flush()


# ---------------------------------------------------------------- the test


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus" / "records"))
    ap.add_argument("--keep", help="keep the files written here")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    cli = Path(args.cli).resolve()
    corpus = Path(args.corpus)
    if not cli.is_file():
        die(f"{cli} is missing: cargo build -p shogi-arbiter first")
    if not corpus.is_dir():
        die(f"{corpus} is missing: the shared corpus is needed")
    if not (HERE / "node_modules" / "tsshogi").is_dir():
        die(f"{HERE / 'node_modules'} is missing: run make setup")
    for mod in ("cshogi", "shogi"):
        try:
            __import__(mod)
        except ImportError:
            die(f"python module {mod} is missing: run make setup (tools/requirements.txt)")

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="interop-"))
    if args.keep and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    known = load_known()
    # cell -> Counter(agree, ours, known:<name>, ...); seen known rows.
    cells = collections.defaultdict(collections.Counter)
    details = []
    used = set()

    def judge(lib, fmt, direction, record, diff):
        cell = (lib, fmt, direction)
        if diff is None:
            cells[cell]["agree"] += 1
            return
        key = (lib, fmt, direction, record, diff)
        if key in known:
            used.add(key)
            cells[cell]["known:" + known[key]] += 1
            return
        cells[cell]["ours"] += 1
        details.append(f"{lib} {fmt} {direction} {record}: {diff}")

    originals = sorted(p for p in corpus.rglob("*") if p.is_file())
    # ---- ours -> library
    ours = {}
    for fmt in FORMATS:
        out = work / "ours" / fmt
        extra = ("--csa-version", "2.2") if fmt == "csa" else ()
        convert(cli, fmt, originals, out, extra)
        files = sorted(out.iterdir())
        ours[fmt] = our_views(cli, files, work / "ours-view" / fmt)
    jobs, keys = [], []
    for fmt in FORMATS:
        for f in ours[fmt]:
            for lib in ("tsshogi", "json-kifu-format"):
                if fmt in READS[lib]:
                    jobs.append({"lib": "tsshogi" if lib == "tsshogi" else "jkf", "op": "read", "format": fmt, "path": str(f)})
                    keys.append((lib, fmt, f))
    for (lib, fmt, f), theirs in zip(keys, node_jobs(jobs)):
        judge(lib, fmt, "ours->lib", f.stem, compare(lib, ours[fmt][f], theirs, fmt))
    jobs, keys = [], []
    for lib in ("cshogi", "python-shogi"):
        for fmt in READS[lib]:
            for f in ours[fmt]:
                jobs.append({"lib": lib, "op": "read", "format": fmt, "path": str(f)})
                keys.append((lib, fmt, f))
    for (lib, fmt, f), r in zip(keys, py_jobs(jobs)):
        judge(lib, fmt, "ours->lib", f.stem, compare(lib, ours[fmt][f], r["view"], fmt))

    # ---- library -> ours
    def export_job(lib, p):
        """The job of `lib` exporting corpus record `p` in every format it writes."""
        out = {}
        for fmt in WRITES[lib]:
            d = work / lib / fmt
            d.mkdir(parents=True, exist_ok=True)
            out[fmt] = str(d / f"{p.stem}.{EXT[fmt]}")
        return {"op": "export", "format": "csa" if p.suffix == ".csa" else "kif", "path": str(p), "out": out}

    jobs, keys = [], []
    for p in originals:
        for lib, short in (("tsshogi", "tsshogi"), ("json-kifu-format", "jkf")):
            job = {**export_job(lib, p), "lib": short}
            jobs.append(job)
            keys.append((lib, p, job["out"]))
    exported = collections.defaultdict(dict)  # (lib, fmt) -> {file: library's view}
    unread = collections.Counter()
    for (lib, p, out), theirs in zip(keys, node_jobs(jobs)):
        if "error" in theirs:
            unread[lib] += 1
            for f in out.values():
                Path(f).unlink(missing_ok=True)
            continue
        for fmt, f in out.items():
            exported[(lib, fmt)][Path(f)] = theirs
    jobs = []
    for lib in ("cshogi", "python-shogi"):
        for p in originals:
            jobs.append({**export_job(lib, p), "lib": lib})
    for job, r in zip(jobs, py_jobs(jobs)):
        lib = job["lib"]
        if "error" in r["view"]:
            unread[lib] += 1
            continue
        for fmt, why in r["exported"].items():
            if why:
                cells[(lib, fmt, "lib->ours")][why] += 1
            else:
                exported[(lib, fmt)][Path(job["out"][fmt])] = r["view"]
    for (lib, fmt), files in sorted(exported.items()):
        views = our_views(cli, files, work / "lib-view" / lib / fmt)
        for f, theirs in files.items():
            mine = views[f]
            if lib == "python-shogi":
                diff = compare_from_lib_python_shogi(mine, theirs)
            else:
                diff = compare(lib, theirs, mine, fmt) if "error" not in mine else "ours error: " + mine["error"][:120]
            judge(lib, fmt, "lib->ours", f.stem, diff)

    # ---- report
    print(f"interop: {len(originals)} corpus records; libraries that could not read a corpus record "
          f"(nothing to export): {dict(unread) or 'none'}")
    print(f"{'library':<17} {'format':<4} {'direction':<10} {'agree':>5} {'ours':>4}  known library limitations")
    failed = False
    for cell in sorted(cells):
        c = cells[cell]
        rest = ", ".join(f"{k}: {v}" for k, v in sorted(c.items()) if k not in ("agree", "ours"))
        print(f"{cell[0]:<17} {cell[1]:<4} {cell[2]:<10} {c['agree']:>5} {c['ours']:>4}  {rest}")
        failed |= c["ours"] > 0
    stale = sorted(set(known) - used)
    for d in details:
        print(f"interop: DISAGREEMENT (not a known library limitation): {d}", file=sys.stderr)
    for k in stale:
        print(f"interop: known.tsv row no longer happens (remove it): {' | '.join(k)}", file=sys.stderr)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    total_ours = sum(c["ours"] for c in cells.values())
    print(f"interop: {total_ours} disagreements attributable to shogi-arbiter or unexplained, {len(stale)} stale known rows")
    sys.exit(1 if failed or stale else 0)


def compare_from_lib_python_shogi(mine, theirs):
    if "error" in mine:
        return "ours error: " + mine["error"][:120]
    if sfen_key(mine["sfen"]) != sfen_key(theirs["sfen"]):
        return "start"
    if mine["moves"] != theirs["moves"]:
        a, b = mine["moves"], theirs["moves"]
        i = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
        return f"ply {i + 1}"
    if winner(mine) != theirs["win"]:
        return f"winner {winner(mine)} vs {theirs['win']}"
    return None


def load_known():
    """known.tsv: library, format, direction, record, what, name (of the library's bug)."""
    known = {}
    for line in (HERE / "known.tsv").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        lib, fmt, direction, record, what, name = line.split("\t")
        known[(lib, fmt, direction, record, what)] = name
    return known


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], sys.argv[3])
    else:
        main()
