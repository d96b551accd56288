//! How many wrong tokens may be tried at `/login`: a few per minute from
//! one address, so a token cannot be guessed through the form at speed,
//! and a few dozen from all addresses together, so many addresses (or
//! forged `X-Forwarded-For` entries) cannot guess faster either. Behind a
//! trusted proxy the address is the client's, as the proxy reports it, so
//! one person's typos do not lock out everyone behind it.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Wrong tokens allowed from one address per window.
const TRIES: u32 = 5;
const WINDOW: Duration = Duration::from_secs(60);
/// Wrong tokens allowed from all addresses together per window.
const TRIES_IN_ALL: u32 = 50;
/// Addresses remembered before the stale ones are swept.
const SWEEP_AT: usize = 4096;

#[derive(Default)]
pub(crate) struct SignInLimit {
    failures: Mutex<HashMap<IpAddr, (Instant, u32)>>,
    in_all: Mutex<Option<(Instant, u32)>>,
}

/// Which limit a sign-in ran into, and for how many more seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// This address's tries are used up.
    Address(u64),
    /// All addresses' tries together are used up.
    Everyone(u64),
}

impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Address(s) => write!(
                f,
                "Too many wrong tokens from this address ({TRIES} a minute); try again in {s} s."
            ),
            Self::Everyone(s) => write!(
                f,
                "Too many wrong tokens from all addresses together ({TRIES_IN_ALL} a minute); \
                 try again in {s} s."
            ),
        }
    }
}

fn left(window: Option<&(Instant, u32)>, tries: u32, now: Instant) -> Option<u64> {
    match window {
        Some((since, n)) if *n >= tries && now.duration_since(*since) < WINDOW => {
            Some((WINDOW - now.duration_since(*since)).as_secs().max(1))
        }
        _ => None,
    }
}

impl SignInLimit {
    /// `Err` when `ip`, or everyone, has used up the tries.
    pub(crate) fn check(&self, ip: IpAddr, now: Instant) -> Result<(), Wait> {
        let in_all = self.in_all.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(wait) = left(in_all.as_ref(), TRIES_IN_ALL, now) {
            return Err(Wait::Everyone(wait));
        }
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        match left(failures.get(&ip), TRIES, now) {
            Some(wait) => Err(Wait::Address(wait)),
            None => Ok(()),
        }
    }

    /// Counts a wrong token from `ip`.
    pub(crate) fn failed(&self, ip: IpAddr, now: Instant) {
        {
            let mut in_all = self.in_all.lock().unwrap_or_else(|p| p.into_inner());
            let entry = in_all.get_or_insert((now, 0));
            if now.duration_since(entry.0) >= WINDOW {
                *entry = (now, 0);
            }
            entry.1 += 1;
        }
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
        assert_eq!(
            limit.check(ip, start + Duration::from_secs(10)),
            Err(Wait::Address(50))
        );
        assert!(
            limit.check([192, 0, 2, 2].into(), start).is_ok(),
            "per address"
        );
        assert!(limit.check(ip, start + WINDOW).is_ok(), "the window passes");
    }

    #[test]
    fn many_addresses_together_are_limited_too() {
        let limit = SignInLimit::default();
        let start = Instant::now();
        for i in 0..TRIES_IN_ALL {
            limit.failed([198, 51, 100, i as u8].into(), start);
        }
        assert_eq!(
            limit.check([203, 0, 113, 9].into(), start),
            Err(Wait::Everyone(60))
        );
        assert!(limit.check([203, 0, 113, 9].into(), start + WINDOW).is_ok());
    }
}
