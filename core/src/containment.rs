//! Path containment, the one security rule for path arguments: `~` is
//! expanded, a relative path is joined to the working folder (the CLI
//! allows one, MCP does not), symlinks are resolved through the
//! [`Files`] port, and the result must lie under a configured root.
//! Every front end checks a path here before the engine sees it.

use crate::ports::Files;
use crate::search::is_under;

/// The roots and the context a path argument is read in.
#[derive(Debug, Clone)]
pub struct Containment {
    /// Roots with symlinks resolved, in configured order.
    pub roots: Vec<String>,
    /// The working directory relative paths resolve against (the CLI's).
    pub cwd: String,
    /// The home directory `~` stands for.
    pub home: Option<String>,
}

/// Why a path argument was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// An MCP path that is not absolute.
    NotAbsolute {
        /// The path as given.
        raw: String,
    },
    /// A path that resolves outside every root.
    OutsideRoots {
        /// The path as given.
        raw: String,
        /// The roots it is not under.
        roots: Vec<String>,
    },
    /// Neither a path nor a source id was given.
    NoTarget,
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAbsolute { raw } => write!(
                f,
                "Path must be absolute: {raw} (pass a result's `source`, which is an absolute path)"
            ),
            Self::OutsideRoots { raw, roots } => write!(
                f,
                "Path outside configured document roots: {raw}. Roots: {}. To index another folder, add it to BASE_DIRS and restart the server (CLI: pass --base-dir for it).",
                roots.join(", ")
            ),
            Self::NoTarget => write!(
                f,
                "Provide filePath or source (CLI: a path, or --source with a result's source id)"
            ),
        }
    }
}

impl std::error::Error for PathError {}

impl Containment {
    /// The resolved absolute path of `raw`, when it lies under a root.
    /// `require_absolute`: MCP paths must be absolute; CLI paths may be
    /// relative to the working folder.
    pub fn contain(
        &self,
        raw: &str,
        require_absolute: bool,
        files: &dyn Files,
    ) -> Result<String, PathError> {
        let expanded = match (raw.strip_prefix('~'), &self.home) {
            (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                format!("{home}{rest}")
            }
            _ => raw.to_string(),
        };
        let absolute = expanded.starts_with('/');
        if !absolute && require_absolute {
            return Err(PathError::NotAbsolute { raw: raw.into() });
        }
        let joined = if absolute {
            expanded
        } else {
            format!("{}/{expanded}", self.cwd.trim_end_matches('/'))
        };
        let resolved = files.resolve(&joined);
        if self.roots.iter().any(|r| is_under(&resolved, r)) {
            Ok(resolved)
        } else {
            Err(PathError::OutsideRoots {
                raw: raw.into(),
                roots: self.roots.clone(),
            })
        }
    }

    /// The index key a tool call names: a contained path, else a source id
    /// (URLs and data ids are not paths and are not contained).
    pub fn key(
        &self,
        path: Option<&str>,
        source: Option<&str>,
        require_absolute: bool,
        files: &dyn Files,
    ) -> Result<String, PathError> {
        match (path, source) {
            (Some(p), _) => self.contain(p, require_absolute, files),
            (None, Some(s)) => Ok(s.to_string()),
            (None, None) => Err(PathError::NoTarget),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MapFiles;

    fn rules() -> Containment {
        Containment {
            roots: vec!["/docs".into(), "/home/me/notes".into()],
            cwd: "/docs/sub".into(),
            home: Some("/home/me".into()),
        }
    }

    #[test]
    fn paths_under_a_root_pass_and_others_are_refused_with_the_roots() {
        let files = MapFiles::default();
        let c = rules();
        assert_eq!(c.contain("/docs/a.md", true, &files).unwrap(), "/docs/a.md");
        assert_eq!(
            c.contain("~/notes/x.md", true, &files).unwrap(),
            "/home/me/notes/x.md"
        );
        assert_eq!(c.contain("b.md", false, &files).unwrap(), "/docs/sub/b.md");
        assert_eq!(c.contain("../c.md", false, &files).unwrap(), "/docs/c.md");
        let out = c.contain("/docs/../etc/passwd", true, &files).unwrap_err();
        assert!(
            out.to_string().contains("Roots: /docs, /home/me/notes"),
            "{out}"
        );
        assert!(matches!(
            c.contain("/docsx/a.md", true, &files),
            Err(PathError::OutsideRoots { .. })
        ));
        assert_eq!(
            c.contain("b.md", true, &files),
            Err(PathError::NotAbsolute { raw: "b.md".into() })
        );
        assert!(c.contain("../../etc", false, &files).is_err());
    }

    #[test]
    fn a_key_is_a_contained_path_or_a_source_id() {
        let files = MapFiles::default();
        let c = rules();
        assert_eq!(
            c.key(Some("/docs/a.md"), Some("x"), true, &files).unwrap(),
            "/docs/a.md"
        );
        assert_eq!(
            c.key(None, Some("https://x.org/p"), true, &files).unwrap(),
            "https://x.org/p"
        );
        assert_eq!(c.key(None, None, true, &files), Err(PathError::NoTarget));
        assert!(c.key(Some("/etc/passwd"), None, true, &files).is_err());
    }

    #[test]
    fn normalising_folds_dots_and_slashes() {
        use crate::ports::normalise_path;
        assert_eq!(normalise_path("/a/./b//c/../d"), "/a/b/d");
        assert_eq!(normalise_path("/../.."), "/");
    }
}
