//! JKF, the json-kifu-format of Kifu for JS and of shogi web apps: reading and writing.
//!
//! Source: the format's definition in na2hiro/json-kifu-format (`header`, `initial` with a
//! `preset` and, for `OTHER`, `data` with `color`, `board[x-1][y-1]` and `hands`; `moves`, the
//! n-th holding ply n and the 0th the comments before the first move, each with `move`
//! (`color`, `from`, `to`, `piece`, `same`, `promote`, `capture`, `relative`), `time` (`now`,
//! `total`), `comments`, `special` and `forks`).

use crate::kif_write::{handicap_of, kif_headers, line_moves, replay_to};
use crate::replay::Replay;
use crate::setup::Setup;
use crate::{Ending, EndingKind, Format, MoveTime, Record, RecordError, RecordMove, Variation};
use serde_json::{Map, Value, json};
use shogi_rules::{Color, IllegalKind, Move, Piece, PieceKind, Position, Square};

/// JKF preset names and the KIF handicap names they stand for.
const PRESETS: &[(&str, &str)] = &[
    ("HIRATE", "平手"),
    ("KY", "香落ち"),
    ("KY_R", "右香落ち"),
    ("KA", "角落ち"),
    ("HI", "飛車落ち"),
    ("HIKY", "飛香落ち"),
    ("2", "二枚落ち"),
    ("3", "三枚落ち"),
    ("4", "四枚落ち"),
    ("5", "五枚落ち"),
    ("5_L", "左五枚落ち"),
    ("6", "六枚落ち"),
    ("7_L", "左七枚落ち"),
    ("7_R", "右七枚落ち"),
    ("8", "八枚落ち"),
    ("10", "十枚落ち"),
];

/// An error at a JSON path (`moves[12].move.to`): JKF is read as a tree, so the path is the
/// token and the position is line 1, column 1 unless the JSON itself is malformed.
fn at(path: &str, reason: impl Into<String>) -> RecordError {
    RecordError::new(1, 1, path, reason)
}

/// Reads a JKF record (UTF-8 JSON; a BOM is allowed).
///
/// Moves are checked as in the other formats: the origin square and `promote` fix the move, and
/// a `piece` that does not name the piece on `from` makes it an impossible move. A move's
/// `color`, when given, is the mover (a move by the side not to move is kept and judged). Forks
/// become [`Record::variations`]. Errors name the JSON path of the value at fault as their token.
pub fn read_jkf(bytes: &[u8]) -> Result<Record, RecordError> {
    let mut buf = Vec::new();
    let text = crate::decode::decode(bytes, &mut buf)?;
    crate::decode::check_text(&text)?;
    let root: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| {
        RecordError::new(
            e.line() as u32,
            e.column() as u32,
            "",
            format!("invalid json: {e}"),
        )
    })?;
    let root = root
        .as_object()
        .ok_or_else(|| at("", "a jkf record is a json object"))?;
    let mut headers = Vec::new();
    let mut max_moves = None;
    if let Some(h) = root.get("header") {
        let h = h
            .as_object()
            .ok_or_else(|| at("header", "expected an object of strings"))?;
        for (k, v) in h {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            if k == "最大手数" {
                max_moves = Some(
                    v.trim()
                        .parse()
                        .map_err(|_| at("header.最大手数", "move cap must be a whole number"))?,
                );
            }
            headers.push((k.clone(), v));
        }
    }
    let start = initial(root.get("initial"))?;
    let moves = root
        .get("moves")
        .map(|m| m.as_array().ok_or_else(|| at("moves", "expected an array")))
        .transpose()?
        .map_or(&[][..], Vec::as_slice);
    let mut comment = None;
    let mut body = moves;
    if let Some(first) = moves.first()
        && first.get("move").is_none()
        && first.get("special").is_none()
    {
        for c in strings(first.get("comments"), "moves[0].comments")? {
            crate::add_comment(&mut comment, &c);
        }
        body = &moves[1..];
    }
    let mut variations = Vec::new();
    let (replay, _) = read_line(start, body, 1, "moves", 1, 0, None, &mut variations)?;
    let mut record = replay.into_record(Format::Jkf, headers, max_moves, comment);
    record.variations = variations;
    Ok(record)
}

/// Reads one line of moves (the main line or a fork) from `start`, the first at `first_ply`;
/// `path` and `index0` name its array and the index of its first element in errors. Forks are
/// read into `variations` as children of line `line`.
#[allow(clippy::too_many_arguments)]
fn read_line(
    start: Position,
    items: &[Value],
    first_ply: u32,
    path: &str,
    index0: usize,
    line: usize,
    before_to: Option<Square>,
    variations: &mut Vec<Variation>,
) -> Result<(Replay, ()), RecordError> {
    let mut r = Replay::new(start);
    r.before_to = before_to;
    for (i, item) in items.iter().enumerate() {
        let here = format!("{path}[{}]", index0 + i);
        let ply = first_ply + i as u32;
        if let Some(forks) = item.get("forks") {
            let forks = forks
                .as_array()
                .ok_or_else(|| at(&format!("{here}.forks"), "expected an array of arrays"))?;
            let before = r.moves.clone();
            for (k, fork) in forks.iter().enumerate() {
                let fpath = format!("{here}.forks[{k}]");
                let fork = fork
                    .as_array()
                    .ok_or_else(|| at(&fpath, "expected an array of moves"))?;
                let pos = replay_to(&r.start, &before)
                    .ok_or_else(|| at(&fpath, "a fork after an illegal move cannot be replayed"))?;
                // A fork of a fork's first move is an alternative to the same move: a sibling.
                let parent = match line {
                    l if l > 0 && variations[l - 1].ply == ply => variations[l - 1].parent,
                    l => l,
                };
                let index = variations.len();
                variations.push(Variation {
                    parent,
                    ply,
                    moves: Vec::new(),
                    ending: None,
                });
                let last = before.last().map(|m| m.mv.to()).or(r.before_to);
                let (fr, ()) = read_line(pos, fork, ply, &fpath, 0, index + 1, last, variations)?;
                variations[index].moves = fr.moves;
                variations[index].ending = fr.ending;
            }
        }
        if let Some(special) = item.get("special") {
            let name = special
                .as_str()
                .ok_or_else(|| at(&format!("{here}.special"), "expected a string"))?;
            if name.is_empty() {
                return Err(at(&format!("{here}.special"), "empty special move"));
            }
            // Names CSA does not have (a KIF word such as 封じ手) are kept as they are.
            let kind = crate::csa::special_kind(name.trim_start_matches('%'))
                .unwrap_or_else(|| EndingKind::Other(name.to_string()));
            r.end(kind, 0, name);
        } else {
            let mv = item
                .get("move")
                .ok_or_else(|| at(&here, "expected a move or a special"))?;
            one_move(&mut r, mv, &format!("{here}.move"))?;
        }
        if let Some(t) = item.get("time") {
            let now = clock(t.get("now"), &format!("{here}.time.now"))?
                .ok_or_else(|| at(&format!("{here}.time.now"), "expected a time"))?;
            let total = clock(t.get("total"), &format!("{here}.time.total"))?;
            r.set_time(MoveTime {
                spent_ms: now,
                total_ms: total,
            });
        }
        for c in strings(item.get("comments"), &format!("{here}.comments"))? {
            r.comment(&c);
        }
    }
    Ok((r, ()))
}

fn strings(v: Option<&Value>, path: &str) -> Result<Vec<String>, RecordError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    v.as_array()
        .ok_or_else(|| at(path, "expected an array of strings"))?
        .iter()
        .map(|s| {
            s.as_str()
                .map(str::to_string)
                .ok_or_else(|| at(path, "expected an array of strings"))
        })
        .collect()
}

fn number(v: Option<&Value>, path: &str) -> Result<Option<u64>, RecordError> {
    match v {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| at(path, "expected a whole number")),
    }
}

/// A JKF time `{h, m, s}` in milliseconds.
fn clock(v: Option<&Value>, path: &str) -> Result<Option<u64>, RecordError> {
    let Some(v) = v else {
        return Ok(None);
    };
    let h = number(v.get("h"), path)?.unwrap_or(0);
    let m = number(v.get("m"), path)?.unwrap_or(0);
    let s = number(v.get("s"), path)?.unwrap_or(0);
    Ok(Some(
        h.saturating_mul(3600)
            .saturating_add(m.saturating_mul(60))
            .saturating_add(s)
            .saturating_mul(1000),
    ))
}

fn place(v: Option<&Value>, path: &str) -> Result<Option<Square>, RecordError> {
    let Some(v) = v else {
        return Ok(None);
    };
    let x = number(v.get("x"), path)?;
    let y = number(v.get("y"), path)?;
    match (x, y) {
        (Some(x), Some(y)) if (1..=9).contains(&x) && (1..=9).contains(&y) => {
            Ok(Square::new(x as u8, y as u8))
        }
        _ => Err(at(path, "a square is {x, y} with 1 <= x, y <= 9")),
    }
}

fn color_of(v: &Value, path: &str) -> Result<Color, RecordError> {
    match v.as_u64() {
        Some(0) => Ok(Color::Black),
        Some(1) => Ok(Color::White),
        _ => Err(at(path, "a color is 0 (black, sente) or 1 (white, gote)")),
    }
}

fn kind_of(v: Option<&Value>, path: &str) -> Result<PieceKind, RecordError> {
    v.and_then(Value::as_str)
        .and_then(PieceKind::from_csa_name)
        .ok_or_else(|| {
            at(
                path,
                "expected a piece (FU KY KE GI KI KA HI OU TO NY NK NG UM RY)",
            )
        })
}

fn one_move(r: &mut Replay, mv: &Value, path: &str) -> Result<(), RecordError> {
    let pos = r.position_for_move(0, 1, path)?;
    let color = match mv.get("color") {
        Some(c) => color_of(c, &format!("{path}.color"))?,
        None => r.side_to_move(),
    };
    let kind = kind_of(mv.get("piece"), &format!("{path}.piece"))?;
    let same = mv.get("same").and_then(Value::as_bool) == Some(true);
    let to = match place(mv.get("to"), &format!("{path}.to"))? {
        Some(to) => to,
        None if same => r
            .last_to()
            .ok_or_else(|| at(&format!("{path}.same"), "same square with no previous move"))?,
        None => return Err(at(&format!("{path}.to"), "a move needs its destination")),
    };
    let promote = mv.get("promote").and_then(Value::as_bool) == Some(true);
    match place(mv.get("from"), &format!("{path}.from"))? {
        None => {
            if !kind.is_hand_kind() || promote {
                return Err(at(
                    &format!("{path}.piece"),
                    "only an unpromoted piece other than the king can be dropped",
                ));
            }
            r.push(Move::Drop { kind, to }, color, 0, None);
        }
        Some(from) => {
            let forced = match pos.piece_at(from) {
                Some(p) if p.kind != kind => Some(IllegalKind::Impossible),
                _ if from == to => Some(IllegalKind::Impossible),
                _ => None,
            };
            r.push(Move::Normal { from, to, promote }, color, 0, forced);
        }
    }
    Ok(())
}

fn initial(v: Option<&Value>) -> Result<Position, RecordError> {
    let Some(v) = v.filter(|v| !v.is_null()) else {
        return Ok(Position::startpos());
    };
    let preset = v
        .get("preset")
        .and_then(Value::as_str)
        .ok_or_else(|| at("initial.preset", "expected a preset name"))?;
    let setup = if preset == "OTHER" {
        let data = v
            .get("data")
            .ok_or_else(|| at("initial.data", "preset OTHER needs data"))?;
        let mut s = Setup::empty();
        s.side = color_of(
            data.get("color").unwrap_or(&Value::Null),
            "initial.data.color",
        )?;
        let board = data
            .get("board")
            .and_then(Value::as_array)
            .filter(|b| b.len() == 9)
            .ok_or_else(|| at("initial.data.board", "expected nine files of nine squares"))?;
        for (x, file) in board.iter().enumerate() {
            let file = file
                .as_array()
                .filter(|f| f.len() == 9)
                .ok_or_else(|| at("initial.data.board", "expected nine files of nine squares"))?;
            for (y, cell) in file.iter().enumerate() {
                let p = format!("initial.data.board[{x}][{y}]");
                let Some(kind) = cell.get("kind") else {
                    continue;
                };
                let kind = kind_of(Some(kind), &p)?;
                let color = color_of(cell.get("color").unwrap_or(&Value::Null), &p)?;
                s.set(x as u8 + 1, y as u8 + 1, Some(Piece::new(color, kind)));
            }
        }
        let hands = data
            .get("hands")
            .and_then(Value::as_array)
            .filter(|h| h.len() == 2)
            .ok_or_else(|| at("initial.data.hands", "expected two hands"))?;
        for (c, hand) in hands.iter().enumerate() {
            let hand = hand
                .as_object()
                .ok_or_else(|| at("initial.data.hands", "a hand is an object of counts"))?;
            for (name, n) in hand {
                let p = format!("initial.data.hands[{c}].{name}");
                let kind = PieceKind::from_csa_name(name)
                    .filter(|k| k.is_hand_kind())
                    .ok_or_else(|| at(&p, "a hand holds FU KY KE GI KI KA HI"))?;
                let n = number(Some(n), &p)?.unwrap_or(0);
                s.hands[c][kind.index()] = n.min(u64::from(u8::MAX)) as u8;
            }
        }
        s
    } else {
        let name = PRESETS
            .iter()
            .find(|(p, _)| *p == preset)
            .map(|(_, n)| *n)
            .ok_or_else(|| at("initial.preset", "unknown preset"))?;
        Setup::handicap(name).ok_or_else(|| at("initial.preset", "unknown preset"))?
    };
    setup.to_position().map_err(|e| {
        at(
            "initial",
            format!("the starting position is not valid: {}", e.reason),
        )
    })
}

fn clock_json(ms: u64, hours: bool) -> Value {
    let s = ms / 1000;
    if hours || s >= 3600 {
        json!({"h": s / 3600, "m": s / 60 % 60, "s": s % 60})
    } else {
        json!({"m": s / 60, "s": s % 60})
    }
}

fn color_json(c: Color) -> Value {
    Value::from(if c == Color::Black { 0 } else { 1 })
}

fn place_json(sq: Square) -> Value {
    json!({"x": sq.file(), "y": sq.rank()})
}

/// Times, comments and forks of one element of a moves array.
struct Extras<'a> {
    time: Option<&'a MoveTime>,
    comment: &'a Option<String>,
}

fn extras(obj: &mut Map<String, Value>, e: Extras<'_>, totals: &mut [u64; 2], color: Color) {
    if let Some(t) = e.time {
        let slot = &mut totals[color.index()];
        *slot = t.total_ms.unwrap_or(*slot + t.spent_ms);
        obj.insert(
            "time".into(),
            json!({"now": clock_json(t.spent_ms, false), "total": clock_json(*slot, true)}),
        );
    }
    if e.comment.is_some() {
        let lines: Vec<&str> = crate::comment_lines(e.comment).collect();
        obj.insert("comments".into(), json!(lines));
    }
}

/// One line's moves as JKF elements, with the forks of line `index` at their plies.
fn line_json(
    record: &Record,
    index: usize,
    start: &Position,
    first_ply: u32,
    prefix: &[RecordMove],
    moves: &[RecordMove],
    ending: Option<&Ending>,
) -> Vec<Value> {
    let mut totals = [0u64; 2];
    for m in prefix {
        if let Some(t) = &m.time {
            totals[m.color.index()] = t.total_ms.unwrap_or(totals[m.color.index()] + t.spent_ms);
        }
    }
    let mut out = Vec::with_capacity(moves.len() + 1);
    let mut pos = Some(start.clone());
    let mut last_to = prefix.last().map(|m| m.mv.to());
    for (i, m) in moves.iter().enumerate() {
        let ply = first_ply + i as u32;
        let mut mv = Map::new();
        mv.insert("color".into(), color_json(m.color));
        let to = m.mv.to();
        match m.mv {
            Move::Drop { kind, .. } => {
                mv.insert("to".into(), place_json(to));
                mv.insert("piece".into(), kind.csa_name().into());
            }
            Move::Normal { from, promote, .. } => {
                mv.insert("from".into(), place_json(from));
                mv.insert("to".into(), place_json(to));
                let piece = pos.as_ref().and_then(|p| p.piece_at(from));
                mv.insert(
                    "piece".into(),
                    piece.map_or(PieceKind::Pawn, |p| p.kind).csa_name().into(),
                );
                if last_to == Some(to) {
                    mv.insert("same".into(), true.into());
                }
                if promote {
                    mv.insert("promote".into(), true.into());
                }
                if let Some(c) = pos.as_ref().and_then(|p| p.piece_at(to)) {
                    mv.insert("capture".into(), c.kind.csa_name().into());
                }
            }
        }
        let mut obj = Map::new();
        obj.insert("move".into(), Value::Object(mv));
        extras(
            &mut obj,
            Extras {
                time: m.time.as_ref(),
                comment: &m.comment,
            },
            &mut totals,
            m.color,
        );
        let forks: Vec<Value> = (1..=record.variations.len())
            .filter(|&v| {
                record.variations[v - 1].parent == index && record.variations[v - 1].ply == ply
            })
            .filter_map(|v| fork_json(record, v))
            .collect();
        if !forks.is_empty() {
            obj.insert("forks".into(), forks.into());
        }
        out.push(Value::Object(obj));
        last_to = Some(to);
        if m.legal.is_err() || pos.as_mut().is_some_and(|p| p.play(m.mv).is_err()) {
            pos = None;
        }
    }
    if let Some(e) = ending {
        let special = jkf_special(&e.kind);
        let mut obj = Map::new();
        obj.insert("special".into(), special.into());
        let side = moves.last().map_or(start.side_to_move(), |m| !m.color);
        extras(
            &mut obj,
            Extras {
                time: e.time.as_ref(),
                comment: &e.comment,
            },
            &mut totals,
            side,
        );
        out.push(Value::Object(obj));
    }
    out
}

/// The `special` JKF writes for an ending: a name of json-kifu-format's schema (CSA V2.2's
/// special moves without `%`), which its readers check. What V2.2 has no name for is written
/// as KIF writes it: a move cap is `JISHOGI` (持将棋), a perpetual check `SENNICHITE`, and an
/// ending with no CSA name (封じ手, 不戦勝 ...) `CHUDAN`, the game stopped without a result.
fn jkf_special(kind: &EndingKind) -> String {
    match kind {
        EndingKind::MaxMoves => "JISHOGI".to_string(),
        EndingKind::OuteSennichite => "SENNICHITE".to_string(),
        k => k.csa_special().map_or_else(
            || "CHUDAN".to_string(),
            |s| s.trim_start_matches('%').to_string(),
        ),
    }
}

/// Variation `index` (1-based) as a JKF fork array, or `None` if it cannot be replayed.
fn fork_json(record: &Record, index: usize) -> Option<Value> {
    let v = &record.variations[index - 1];
    let mut prefix = line_moves(record, v.parent);
    prefix.truncate(v.ply as usize - 1);
    let start = replay_to(&record.start, &prefix)?;
    Some(Value::Array(line_json(
        record,
        index,
        &start,
        v.ply,
        &prefix,
        &v.moves,
        v.ending.as_ref(),
    )))
}

/// Writes a record as JKF: `header` under KIF's names, `initial` as a preset or `OTHER` with the
/// board, `moves` with each move's `color`, `from`, `to`, `piece`, `same`, `promote` and
/// `capture`, `time` (`total` summed from the moves when the record does not state it),
/// `comments`, the ending as `special` (the schema's names: see [`jkf_special`]), and variations
/// as `forks`.
pub fn write_jkf(record: &Record) -> String {
    let mut header = Map::new();
    for (k, v) in kif_headers(record) {
        header.insert(k, v.into());
    }
    let initial = match handicap_of(&record.start) {
        Some(name) => {
            let preset = PRESETS
                .iter()
                .find(|(_, n)| *n == name)
                .map_or("HIRATE", |(p, _)| *p);
            json!({ "preset": preset })
        }
        None => {
            let pos = &record.start;
            let board: Vec<Value> = (1..=9u8)
                .map(|x| {
                    let file: Vec<Value> = (1..=9u8)
                        .map(
                            |y| match Square::new(x, y).and_then(|sq| pos.piece_at(sq)) {
                                Some(p) => {
                                    json!({"color": color_json(p.color), "kind": p.kind.csa_name()})
                                }
                                None => json!({}),
                            },
                        )
                        .collect();
                    Value::Array(file)
                })
                .collect();
            let hands: Vec<Value> = Color::ALL
                .iter()
                .map(|&c| {
                    let h = pos.hand(c);
                    let mut m = Map::new();
                    for kind in PieceKind::HAND {
                        m.insert(kind.csa_name().into(), h.count(kind).into());
                    }
                    Value::Object(m)
                })
                .collect();
            json!({
                "preset": "OTHER",
                "data": {"color": color_json(pos.side_to_move()), "board": board, "hands": hands},
            })
        }
    };
    let mut moves = vec![match &record.comment {
        None => json!({}),
        Some(c) => json!({ "comments": c.split('\n').collect::<Vec<_>>() }),
    }];
    moves.extend(line_json(
        record,
        0,
        &record.start,
        1,
        &[],
        &record.moves,
        record.ending.as_ref(),
    ));
    let doc = json!({"header": header, "initial": initial, "moves": moves});
    // One element of `moves` a line: readable, and diffs stay small.
    let mut out = String::from("{\n");
    out.push_str(&format!("  \"header\": {},\n", doc["header"]));
    out.push_str(&format!("  \"initial\": {},\n", doc["initial"]));
    out.push_str("  \"moves\": [\n");
    for (i, m) in doc["moves"].as_array().into_iter().flatten().enumerate() {
        let sep = if i + 1 == moves.len() { "" } else { "," };
        out.push_str(&format!("    {m}{sep}\n"));
    }
    out.push_str("  ]\n}\n");
    out
}
