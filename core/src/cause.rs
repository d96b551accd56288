//! The error under a port error, kept for `source()`. A leaf: ports and
//! the engine's errors both hold it.

/// The error underneath a port error (an OS error, say), kept so callers
/// can walk `source()`; two causes are equal when their messages are.
#[derive(Clone)]
pub struct Cause(std::sync::Arc<dyn std::error::Error + Send + Sync>);

impl Cause {
    /// Keeps `e` as the cause.
    pub fn new(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(e))
    }
    /// The error kept.
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

/// The first error of type `T` in `e`'s chain of sources (`e` included):
/// what a caller asks to act on an OS error under a port's, and what the
/// tests walk to show a cause was kept.
pub fn in_chain<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut at = Some(e);
    while let Some(err) = at {
        if let Some(t) = err.downcast_ref::<T>() {
            return Some(t);
        }
        at = err.source();
    }
    None
}
