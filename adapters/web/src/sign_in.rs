//! How many wrong tokens an address may try at `/login`: a few per minute,
//! so a token cannot be guessed through the form at speed.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Wrong tokens allowed from one address per window.
const TRIES: u32 = 5;
const WINDOW: Duration = Duration::from_secs(60);
/// Addresses remembered before the stale ones are swept.
const SWEEP_AT: usize = 4096;

#[derive(Default)]
pub(crate) struct SignInLimit {
    failures: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

impl SignInLimit {
    /// `Err(seconds to wait)` when `ip` has used up its tries.
    pub(crate) fn check(&self, ip: IpAddr, now: Instant) -> Result<(), u64> {
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        match failures.get(&ip) {
            Some((since, n)) if *n >= TRIES && now.duration_since(*since) < WINDOW => {
                Err((WINDOW - now.duration_since(*since)).as_secs().max(1))
            }
            _ => Ok(()),
        }
    }

    /// Counts a wrong token from `ip`.
    pub(crate) fn failed(&self, ip: IpAddr, now: Instant) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.len() >= SWEEP_AT {
            failures.retain(|_, (since, _)| now.duration_since(*since) < WINDOW);
        }
        let entry = failures.entry(ip).or_insert((now, 0));
        if now.duration_since(entry.0) >= WINDOW {
            *entry = (now, 0);
        }
        entry.1 += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_wrong_tries_a_minute_then_a_wait() {
        let limit = SignInLimit::default();
        let ip: IpAddr = [192, 0, 2, 1].into();
        let start = Instant::now();
        for _ in 0..TRIES {
            assert!(limit.check(ip, start).is_ok());
            limit.failed(ip, start);
        }
        assert_eq!(limit.check(ip, start + Duration::from_secs(10)), Err(50));
        assert!(
            limit.check([192, 0, 2, 2].into(), start).is_ok(),
            "per address"
        );
        assert!(limit.check(ip, start + WINDOW).is_ok(), "the window passes");
    }
}
