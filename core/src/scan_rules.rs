//! Which names a walk of the roots skips: hidden entries, tool
//! folders and Office lock files. One rule for the scan and the watcher.

use crate::formats::by_extension;
use crate::search::scope::is_under;

/// Tool folders that hold no user documents.
pub(crate) const SKIPPED_DIRS: &[&str] = &["node_modules", "__pycache__", ".venv", "venv"];

/// Whether a file or folder called `name` is skipped.
pub fn skipped_name(name: &str, is_dir: bool) -> bool {
    name.starts_with('.')
        || (is_dir && SKIPPED_DIRS.contains(&name))
        || (!is_dir && name.starts_with("~$"))
}

/// Whether a walk of `roots` would index the file at `path`: under a root,
/// no hidden or tool folder on the way, not a hidden or lock file, and a
/// format the product reads. Asked again wherever a path is served, so a
/// file the scan skips is never handed out by another route.
pub(crate) fn admits_file(path: &str, roots: &[String]) -> bool {
    let Some(parts) = below_root(path, roots) else {
        return false;
    };
    let Some((name, folders)) = parts.split_last() else {
        return false;
    };
    !folders.iter().any(|f| skipped_name(f, true) || *f == "..")
        && !skipped_name(name, false)
        && name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| by_extension(&ext.to_ascii_lowercase()).is_some())
}

/// The names between the root that holds `path` and `path` itself, or
/// `None` when no root holds it.
pub(crate) fn below_root<'a>(path: &'a str, roots: &[String]) -> Option<Vec<&'a str>> {
    let root = roots.iter().find(|r| is_under(path, r))?;
    let below = path[root.trim_end_matches('/').len()..].trim_start_matches('/');
    Some(below.split('/').filter(|p| !p.is_empty()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_served_file_is_one_the_scan_would_index() {
        let roots = vec!["/docs".to_string()];
        assert!(admits_file("/docs/a/notes.md", &roots));
        assert!(admits_file("/docs/scan.PNG", &roots));
        assert!(!admits_file("/docs/.hidden_key", &roots));
        assert!(!admits_file("/docs/.git/config.md", &roots));
        assert!(!admits_file("/docs/node_modules/x/readme.md", &roots));
        assert!(!admits_file("/docs/~$report.docx", &roots));
        assert!(!admits_file("/docs/id_rsa", &roots));
        assert!(!admits_file("/docs/a/../../etc/passwd.md", &roots));
        assert!(!admits_file("/etc/passwd", &roots));
        assert!(!admits_file("/docs", &roots));
    }

    #[test]
    fn hidden_tool_and_lock_names_are_skipped() {
        assert!(skipped_name(".git", true));
        assert!(skipped_name(".notes.md", false));
        assert!(skipped_name("node_modules", true));
        assert!(!skipped_name("node_modules", false));
        assert!(skipped_name("~$report.docx", false));
        assert!(!skipped_name("report.docx", false));
    }
}
