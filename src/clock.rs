//! The clock seam. Wall time and durations come from here, so that a pinned clock
//! (`SOURCE_DATE_EPOCH`, or the hidden `--current-time` flag) makes outputs byte-identical.

use std::time::{Duration, Instant};

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

#[derive(Debug, Clone)]
pub enum Clock {
    System,
    /// Every reading is this instant; every measured duration is zero.
    Pinned(OffsetDateTime),
}

/// A started measurement; `elapsed` is zero under a pinned clock.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    start: Option<Instant>,
}

impl Stopwatch {
    pub fn elapsed(&self) -> Duration {
        self.start.map(|s| s.elapsed()).unwrap_or_default()
    }
}

impl Clock {
    /// `--current-time` wins, then `SOURCE_DATE_EPOCH`, then the system clock.
    pub fn from_env(current_time: Option<&str>) -> Result<Clock, ClockError> {
        if let Some(t) = current_time {
            let parsed = OffsetDateTime::parse(t, &Rfc3339)
                .map_err(|e| ClockError::NotRfc3339(t.to_string(), e))?;
            return Ok(Clock::Pinned(parsed));
        }
        match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(v) if !v.trim().is_empty() => {
                let secs: i64 = v
                    .trim()
                    .parse()
                    .map_err(|_| ClockError::NotSeconds(v.clone()))?;
                let t = OffsetDateTime::from_unix_timestamp(secs)
                    .map_err(|e| ClockError::OutOfRange(v.clone(), e))?;
                Ok(Clock::Pinned(t))
            }
            _ => Ok(Clock::System),
        }
    }

    pub fn now(&self) -> OffsetDateTime {
        match self {
            Clock::System => OffsetDateTime::now_utc(),
            Clock::Pinned(t) => *t,
        }
    }

    pub fn is_pinned(&self) -> bool {
        matches!(self, Clock::Pinned(_))
    }

    pub fn stopwatch(&self) -> Stopwatch {
        match self {
            Clock::System => Stopwatch {
                start: Some(Instant::now()),
            },
            Clock::Pinned(_) => Stopwatch { start: None },
        }
    }
}

/// RFC 3339 in UTC with whole seconds, as `2026-11-29T10:00:00Z`.
pub fn rfc3339(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// Why the time given (`--current-time`, `SOURCE_DATE_EPOCH`) cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    #[error("--current-time `{0}` is not RFC 3339: {1}")]
    NotRfc3339(String, time::error::Parse),
    #[error("SOURCE_DATE_EPOCH `{0}` is not a whole number of seconds")]
    NotSeconds(String),
    #[error("SOURCE_DATE_EPOCH `{0}` is out of range: {1}")]
    OutOfRange(String, time::error::ComponentRange),
}
