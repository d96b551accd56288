//! What MCP 2026-07-28 adds to an answer: cache hints that say how long a
//! list stays true, and the server's identity in `_meta`. Answers to older
//! revisions carry neither.

use rmcp::model::{CacheScope, Implementation, MetaObject, ProtocolVersion};
use rmcp::service::RequestContext;
use rmcp::RoleServer;

/// The tool list and the resource template are fixed for this binary, and
/// the same for every caller. An upgrade restarts the server, so a client
/// that keeps them an hour sees a new version within that hour.
const FIXED_TTL_MS: u64 = 3_600_000;

/// Whether the request speaks 2026-07-28 or later.
pub(crate) fn is_modern(ctx: &RequestContext<RoleServer>) -> bool {
    speaks_modern(ctx.protocol_version().as_ref())
}

/// Whether a session's revision is 2026-07-28 or later.
pub(crate) fn speaks_modern(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| *v >= ProtocolVersion::V_2026_07_28)
}

/// `ttlMs`, `cacheScope` and `_meta` for a list or read answer.
pub(crate) struct Hints {
    pub ttl_ms: Option<u64>,
    pub cache_scope: Option<CacheScope>,
    pub meta: Option<MetaObject>,
}

impl Hints {
    /// The tool list and the template: an hour, shareable between callers.
    pub(crate) fn fixed(ctx: &RequestContext<RoleServer>) -> Self {
        Self::modern(ctx, FIXED_TTL_MS, CacheScope::Public)
    }

    /// The documents: any sync, here or in another process sharing the
    /// index, may change them, so stale at once; and they are the user's,
    /// so never shared between authorization contexts.
    pub(crate) fn documents(ctx: &RequestContext<RoleServer>) -> Self {
        Self::modern(ctx, 0, CacheScope::Private)
    }

    fn modern(ctx: &RequestContext<RoleServer>, ttl_ms: u64, scope: CacheScope) -> Self {
        if !is_modern(ctx) {
            return Self {
                ttl_ms: None,
                cache_scope: None,
                meta: None,
            };
        }
        Self {
            ttl_ms: Some(ttl_ms),
            cache_scope: Some(scope),
            meta: Some(server_meta()),
        }
    }
}

/// `_meta` naming this server, as 2026-07-28 asks of every answer.
pub(crate) fn server_meta() -> MetaObject {
    let info = Implementation::new("minirag-mcp", crate::app::VERSION);
    let mut meta = MetaObject::default();
    if let Ok(v) = serde_json::to_value(info) {
        meta.0
            .insert("io.modelcontextprotocol/serverInfo".into(), v);
    }
    meta
}
