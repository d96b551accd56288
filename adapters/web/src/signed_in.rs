//! Who signed in at `/login`: the cookie holds a random session id, never
//! the token, valid for [`LIFETIME`] or until `/logout`. Ids are kept as
//! their SHA-256, so a memory dump names no live cookie.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// How long a sign-in lasts.
pub(crate) const LIFETIME: Duration = Duration::from_secs(12 * 3600);
/// Live sign-ins kept at most; the oldest goes first.
const MAX_SIGNED_IN: usize = 4096;

/// Signed-in sessions of the page, by a hash of their id.
#[derive(Default)]
pub struct SignedIn {
    until: Mutex<HashMap<[u8; 32], Instant>>,
}

fn key(id: &str) -> [u8; 32] {
    Sha256::digest(id.as_bytes()).into()
}

impl SignedIn {
    /// A new session id (256 random bits, hex), valid from `now`; `None`
    /// when the system has no randomness to give.
    pub fn start(&self, now: Instant) -> Option<String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).ok()?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut until = self.until.lock().unwrap_or_else(|p| p.into_inner());
        until.retain(|_, end| *end > now);
        if until.len() >= MAX_SIGNED_IN {
            if let Some(oldest) = until.iter().min_by_key(|(_, end)| **end).map(|(k, _)| *k) {
                until.remove(&oldest);
            }
        }
        until.insert(key(&id), now + LIFETIME);
        Some(id)
    }

    /// Whether session `id` is live at `now`.
    pub fn valid(&self, id: &str, now: Instant) -> bool {
        let until = self.until.lock().unwrap_or_else(|p| p.into_inner());
        until.get(&key(id)).is_some_and(|end| *end > now)
    }

    /// Ends session `id`.
    pub fn end(&self, id: &str) {
        let mut until = self.until.lock().unwrap_or_else(|p| p.into_inner());
        until.remove(&key(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_random_lasts_its_lifetime_and_ends_at_logout() {
        let s = SignedIn::default();
        let now = Instant::now();
        let a = s.start(now).unwrap();
        let b = s.start(now).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(s.valid(&a, now + LIFETIME - Duration::from_secs(1)));
        assert!(!s.valid(&a, now + LIFETIME));
        s.end(&b);
        assert!(!s.valid(&b, now));
        assert!(!s.valid("not-an-id", now));
    }
}
