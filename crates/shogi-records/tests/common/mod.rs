//! The shared corpus, as the tests read it.

use std::path::PathBuf;

/// Every record file of `../shared/corpus/records` (one folder a category) as (path, bytes),
/// sorted by path; fails, saying why, if the corpus is not beside the repository.
pub fn corpus_files() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/corpus/records"
    ));
    assert!(
        dir.is_dir(),
        "the shared corpus is missing: expected {} (shared/corpus beside the repository)",
        dir.display()
    );
    let mut out = Vec::new();
    for cat in std::fs::read_dir(&dir).expect("records directory") {
        for f in std::fs::read_dir(cat.expect("entry").path()).expect("category") {
            let f = f.expect("entry").path();
            let bytes = std::fs::read(&f).expect("readable");
            out.push((f, bytes));
        }
    }
    out.sort();
    assert!(out.len() >= 140, "only {} corpus records", out.len());
    out
}
