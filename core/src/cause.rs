//! The error under a port error, kept for `source()`. A leaf: ports and
//! the engine's errors both hold it.

/// The error underneath a port error (an OS error, say), kept so callers
/// can walk `source()`; two causes are equal when their messages are.
#[derive(Clone)]
pub struct Cause(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl Cause {
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(e))
    }
    pub fn get(&self) -> &(dyn std::error::Error + 'static) {
        &*self.0
    }
}

impl std::fmt::Debug for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl PartialEq for Cause {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_string() == other.0.to_string()
    }
}
