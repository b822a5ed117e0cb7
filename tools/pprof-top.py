#!/usr/bin/env python3
"""What a Go program's profile says, without Go: the largest holders of a heap profile, or the
functions a CPU profile found busiest, flat and cumulative.

    tools/pprof-top.py heap HEAP.txt [FRAMES]   # /debug/pprof/heap?debug=1 (text)
    tools/pprof-top.py cpu CPU.pb [ROWS]        # /debug/pprof/profile?seconds=N (protobuf)

A heap profile's rows are the bytes in use at the last collection, summed by the first FRAMES
frames of their allocation's stack (3), runtime and library frames left out. nats-server's
package prefix is dropped from names. tools/nats-server-gctrace.sh serves the profiles
(NATS_PROFILE_PORT).
"""
import collections
import gzip
import re
import sys

PREFIX = "github.com/nats-io/nats-server/v2/server."


def heap(path, depth):
    held = collections.Counter()
    total = 0
    block = None
    for line in open(path, encoding="utf-8", errors="replace"):
        head = re.match(r"^\d+: (\d+) \[\d+: \d+\] @", line)
        if head:
            block = [int(head.group(1)), []]
            total += block[0]
            continue
        frame = re.match(r"^#\s+0x[0-9a-f]+\s+(\S+)", line)
        if frame and block is not None:
            block[1].append(frame.group(1).replace(PREFIX, ""))
            continue
        if block is not None:
            kept = [f for f in block[1] if not f.startswith(("runtime.", "bytes.", "slices."))]
            held[" < ".join(kept[:depth])] += block[0]
            block = None
    print(f"in use at the last collection: {total / 1e6:.1f} MB")
    for stack, size in held.most_common(20):
        print(f"{size / 1e6:8.2f} MB  {stack}")


def varint(b, i):
    value = shift = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return value, i


def fields(b):
    """The fields of one protobuf message: (number, wire type, value)."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            value, i = b[i : i + n], i + n
        elif wire == 1:
            value, i = b[i : i + 8], i + 8
        elif wire == 5:
            value, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire} at byte {i}")
        yield number, wire, value


def numbers(wire, value):
    if wire == 0:
        return [value]
    out, i = [], 0
    while i < len(value):
        n, i = varint(value, i)
        out.append(n)
    return out


def cpu(path, rows):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    # profile.proto: sample 2, location 4, function 5, string_table 6.
    strings, samples, locations, functions = [], [], {}, {}
    for number, wire, value in fields(data):
        if number == 6:
            strings.append(value.decode("utf-8", "replace"))
        elif number == 2:
            ids, values = [], []
            for n, w, v in fields(value):
                if n == 1:
                    ids += numbers(w, v)
                elif n == 2:
                    values += numbers(w, v)
            samples.append((ids, values))
        elif number == 4:
            location, funcs = 0, []
            for n, w, v in fields(value):
                if n == 1:
                    location = v
                elif n == 4:
                    funcs.append(dict((a, c) for a, _, c in fields(v)).get(1, 0))
            locations[location] = funcs
        elif number == 5:
            f = dict((n, v) for n, _, v in fields(value))
            functions[f.get(1, 0)] = f.get(2, 0)

    def name(function):
        return strings[functions.get(function, 0)].replace(PREFIX, "")

    flat, cumulative, total = collections.Counter(), collections.Counter(), 0
    for ids, values in samples:
        t = values[-1]  # CPU time (the last sample type)
        total += t
        stack = [name(f) for i in ids for f in locations.get(i, [])]
        if stack:
            flat[stack[0]] += t
        for f in set(stack):
            cumulative[f] += t
    print(f"{total / 1e9:.2f} s of CPU sampled")
    for title, counts in (("flat", flat), ("cumulative", cumulative)):
        print(f"--- {title}")
        for f, t in counts.most_common(rows):
            print(f"{100 * t / total:6.2f} %  {f}")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("heap", "cpu"):
        sys.exit(__doc__)
    if sys.argv[1] == "heap":
        heap(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
    else:
        cpu(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 30)
