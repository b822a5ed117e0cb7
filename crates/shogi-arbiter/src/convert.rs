//! `shogi-arbiter convert`: records from any format to any format.

use crate::judge::{self, Entry};
use anyhow::{Context, bail};
use shogi_records::{
    CsaVersion, Encoding, Format, Record, WriteOptions, read_all, read_as, write_with,
};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// A record format on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// CSA: V2.2 where the record fits it, else V3.0 (`--csa-version`).
    Csa,
    /// KIF (UTF-8 unless `--encoding shift-jis`).
    Kif,
    /// KI2.
    Ki2,
    /// JKF, json-kifu-format.
    Jkf,
    /// A USI `position` line.
    Usi,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Csa => Format::Csa,
            FormatArg::Kif => Format::Kif,
            FormatArg::Ki2 => Format::Ki2,
            FormatArg::Jkf => Format::Jkf,
            FormatArg::Usi => Format::Usi,
        }
    }
}

/// A text encoding on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EncodingArg {
    /// UTF-8.
    Utf8,
    /// Shift_JIS, as Kifu for Windows writes `.kif` and `.ki2`.
    ShiftJis,
}

/// A CSA version on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CsaVersionArg {
    /// V2.2, what most CSA readers speak, where the record fits it (no milliseconds,
    /// `%MAX_MOVES` or `%OUTE_SENNICHITE`); V3.0 for a record that needs them.
    #[value(name = "2.2")]
    V2_2,
    /// V3.0 always.
    #[value(name = "3.0")]
    V3_0,
}

impl CsaVersionArg {
    /// The options the writer takes.
    pub fn options(self) -> WriteOptions {
        WriteOptions {
            csa_version: match self {
                CsaVersionArg::V2_2 => CsaVersion::V2_2,
                CsaVersionArg::V3_0 => CsaVersion::V3_0,
            },
        }
    }
}

/// Arguments of `convert`.
#[derive(clap::Args, Debug)]
pub struct ConvertArgs {
    /// The format to write.
    #[arg(long, value_enum)]
    pub to: FormatArg,
    /// The format to read (default: by each file's extension, else by its text).
    #[arg(long, value_enum)]
    pub from: Option<FormatArg>,
    /// The encoding to write.
    #[arg(long, value_enum, default_value_t = EncodingArg::Utf8)]
    pub encoding: EncodingArg,
    /// The CSA version to write (docs/records.md says why 2.2 is the default).
    #[arg(long, value_enum, default_value_t = CsaVersionArg::V2_2)]
    pub csa_version: CsaVersionArg,
    /// Writes the one record to this file instead of standard output.
    #[arg(short, long, value_name = "FILE", conflicts_with = "out_dir")]
    pub output: Option<PathBuf>,
    /// Writes each record to this directory, named after its file with the new extension
    /// (`NAME-K.EXT` for the K-th game of a CSA file of several). Needed for several inputs.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Record files and directories (walked as `judge` walks them); `-` is standard input.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
}

/// Reads one input's games.
fn read_input(source: &str, bytes: &[u8], from: Option<Format>) -> Vec<Result<Record, String>> {
    match from {
        // A CSA file may hold several games whatever it is called.
        Some(Format::Csa) | None => read_all(if from.is_some() { "x.csa" } else { source }, bytes)
            .into_iter()
            .map(|g| g.map_err(|e| e.to_string()))
            .collect(),
        Some(f) => vec![read_as(f, bytes).map_err(|e| e.to_string())],
    }
}

/// Runs `convert`; returns whether every record was converted.
pub fn run(args: ConvertArgs) -> anyhow::Result<bool> {
    let to: Format = args.to.into();
    let from = args.from.map(Format::from);
    let encoding = match args.encoding {
        EncodingArg::Utf8 => Encoding::Utf8,
        EncodingArg::ShiftJis => Encoding::ShiftJis,
    };
    let stdin_named = args.inputs.iter().any(|p| p.as_os_str() == "-");
    let files: Vec<PathBuf> = args
        .inputs
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    let mut entries = judge::collect(&files);
    if stdin_named {
        entries.insert(0, Entry::File(PathBuf::from("-")));
    }
    let single = args.out_dir.is_none();
    if single && (entries.len() != 1 || args.inputs.iter().any(|p| p.is_dir())) {
        bail!("several inputs need --out-dir DIR");
    }
    if let Some(dir) = &args.out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("--out-dir {}", dir.display()))?;
    }
    let mut all_ok = true;
    let mut report = |source: &str, e: &str| {
        eprintln!("shogi-arbiter: {source}: {e}");
        all_ok = false;
    };
    for entry in &entries {
        let path = match entry {
            Entry::Bad(p, why) => {
                report(&p.display().to_string(), why);
                continue;
            }
            Entry::File(p) => p,
        };
        let (source, bytes) = if path.as_os_str() == "-" {
            let mut bytes = Vec::new();
            io::stdin()
                .lock()
                .take(judge::MAX_FILE_BYTES + 1)
                .read_to_end(&mut bytes)
                .context("reading standard input")?;
            if bytes.len() as u64 > judge::MAX_FILE_BYTES {
                report("stdin", "more than the bytes a record may have");
                continue;
            }
            ("stdin".to_string(), bytes)
        } else {
            let source = path.display().to_string();
            match judge::read_file(path) {
                Ok(b) => (source, b),
                Err(e) => {
                    report(&source, &e);
                    continue;
                }
            }
        };
        let games = read_input(&source, &bytes, from);
        let several = games.len() > 1;
        if single && several && to != Format::Csa {
            report(
                &source,
                "holds several games: use --out-dir to write one file each",
            );
            continue;
        }
        let mut written = Vec::new();
        for (k, game) in games.into_iter().enumerate() {
            let name = if several {
                format!("{source}#{}", k + 1)
            } else {
                source.clone()
            };
            let record = match game {
                Ok(r) => r,
                Err(e) => {
                    report(&name, &e);
                    continue;
                }
            };
            if !record.variations.is_empty() && !matches!(to, Format::Kif | Format::Jkf) {
                // Not an error: the main line is converted; but nothing goes without a word.
                eprintln!(
                    "shogi-arbiter: {name}: {} variations not written ({} has none; kif and jkf do)",
                    record.variations.len(),
                    to.name()
                );
            }
            let bytes = match write_with(&record, to, encoding, args.csa_version.options()) {
                Ok(b) => b,
                Err(e) => {
                    report(&name, &e.to_string());
                    continue;
                }
            };
            match &args.out_dir {
                Some(dir) => {
                    let file = out_name(dir, path, several.then_some(k + 1), to, encoding);
                    std::fs::write(&file, &bytes)
                        .with_context(|| format!("writing {}", file.display()))?;
                }
                None => written.push(bytes),
            }
        }
        if single {
            // CSA games of one file are written back as one file of several.
            let joined = written.join(&b"/\n"[..]);
            match &args.output {
                Some(file) => std::fs::write(file, joined)
                    .with_context(|| format!("writing {}", file.display()))?,
                None => {
                    let mut out = crate::output::stdout();
                    out.write_all(&joined)?;
                    out.flush()?;
                }
            }
        }
    }
    Ok(all_ok)
}

/// `DIR/NAME.EXT`, or `DIR/NAME-K.EXT` for the K-th game of a file of several.
fn out_name(dir: &Path, input: &Path, game: Option<usize>, to: Format, enc: Encoding) -> PathBuf {
    let stem = input
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| *s != "-")
        .unwrap_or("stdin");
    let ext = to.extension(enc);
    match game {
        Some(k) => dir.join(format!("{stem}-{k}.{ext}")),
        None => dir.join(format!("{stem}.{ext}")),
    }
}
