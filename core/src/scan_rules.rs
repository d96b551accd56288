//! Which names a walk of the roots skips: hidden entries, tool
//! folders and Office lock files. One rule for the scan and the watcher.

/// Tool folders that hold no user documents.
pub const SKIPPED_DIRS: &[&str] = &["node_modules", "__pycache__", ".venv", "venv"];

/// Whether a file or folder called `name` is skipped.
pub fn skipped_name(name: &str, is_dir: bool) -> bool {
    name.starts_with('.')
        || (is_dir && SKIPPED_DIRS.contains(&name))
        || (!is_dir && name.starts_with("~$"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
