#!/usr/bin/env python3
"""Independent legal-move oracle for shogi-rules, built on cshogi.

Plays biased random games with cshogi from the even start and from handicap starts and writes
positions met on the way, one per line:

    sfen <TAB> in_check (0|1) <TAB> legal moves (USI, sorted, space-separated)

The legal move list is cshogi's `board.legal_moves`, which in cshogi 1.1.0 includes the
non-promotions of pawn, bishop and rook and the lance's non-promotion to the second rank (the
`--self-check` perft from the start position would fail otherwise: 7g7f 3c3d 8h2b is one of the
25470 leaves at depth 3). docs/rules.md section 1 counts those moves as legal, so the oracle must too.
cshogi's `is_legal` is not used: it assumes a move that cshogi generated itself.

The playouts are biased towards the positions where move generators go wrong: captures (which
fill the hands and so make many drops), checks (evasions, pins against the king), drops next to
the enemy king, pawn drops in front of it (pawn-drop mate, 打ち歩詰め), promotions and
non-promotions in the zone. Each game draws its own bias, so some games are plain random ones.

Usage:
    python3 tools/oracle/gen_legal.py --seed 1 --count 3000 --out FILE
    python3 tools/oracle/gen_legal.py --self-check
"""

import argparse
import importlib.metadata
import random
import sys
import time

try:
    import cshogi
except ImportError:  # the Rust live test reads this message
    sys.stderr.write(
        "cshogi is not installed: run `bash tools/oracle/install.sh` "
        "(pip install -r tools/oracle/requirements.txt)\n"
    )
    sys.exit(3)

PINNED_VERSION = "1.1.0"

STARTPOS = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"

# Handicap starts: White (the handicap giver, 上手) lacks the pieces and moves first.
HANDICAPS = [
    "lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # lance
    "1nsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # right lance
    "lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # bishop
    "lnsgkgsnl/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # rook
    "lnsgkgsn1/7b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # rook and lance
    "lnsgkgsnl/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # two pieces
    "1nsgkgsn1/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # four pieces
    "2sgkgs2/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # six pieces
    "3gkg3/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # eight pieces
    "4k4/9/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1",  # ten pieces
]

# Perft from the start position (docs/rules.md section 8; YaneuraOu, shogiops).
STARTPOS_PERFT = {1: 30, 2: 900, 3: 25470, 4: 719731}

# Known answers the oracle must reproduce before its output is trusted.
KNOWN_POSITIONS = [
    # (sfen, move, expected membership, why)
    ("R6gk/9/6S1L/9/9/9/9/9/4K4 b P 1", "P*1b", False,
     "pawn-drop mate: the silver on 2c that could take the pawn is pinned by the rook (docs/rules.md 1)"),
    ("7gk/9/6S1L/9/9/9/9/9/4K4 b P 1", "P*1b", True,
     "without the rook the silver takes the pawn: the drop is legal (docs/rules.md 1)"),
    ("1nk1S2+L1/4pp1+SP/lG1+R2+R1+p/1p2B4/pNp2gPp1/PK2G4/4P1N+BG/L5p2/2+n+p2L2 b 2S3P2p 1",
     "P*7b", False, "pawn-drop mate that haitaka 0.3.2 offers"),
    ("4k4/9/9/L3P3R/9/9/9/9/4K2B1 b - 1", "5d5c", True, "pawn non-promotion in the zone"),
    ("4k4/9/9/L3P3R/9/9/9/9/4K2B1 b - 1", "1d1a", True, "rook non-promotion in the zone"),
    ("4k4/9/9/L3P3R/9/9/9/9/4K2B1 b - 1", "2i8c", True, "bishop non-promotion into the zone"),
    ("4k4/9/L8/9/9/9/9/9/4K4 b - 1", "9c9b", True, "lance non-promotion to the second rank"),
    ("4k4/9/L8/9/9/9/9/9/4K4 b - 1", "9c9a", False, "lance to the last rank must promote"),
]
KNOWN_COUNTS = [
    ("1nk1S2+L1/4pp1+SP/lG1+R2+R1+p/1p2B4/pNp2gPp1/PK2G4/4P1N+BG/L5p2/2+n+p2L2 b 2S3P2p 1", 152),
    ("R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1", 593),
]

# cshogi piece codes: 1..14 Black, 17..30 White; PAWN = 1, KING = 8.
PAWN, KING = cshogi.PAWN, cshogi.KING
# Material value used only to prefer capturing big pieces (fills hands with sliders).
CAPTURE_VALUE = {1: 1, 2: 3, 3: 3, 4: 5, 5: 8, 6: 10, 7: 6, 9: 6, 10: 6, 11: 6, 12: 6, 13: 12,
                 14: 14}


def usi_list(board):
    return sorted(cshogi.move_to_usi(m) for m in board.legal_moves)


def perft(board, depth):
    if depth == 1:
        return len(board.legal_moves)
    nodes = 0
    for m in list(board.legal_moves):
        board.push(m)
        nodes += perft(board, depth - 1)
        board.pop()
    return nodes


def self_check(max_depth, out=sys.stderr):
    """Returns a list of failures (empty when the oracle agrees with the published data)."""
    failures = []
    for depth in range(1, max_depth + 1):
        t = time.time()
        got = perft(cshogi.Board(STARTPOS), depth)
        want = STARTPOS_PERFT[depth]
        out.write(f"self-check: startpos perft {depth} = {got} (want {want}, "
                  f"{time.time() - t:.1f}s)\n")
        if got != want:
            failures.append(f"startpos perft {depth}: got {got}, want {want}")
    for sfen, usi, want, why in KNOWN_POSITIONS:
        got = usi in usi_list(cshogi.Board(sfen))
        if got != want:
            failures.append(f"{sfen}: {usi} legal={got}, want {want} ({why})")
    for sfen, want in KNOWN_COUNTS:
        got = len(usi_list(cshogi.Board(sfen)))
        if got != want:
            failures.append(f"{sfen}: {got} legal moves, want {want}")
    return failures


def color_of(piece):
    return 0 if piece < 16 else 1


def kind_of(piece):
    return piece & 15


def square(file, rank):
    """cshogi's square index, file-major like ours: (file - 1) * 9 + (rank - 1)."""
    return (file - 1) * 9 + (rank - 1)


def pawn_check_square(board):
    """The square where a pawn of the side to move would give check, or None."""
    them = 1 - board.turn
    ksq = board.king_square(them)
    file, rank = ksq // 9 + 1, ksq % 9 + 1
    rank += 1 if board.turn == cshogi.BLACK else -1
    if not 1 <= rank <= 9:
        return None
    return square(file, rank)


def has_own_pawn_on_file(board, file, color):
    for rank in range(1, 10):
        p = board.piece(square(file, rank))
        if p and color_of(p) == color and kind_of(p) == PAWN:
            return True
    return False


def pawn_drop_check(board):
    """The USI of a pawn drop that would give check, if the side to move has a pawn, the square
    in front of the enemy king is empty and the file holds no pawn of the mover; else None."""
    us = board.turn
    if board.pieces_in_hand[us][cshogi.HPAWN] == 0:
        return None
    sq = pawn_check_square(board)
    if sq is None or board.piece(sq) != 0:
        return None
    file, rank = sq // 9 + 1, sq % 9 + 1
    if has_own_pawn_on_file(board, file, us):
        return None
    return f"P*{file}{'abcdefghi'[rank - 1]}"


def is_pawn_drop_mate(board, moves_usi):
    """Whether the checking pawn drop is refused for pawn-drop mate: when the mover is not in
    check a drop cannot expose its own king, the square is empty, the file has no pawn of the
    mover and the square is not the last rank (the enemy king stands beyond it), so pawn-drop
    mate is the only rule left that can forbid it."""
    drop = pawn_drop_check(board)
    return drop is not None and not board.is_check() and drop not in moves_usi


def features(board, moves_usi):
    """Tags for the statistics printed at the end and for choosing which positions to keep."""
    tags = set()
    us = board.turn
    if board.is_check():
        tags.add("check")
    hand = board.pieces_in_hand[us]
    if sum(hand) >= 6:
        tags.add("big_hand")
    if not moves_usi:
        tags.add("no_moves")
    if any(u.endswith("+") for u in moves_usi):
        tags.add("promotion")
    if pawn_drop_check(board) is not None:
        tags.add("pawn_drop_check")
        if is_pawn_drop_mate(board, moves_usi):
            tags.add("pawn_drop_mate")
    # Not in check, a board move that cshogi generates as pseudo-legal but rejects, by a piece
    # other than the king: a pinned piece.
    legal = set(board.legal_moves)
    for m in () if board.is_check() else board.pseudo_legal_moves:
        if m not in legal and not cshogi.move_is_drop(m) \
                and cshogi.move_from_piece_type(m) != KING:
            tags.add("pin")
            break
    return tags


# Positions with these tags are always kept; the others with a probability by tag, so that a
# fixture is mostly made of the positions where generators go wrong.
RARE_TAGS = {"pawn_drop_mate", "no_moves"}
KEEP_PROBABILITY = {"big_hand": 0.2, "pawn_drop_check": 0.2, "pin": 0.15, "check": 0.08,
                    "promotion": 0.03}


class Style:
    """The bias of one game: weights added to a move's base weight of 1."""

    def __init__(self, rng):
        self.capture = rng.choice([0, 2, 6, 15])
        self.check = rng.choice([0, 2, 8, 25])
        self.near_king = rng.choice([0, 2, 6])
        self.pawn_drop_check = rng.choice([0, 10, 40])
        self.promotion = rng.choice([0, 1, 3])
        self.non_promotion = rng.choice([0, 0, 2])
        # Hunting the enemy king: prefer moves that leave the opponent few replies. This is what
        # makes mating nets, and so pawn drops that would mate, common.
        self.hunt = rng.choice([0, 0, 20, 60])


def choose_move(rng, board, style, moves):
    checks = set(board.check_moves) if style.check or style.pawn_drop_check else ()
    them = 1 - board.turn
    ksq = board.king_square(them)
    kf, kr = ksq // 9, ksq % 9
    hunting = style.hunt and rng.random() < 0.7
    weights = []
    for m in moves:
        w = 1.0
        to = cshogi.move_to(m)
        cap = cshogi.move_cap(m)
        if cap:
            w += style.capture * CAPTURE_VALUE.get(cap, 1)
        gives_check = m in checks
        if gives_check:
            w += style.check
        near = max(abs(to // 9 - kf), abs(to % 9 - kr)) <= 2
        if cshogi.move_is_drop(m):
            if near:
                w += style.near_king
            if gives_check and cshogi.move_drop_hand_piece(m) == cshogi.HPAWN:
                w += style.pawn_drop_check
        else:
            if near:
                w += style.near_king / 2
            if cshogi.move_is_promotion(m):
                w += style.promotion
            elif cshogi.move_from_piece_type(m) in (1, 5, 6):
                # Pawn, bishop, rook declining promotion where it could promote: cshogi has no
                # direct test, so prefer any non-promoting move of those kinds a little.
                w += style.non_promotion
        if hunting:
            board.push(m)
            w += style.hunt / (1 + len(board.legal_moves))
            board.pop()
        weights.append(w)
    return rng.choices(moves, weights=weights, k=1)[0]


def generate(seed, count, out_path, log=sys.stderr):
    rng = random.Random(seed)
    rows = []
    seen = set()
    stats = {}
    games = 0
    t0 = time.time()
    while len(rows) < count:
        games += 1
        start = STARTPOS if rng.random() < 0.6 else rng.choice(HANDICAPS)
        board = cshogi.Board(start)
        style = Style(rng)
        # Lengths up to ~200 plies, weighted towards the middle and end game where the hands are
        # full and kings exposed.
        length = min(220, int(rng.triangular(1, 220, 140)))
        keep_per_game = rng.randint(1, 4)
        kept = 0
        for ply in range(length + 1):
            moves = list(board.legal_moves)
            usi = sorted(cshogi.move_to_usi(m) for m in moves)
            last = ply == length or not moves
            tags = features(board, usi)
            rare = bool(tags & RARE_TAGS)
            p_keep = max([KEEP_PROBABILITY.get(t, 0.0) for t in tags], default=0.0) + 0.01
            if last or rare or rng.random() < p_keep:
                key = " ".join(board.sfen().split(" ")[:3])
                if key not in seen and (kept < keep_per_game or rare):
                    seen.add(key)
                    kept += 1
                    for tag in tags or {"plain"}:
                        stats[tag] = stats.get(tag, 0) + 1
                    rows.append((board.sfen(), int(board.is_check()), " ".join(usi)))
                    if len(rows) >= count:
                        break
            if not moves:
                break
            board.push(choose_move(rng, board, style, moves))
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write(
            f"# generated by: python3 tools/oracle/gen_legal.py --seed {seed} --count {count} "
            f"--out {out_path} (cshogi {importlib.metadata.version('cshogi')})\n"
        )
        f.write("# columns: sfen, in_check (0|1), legal moves (USI, sorted, space-separated); "
                "tab-separated\n")
        for sfen, check, moves in rows:
            f.write(f"{sfen}\t{check}\t{moves}\n")
    log.write(f"wrote {len(rows)} positions from {games} games in {time.time() - t0:.1f}s; "
              f"tags: {dict(sorted(stats.items()))}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--out", help="TSV file to write")
    ap.add_argument("--self-check", action="store_true",
                    help="check the oracle against perft 1..4 from the start position and known "
                         "positions, then exit (or go on to --out)")
    args = ap.parse_args()

    version = importlib.metadata.version("cshogi")
    if version != PINNED_VERSION:
        sys.stderr.write(f"warning: cshogi {version} installed, the oracle pins "
                         f"{PINNED_VERSION} (tools/oracle/requirements.txt)\n")

    # Always run the cheap part of the self-check: a fixture must never come from an oracle that
    # drops non-promotions or misjudges pawn-drop mate.
    failures = self_check(4 if args.self_check else 3)
    if failures:
        sys.stderr.write("oracle self-check FAILED:\n  " + "\n  ".join(failures) + "\n")
        sys.exit(1)
    if args.self_check:
        sys.stderr.write("oracle self-check passed\n")
    if args.out:
        generate(args.seed, args.count, args.out)
    elif not args.self_check:
        ap.error("nothing to do: give --out FILE and/or --self-check")


if __name__ == "__main__":
    main()
