//! ISO-8601 formatting and reading of Unix time, without a date library.

/// `2026-11-30T00:18:12Z` for a Unix time in seconds (UTC).
pub fn iso_utc(unix_seconds: i64) -> String {
    let days = unix_seconds.div_euclid(86_400);
    let secs = unix_seconds.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// Unix seconds of an RFC 3339 instant (`2026-12-01T09:30:00Z`,
/// `2026-12-01T09:30:00.5+02:00`, a space for the `T`) or of a date alone
/// (`2026-12-01`: its first second, UTC); `None` for anything else.
pub fn parse_instant(text: &str) -> Option<f64> {
    let text = text.trim();
    let digits = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
    };
    let (date, rest) = (text.get(..10)?, &text[10..]);
    let mut parts = date.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if (y.len(), m.len(), d.len()) != (4, 2, 2) {
        return None;
    }
    let (y, m, d) = (digits(y)?, digits(m)?, digits(d)?);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    let days = days_from_civil(y, m as u32, d as u32);
    if rest.is_empty() {
        return Some((days * 86_400) as f64);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    let zone_at = rest.find(['Z', 'z', '+', '-'])?;
    let (clock, zone) = rest.split_at(zone_at);
    let mut hms = clock.split(':');
    let (h, min) = (digits(hms.next()?)?, digits(hms.next()?)?);
    let sec: f64 = match hms.next() {
        Some(s)
            if s.get(..2)
                .is_some_and(|d| d.bytes().all(|b| b.is_ascii_digit())) =>
        {
            s.parse().ok()?
        }
        Some(_) => return None,
        None => 0.0,
    };
    if hms.next().is_some() || h > 23 || min > 59 || !(0.0..61.0).contains(&sec) {
        return None;
    }
    let offset = match zone {
        "Z" | "z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let (oh, om) = zone.get(1..)?.split_once(':')?;
            let (oh, om) = (digits(oh)?, digits(om)?);
            if oh > 23 || om > 59 {
                return None;
            }
            sign * (oh * 3600 + om * 60)
        }
    };
    Some((days * 86_400 + h * 3600 + min * 60 - offset) as f64 + sec)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Howard Hinnant's (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Howard Hinnant's days → (year, month, day) for the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_utc(1_796_004_692), "2026-11-30T02:11:32Z");
    }

    #[test]
    fn reads_what_it_writes_dates_and_offsets() {
        for t in [0, 951_782_400, 1_796_004_692, -86_400 * 365] {
            assert_eq!(parse_instant(&iso_utc(t)), Some(t as f64));
        }
        assert_eq!(parse_instant("2000-02-29"), Some(951_782_400.0));
        assert_eq!(
            parse_instant("2026-11-30 04:11:32.5+02:00"),
            Some(1_796_004_692.5)
        );
        assert_eq!(
            parse_instant("2026-11-29T21:11:32-05:00"),
            Some(1_796_004_692.0)
        );
        for bad in [
            "",
            "2026",
            "2026-13-01",
            "2026-02-30",
            "2026-1-01",
            "yesterday",
            "2026-12-01T25:00Z",
            "2026-12-01T10:00",
            "2026-12-01T10:00:00+2",
            "2026-12-01x",
            "2026-12-01T09:30:€Z",
            "2026-12-01T09:€:00Z",
            "2026-12-01T09:30:00+€:00",
            "2026-12-0€",
        ] {
            assert_eq!(parse_instant(bad), None, "{bad}");
        }
    }
}
