//! From `DB_URL` to a pool: the URL parsed, its password masked wherever
//! it is shown, a password from `PGPASSFILE` when the URL has none, and
//! TLS by rustls when `sslmode` asks for it.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::names::mask_password;
use minirag_core::cause::Cause;
use minirag_core::ports::IndexError;
use postgres::config::{Host, SslMode};
use tokio_postgres_rustls::MakeRustlsConnect;

/// The connection pool.
pub type Pool = r2d2::Pool<Manager>;

/// Opens connections for the pool: without TLS where the URL says so or
/// names a Unix socket (rustls would refuse a socket path as a server
/// name before the mode is even looked at), with rustls otherwise.
pub struct Manager {
    config: postgres::Config,
    tls: Option<MakeRustlsConnect>,
}

impl Manager {
    /// A new connection to the target.
    pub fn connect(&self) -> Result<postgres::Client, postgres::Error> {
        match &self.tls {
            Some(tls) => self.config.connect(tls.clone()),
            None => self.config.connect(postgres::NoTls),
        }
    }
}

/// A connection error with its causes in its message ("error performing
/// TLS handshake: invalid peer certificate: UnknownIssuer"): r2d2 keeps
/// only the message of the last failure.
#[derive(Debug)]
pub struct ConnectError(pub String);

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConnectError {}

/// An error's message followed by those of its causes not already in it.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let m = c.to_string();
        if !out.contains(&m) {
            out.push_str(": ");
            out.push_str(&m);
        }
        cause = c.source();
    }
    out
}

impl r2d2::ManageConnection for Manager {
    type Connection = postgres::Client;
    type Error = ConnectError;

    fn connect(&self) -> Result<postgres::Client, ConnectError> {
        Manager::connect(self).map_err(|e| ConnectError(chain(&e)))
    }

    fn is_valid(&self, conn: &mut postgres::Client) -> Result<(), ConnectError> {
        conn.simple_query("")
            .map(|_| ())
            .map_err(|e| ConnectError(chain(&e)))
    }

    fn has_broken(&self, conn: &mut postgres::Client) -> bool {
        conn.is_closed()
    }
}

/// How many connections one process keeps: enough for concurrent MCP/HTTP
/// queries beside a sync, few enough for many processes on one server.
const POOL_SIZE: u32 = 8;

fn refused(url: &str, why: impl std::fmt::Display) -> IndexError {
    IndexError::Storage { cause: None,
        reason: format!(
            "DB_URL '{}' is invalid: {why}; expected postgres://user[:password]@host[:port]/database[?sslmode=require]",
            mask_password(url)
        ),
    }
}

/// Parses `DB_URL`. libpq's `sslmode=verify-ca` / `verify-full` are read
/// as `require`: rustls always verifies the server's certificate.
pub fn parse(url: &str) -> Result<postgres::Config, IndexError> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(refused(
            url,
            "it must start with postgres:// or postgresql://",
        ));
    }
    let url = url
        .replace("sslmode=verify-full", "sslmode=require")
        .replace("sslmode=verify-ca", "sslmode=require");
    let mut config = postgres::Config::from_str(&url).map_err(|e| refused(&url, e))?;
    if config.get_hosts().is_empty() {
        config.host("localhost");
    }
    // A Unix socket has no TLS (libpq never tries it there either).
    if config
        .get_hosts()
        .iter()
        .all(|h| matches!(h, Host::Unix(_)))
    {
        config.ssl_mode(SslMode::Disable);
    }
    if config.get_user().is_none() {
        return Err(refused(&url, "it names no user"));
    }
    if config.get_dbname().is_none() {
        let user = config.get_user().unwrap_or_default().to_string();
        config.dbname(&user);
    }
    if config.get_application_name().is_none() {
        config.application_name(&format!("minirag-mcp pid {}", std::process::id()));
    }
    config.connect_timeout(Duration::from_secs(10));
    Ok(config)
}

/// Fills in the password from a pgpass file (`host:port:db:user:password`,
/// `*` matches anything, `\:` and `\\` escape) when the URL has none.
pub fn apply_passfile(config: &mut postgres::Config, passfile: &Path) {
    if config.get_password().is_some() {
        return;
    }
    let Ok(text) = std::fs::read_to_string(passfile) else {
        return;
    };
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let db = config.get_dbname().unwrap_or_default().to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    for line in text.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            continue;
        }
        // libpq matches a Unix socket against `localhost` too.
        let host_ok = fields[0] == "*"
            || fields[0] == host
            || (fields[0] == "localhost" && host.starts_with('/'));
        let matches = |f: &str, v: &str| f == "*" || f == v;
        if host_ok
            && matches(&fields[1], &port)
            && matches(&fields[2], &db)
            && matches(&fields[3], &user)
        {
            config.password(fields[4].as_bytes());
            return;
        }
    }
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    fields.last_mut().expect("one field").push(n);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

/// rustls with the web's root certificates, plus the PEM file named by
/// `PGSSLROOTCERT` (a team's own CA) when given.
fn tls_connector(root_cert: Option<&Path>) -> Result<MakeRustlsConnect, IndexError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = root_cert {
        use rustls::pki_types::pem::PemObject;
        let certs = rustls::pki_types::CertificateDer::pem_file_iter(path).map_err(|e| {
            IndexError::Storage { cause: None,
                reason: format!(
                    "PGSSLROOTCERT '{}' cannot be read: {e}; point it at a PEM file of CA certificates",
                    path.display()
                ),
            }
        })?;
        for cert in certs.flatten() {
            let _ = roots.add(cert);
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| IndexError::Storage {
            cause: None,
            reason: format!("TLS setup failed: {e}"),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// Where to connect, as given by the user (the URL is kept only masked).
pub struct Target {
    /// Where to connect.
    pub config: postgres::Config,
    /// The URL with its password masked, for messages.
    pub masked_url: String,
}

impl Target {
    /// Reads `url`, with the password from `passfile` when it has none.
    pub fn new(url: &str, passfile: Option<&Path>) -> Result<Self, IndexError> {
        let mut config = parse(url)?;
        if let Some(p) = passfile {
            apply_passfile(&mut config, p);
        }
        Ok(Self {
            config,
            masked_url: mask_password(url),
        })
    }

    /// What opens connections: the pool's, and the sync lock's own.
    pub fn manager(&self, root_cert: Option<&Path>) -> Result<Manager, IndexError> {
        let tls = if self.config.get_ssl_mode() == SslMode::Disable {
            None
        } else {
            Some(tls_connector(root_cert)?)
        };
        Ok(Manager {
            config: self.config.clone(),
            tls,
        })
    }

    /// A pool of connections, TLS checked against `root_cert` when given.
    pub fn pool(&self, root_cert: Option<&Path>) -> Result<Pool, IndexError> {
        let manager = self.manager(root_cert)?;
        r2d2::Pool::builder()
            .max_size(POOL_SIZE)
            .min_idle(Some(0))
            .connection_timeout(Duration::from_secs(15))
            .build(manager)
            .map_err(|e| self.unreachable(e))
    }

    /// The error for a server that cannot be reached, with what to check.
    pub fn unreachable(&self, e: impl std::error::Error + Send + Sync + 'static) -> IndexError {
        // The whole chain in the message: a TLS refusal says why only in
        // the errors under the client's.
        let text = chain(&e);
        let cause = Cause::new(e);
        let e = text;
        let fix = if e.contains("certificate") {
            "the server's TLS certificate was refused: when your own CA signed it, point PGSSLROOTCERT at that CA's PEM file; the host in DB_URL must be a name the certificate carries"
        } else {
            "check that the server runs and DB_URL (host, port, user, password or PGPASSFILE, sslmode) is right"
        };
        IndexError::Storage {
            reason: format!(
                "cannot connect to PostgreSQL at {}: {e}; {fix}",
                self.masked_url
            ),
            cause: Some(cause),
        }
    }

    /// One connection now, so a bad server, password or certificate is
    /// reported at once with its cause (a pool retries until its timeout).
    pub fn connect_once(&self, root_cert: Option<&Path>) -> Result<postgres::Client, IndexError> {
        self.manager(root_cert)?
            .connect()
            .map_err(|e| self.unreachable(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_url_is_refused_by_name_without_its_password() {
        let e = parse("mysql://alice:pw@db/rag").unwrap_err().to_string();
        assert!(
            e.contains("DB_URL") && e.contains("postgres://") && !e.contains("pw@"),
            "{e}"
        );
        let e = parse("postgres://alice:pw@db:notaport/rag")
            .unwrap_err()
            .to_string();
        assert!(e.contains("DB_URL") && !e.contains(":pw@"), "{e}");
    }

    #[test]
    fn pgpass_fills_a_missing_password() {
        let dir = std::env::temp_dir().join(format!("minirag-pgpass-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pgpass");
        std::fs::write(
            &file,
            "# comment\nother:5432:*:alice:wrong\ndb.example:*:rag:alice:pa\\:ss\n",
        )
        .unwrap();
        let mut c = parse("postgres://alice@db.example/rag").unwrap();
        apply_passfile(&mut c, &file);
        assert_eq!(c.get_password(), Some(&b"pa:ss"[..]));
        let mut c = parse("postgres://alice:given@db.example/rag").unwrap();
        apply_passfile(&mut c, &file);
        assert_eq!(c.get_password(), Some(&b"given"[..]));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
