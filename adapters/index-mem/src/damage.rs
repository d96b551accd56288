//! Damage found in the log or a snapshot: set aside beside the index
//! with a report that names it, so `doctor` and `status` can say what was
//! lost and nothing is silently dropped.

use crate::disk::Paths;

use crate::disk;
use crate::Inner;

/// Contains `damage` and says so on stderr and in the stats; the state is
/// written into a snapshot at open, so its stale marks outlive this process.
pub(crate) fn report_damage(paths: &Paths, inner: &mut Inner, damage: &disk::WalDamage) {
    let message = contain_damage(paths, inner, damage);
    eprintln!("warn: {message}");
    inner.damage.push(message);
    inner.damaged = true;
}

/// Sets a damaged log aside (never deleted) and marks the sources its later
/// records wrote stale; returns the message that names it. The copy's
/// `.txt` twin keeps the message for `status` and `doctor`.
pub(crate) fn contain_damage(paths: &Paths, inner: &mut Inner, damage: &disk::WalDamage) -> String {
    let copy = keep_log_aside(paths, inner.generation, damage.at);
    let present = inner.state.mark_stale(&damage.sources_after);
    let message = format!(
        "the index log {} is damaged at byte {}: {} later records, writing {} sources ({present} \
         still in the index, now marked stale), were not applied; the damaged log is kept as {}, \
         and the next sync rebuilds those sources from their files",
        paths.wal().display(),
        damage.at,
        damage.records_after,
        damage.sources_after.len(),
        copy.display()
    );
    let _ = std::fs::write(copy.with_extension(REPORT_EXTENSION), &message);
    message
}

/// Copies the log as it is to `wal.damaged-<generation>-<offset>.log`
/// (once; never deleted), before a write cuts it at `at`.
pub(crate) fn keep_log_aside(paths: &Paths, generation: u64, at: u64) -> std::path::PathBuf {
    let copy = paths
        .dir
        .join(format!("{DAMAGED_PREFIX}{generation}-{at}.log"));
    if !copy.exists() {
        if let Err(e) = std::fs::copy(paths.wal(), &copy) {
            eprintln!(
                "warn: cannot keep the damaged log as {}: {e}",
                copy.display()
            );
        }
    }
    copy
}

/// Keeps what a rebuild replaced: the corrupt file as
/// `<name>.damaged-<generation>` (never deleted) and a report beside it for
/// `status` and `doctor`, saying `why` and what was `done` instead.
pub(crate) fn keep_replaced(
    paths: &Paths,
    corrupt: &std::path::Path,
    generation: u64,
    why: &str,
    done: &str,
) {
    let name = corrupt
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let copy = paths.dir.join(format!("{name}.damaged-{generation}"));
    if corrupt.exists() && !copy.exists() {
        let _ = std::fs::copy(corrupt, &copy);
    }
    let message = format!(
        "{why}; {done}, and the damaged file is kept as {}",
        copy.display()
    );
    let report = format!("{}.{REPORT_EXTENSION}", copy.display());
    let _ = std::fs::write(report, message);
}

/// A log that ends before `noted`, where acknowledged records ended: what
/// was cut is gone without a trace, so the log is kept as it is and the cut
/// named; the next sync rebuilds what those records held from the files.
pub(crate) fn report_cut(paths: &Paths, inner: &mut Inner, noted: u64) {
    // Which sources the lost records wrote is not known: every file's
    // source is rebuilt by the next sync (vectors come back from the cache).
    let files: Vec<String> = inner
        .state
        .sources
        .iter()
        .flatten()
        .filter(|e| e.record.source_type == 0)
        .map(|e| e.record.source.clone())
        .collect();
    let stale = inner.state.mark_stale(&files);
    let lost = noted - inner.wal_end;
    let after = format!(
        "every file's source ({stale}) is marked stale and the next sync rebuilds them from the \
         files; documents from ingest_data or ingest_url written since the last snapshot are gone"
    );
    let (report, message) = if paths.wal().exists() {
        let copy = keep_log_aside(paths, inner.generation, inner.wal_end);
        let message = format!(
            "the index log {} is cut short at byte {}: {lost} bytes of acknowledged records after \
             it are gone; the log is kept as {}, and {after}",
            paths.wal().display(),
            inner.wal_end,
            copy.display()
        );
        (copy.with_extension(REPORT_EXTENSION), message)
    } else {
        let message = format!(
            "the index log {} is missing, but {} notes {lost} bytes of acknowledged records in it: \
             they are gone, and {after}",
            paths.wal().display(),
            paths.wal_end().display()
        );
        let report = paths.dir.join(format!(
            "wal.missing-{}.{REPORT_EXTENSION}",
            inner.generation
        ));
        (report, message)
    };
    let _ = std::fs::write(report, &message);
    eprintln!("warn: {message}");
    inner.damage.push(message);
    // Written out as a snapshot at open, so the stale marks outlive this
    // process.
    inner.damaged = true;
}

/// Damaged logs set aside in `dir` (`wal.damaged-<generation>-<offset>.log`),
/// each with the message that named it.
pub(crate) fn damage_reports(dir: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(&format!(".{REPORT_EXTENSION}"))
        })
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .collect();
    out.sort();
    out
}

pub(crate) const DAMAGED_PREFIX: &str = "wal.damaged-";
/// Each kept damaged file has a report beside it with this extension.
pub(crate) const REPORT_EXTENSION: &str = "damage.txt";
