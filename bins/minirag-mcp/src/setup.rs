//! `minirag-mcp setup claude|cursor|codex|vscode`: the MCP client
//! configuration for this binary, printed, or merged into the client's file
//! with `--write` (other servers' entries are never touched).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use minirag_core::config::Config;
use serde_json::{json, Map, Value};

/// The server's name in every client's configuration.
pub(crate) const NAME: &str = "minirag";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Client {
    /// Claude Code: `.mcp.json` in the project folder.
    Claude,
    /// Cursor: `.cursor/mcp.json` in the project folder.
    Cursor,
    /// Codex: `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`).
    Codex,
    /// VS Code: `.vscode/mcp.json` in the project folder.
    Vscode,
}

/// What the entry starts: this binary, with the configured roots.
pub(crate) struct Entry {
    pub command: String,
    pub env: Vec<(String, String)>,
}

impl Entry {
    /// Every setting that decides which index and which model the server
    /// opens, resolved as this process resolved them (flags first, then the
    /// environment), so the client's server opens the index just synced.
    /// `remote`: the embedding server's settings as this process resolved
    /// them (the key file's path is written, never the key it holds).
    pub(crate) fn new(
        roots: &[String],
        config: &Config,
        remote: &[(String, String)],
    ) -> Result<Self> {
        let exe = std::env::current_exe().context("cannot tell where this binary is")?;
        let exe = exe.canonicalize().unwrap_or(exe);
        let mut env = settings(roots, config);
        env.extend(remote.iter().cloned());
        Ok(Self {
            command: exe.display().to_string(),
            env,
        })
    }
}

fn settings(roots: &[String], config: &Config) -> Vec<(String, String)> {
    let mut env = vec![("BASE_DIRS".to_string(), json!(roots).to_string())];
    let mut set = |k: &str, v: &str| env.push((k.to_string(), v.to_string()));
    match &config.database {
        Some(db) => {
            set("DB_URL", &db.url);
            set("DB_SCHEMA", &db.schema);
        }
        None => set("DB_PATH", &config.db_path),
    }
    set("CACHE_DIR", &config.cache_dir);
    set("MODEL_NAME", &config.model_name);
    if let Some(m) = &config.model_path {
        set("MODEL_PATH", m);
    }
    if let Some(q) = &config.prompts.query {
        set("MODEL_QUERY_PREFIX", q);
    }
    if let Some(p) = &config.prompts.passage {
        set("MODEL_PASSAGE_PREFIX", p);
    }
    if config.hub_offline {
        set("HF_HUB_OFFLINE", "1");
    }
    env
}

/// The client's configuration file.
pub(crate) fn default_file(client: Client, cwd: &Path) -> Result<PathBuf> {
    Ok(match client {
        Client::Claude => cwd.join(".mcp.json"),
        Client::Cursor => cwd.join(".cursor/mcp.json"),
        Client::Vscode => cwd.join(".vscode/mcp.json"),
        Client::Codex => match std::env::var_os("CODEX_HOME") {
            Some(home) => PathBuf::from(home).join("config.toml"),
            None => PathBuf::from(std::env::var_os("HOME").ok_or_else(|| {
                anyhow!("HOME is not set; pass --file with the path of Codex's config.toml")
            })?)
            .join(".codex/config.toml"),
        },
    })
}

fn json_entry(client: Client, e: &Entry) -> Value {
    let env: Map<String, Value> = e
        .env
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    match client {
        Client::Vscode => json!({"type": "stdio", "command": e.command, "args": [], "env": env}),
        _ => json!({"command": e.command, "args": [], "env": env}),
    }
}

/// The key under which a JSON client keeps its servers.
fn servers_key(client: Client) -> &'static str {
    match client {
        Client::Vscode => "servers",
        _ => "mcpServers",
    }
}

/// The configuration text with our entry merged in (`existing` may be empty).
pub(crate) fn merged(client: Client, e: &Entry, existing: &str, file: &Path) -> Result<String> {
    if client == Client::Codex {
        let mut doc: toml_edit::DocumentMut = existing.parse().map_err(|err| {
            anyhow!(
                "{} is not valid TOML ({err}); fix it or pass --file with another path",
                file.display()
            )
        })?;
        let servers = doc
            .entry("mcp_servers")
            .or_insert_with(|| {
                let mut t = toml_edit::Table::new();
                t.set_implicit(true);
                toml_edit::Item::Table(t)
            })
            .as_table_mut()
            .ok_or_else(|| anyhow!("{}: mcp_servers is not a table", file.display()))?;
        let mut ours = toml_edit::Table::new();
        ours["command"] = toml_edit::value(&e.command);
        ours["args"] = toml_edit::value(toml_edit::Array::new());
        let mut env = toml_edit::InlineTable::new();
        for (k, v) in &e.env {
            env.insert(k, v.as_str().into());
        }
        ours["env"] = toml_edit::value(env);
        servers.insert(NAME, toml_edit::Item::Table(ours));
        return Ok(doc.to_string());
    }
    let mut root: Value = if existing.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(existing).map_err(|err| {
            anyhow!(
                "{} is not valid JSON ({err}); fix it or pass --file with another path",
                file.display()
            )
        })?
    };
    let Some(obj) = root.as_object_mut() else {
        bail!(
            "{} does not hold a JSON object; fix it or pass --file with another path",
            file.display()
        );
    };
    let servers = obj.entry(servers_key(client)).or_insert_with(|| json!({}));
    let Some(servers) = servers.as_object_mut() else {
        bail!(
            "{}: \"{}\" is not an object",
            file.display(),
            servers_key(client)
        );
    };
    servers.insert(NAME.into(), json_entry(client, e));
    Ok(serde_json::to_string_pretty(&root)? + "\n")
}

/// Our entry as a client's file holds it (`None` when the file or the entry
/// is missing), for `setup --check`.
pub(crate) fn read(client: Client, file: &Path) -> Result<Option<Entry>> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => bail!("cannot read {}: {err}", file.display()),
    };
    if client == Client::Codex {
        let doc: toml_edit::DocumentMut = text.parse().map_err(|err| {
            anyhow!(
                "{} is not valid TOML ({err}); fix it or pass --file with another path",
                file.display()
            )
        })?;
        let Some(ours) = doc.get("mcp_servers").and_then(|s| s.get(NAME)) else {
            return Ok(None);
        };
        let command = ours
            .get("command")
            .and_then(|c| c.as_str())
            .unwrap_or_default();
        let env = ours
            .get("env")
            .and_then(|e| e.as_table_like())
            .map(|t| {
                t.iter()
                    .filter_map(|(k, v)| Some((k.to_string(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        return Ok(Some(Entry {
            command: command.to_string(),
            env,
        }));
    }
    let root: Value = serde_json::from_str(&text).map_err(|err| {
        anyhow!(
            "{} is not valid JSON ({err}); fix it or pass --file with another path",
            file.display()
        )
    })?;
    let ours = &root[servers_key(client)][NAME];
    if ours.is_null() {
        return Ok(None);
    }
    let env = ours["env"]
        .as_object()
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    Ok(Some(Entry {
        command: ours["command"].as_str().unwrap_or_default().to_string(),
        env,
    }))
}

/// Writes the merged configuration through a temporary file and a rename.
pub(crate) fn write(client: Client, e: &Entry, file: &Path) -> Result<()> {
    let existing = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => bail!("cannot read {}: {err}", file.display()),
    };
    let text = merged(client, e, &existing, file)?;
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let tmp = file.with_extension("minirag-tmp");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("cannot replace {}", file.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            command: "/usr/local/bin/minirag-mcp".into(),
            env: vec![("BASE_DIRS".into(), "[\"/docs\"]".into())],
        }
    }

    #[test]
    fn json_clients_keep_other_servers() {
        let existing = r#"{"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}"#;
        let out = merged(Client::Claude, &entry(), existing, Path::new(".mcp.json")).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(v["theme"], "dark");
        assert_eq!(
            v["mcpServers"]["minirag"]["command"],
            "/usr/local/bin/minirag-mcp"
        );
        assert_eq!(
            v["mcpServers"]["minirag"]["env"]["BASE_DIRS"],
            "[\"/docs\"]"
        );
        let vs = merged(Client::Vscode, &entry(), "", Path::new("mcp.json")).unwrap();
        let v: Value = serde_json::from_str(&vs).unwrap();
        assert_eq!(v["servers"]["minirag"]["type"], "stdio");
    }

    #[test]
    fn codex_toml_keeps_other_servers_and_comments() {
        let existing = "# mine\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let out = merged(Client::Codex, &entry(), existing, Path::new("config.toml")).unwrap();
        assert!(
            out.contains("# mine") && out.contains("[mcp_servers.other]"),
            "{out}"
        );
        let doc: toml_edit::DocumentMut = out.parse().unwrap();
        assert_eq!(
            doc["mcp_servers"]["minirag"]["command"].as_str(),
            Some("/usr/local/bin/minirag-mcp")
        );
        assert_eq!(doc["model"].as_str(), Some("o3"));
    }

    #[test]
    fn an_entry_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        for client in [Client::Claude, Client::Vscode, Client::Codex] {
            let file = dir.path().join(format!("{client:?}.conf"));
            assert!(read(client, &file).unwrap().is_none());
            write(client, &entry(), &file).unwrap();
            let back = read(client, &file).unwrap().expect("the entry");
            assert_eq!(back.command, entry().command, "{client:?}");
            assert_eq!(back.env, entry().env, "{client:?}");
        }
    }

    #[test]
    fn a_broken_file_is_named_not_overwritten() {
        let err = merged(
            Client::Cursor,
            &entry(),
            "{not json",
            Path::new("/p/mcp.json"),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("/p/mcp.json") && err.to_string().contains("not valid JSON"),
            "{err}"
        );
    }
}
