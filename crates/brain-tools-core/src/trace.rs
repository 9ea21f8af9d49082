//! W3C trace context (`traceparent`, `tracestate`) that a call carries, checked so that a
//! malformed value is never passed on.
//!
//! The rules are those of the W3C Trace Context recommendation: `traceparent` is
//! `version-traceid-parentid-flags` in lowercase hex (version `ff` is invalid, the ids may
//! not be all zeros; a version above `00` may append fields after a `-`), and `tracestate`
//! is a list of at most 32 `key=value` members with the recommendation's characters, no
//! key twice, at most 512 bytes in all.

use std::fmt;

/// The longest `tracestate` passed on, in bytes (what the recommendation asks every
/// system to propagate at least).
pub const MAX_TRACESTATE: usize = 512;
/// The most `tracestate` members.
const MAX_MEMBERS: usize = 32;

/// A checked trace context for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    traceparent: String,
    tracestate: Option<String>,
}

/// Why a trace context value was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceContextError {
    /// `traceparent` does not follow the recommendation.
    #[error("traceparent is not a valid W3C trace context: {0}")]
    Traceparent(&'static str),
    /// `tracestate` does not follow the recommendation.
    #[error("tracestate is not a valid W3C trace context list: {0}")]
    Tracestate(&'static str),
}

impl TraceContext {
    /// A context from a `traceparent` value, checked. A later version's value is passed on
    /// as version `00`, from its first four fields (the highest version this crate knows,
    /// as the recommendation asks), so what is sent is always 55 characters.
    pub fn from_traceparent(value: &str) -> Result<Self, TraceContextError> {
        check_traceparent(value).map_err(TraceContextError::Traceparent)?;
        let traceparent = match value.get(..3) {
            Some("00-") => value.to_owned(),
            _ => format!("00-{}", value.get(3..55).unwrap_or_default()),
        };
        Ok(Self {
            traceparent,
            tracestate: None,
        })
    }

    /// The same context with a `tracestate`, checked (an empty one means none).
    pub fn with_tracestate(mut self, value: &str) -> Result<Self, TraceContextError> {
        let value = value.trim_matches([' ', '\t']);
        if value.is_empty() {
            self.tracestate = None;
            return Ok(self);
        }
        check_tracestate(value).map_err(TraceContextError::Tracestate)?;
        self.tracestate = Some(value.to_owned());
        Ok(self)
    }

    /// The `traceparent` value.
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` value, if any.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The context of the current `tracing` span, as OpenTelemetry sees it (an
    /// `OpenTelemetryLayer` from `tracing-opentelemetry` must be installed): `None` when
    /// the span has no valid OpenTelemetry context. With the `opentelemetry` feature.
    #[cfg(feature = "opentelemetry")]
    pub fn from_current_span() -> Option<Self> {
        use opentelemetry::trace::TraceContextExt;
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let context = tracing::Span::current().context();
        let span = context.span();
        let found = span.span_context();
        if !found.is_valid() {
            return None;
        }
        let parent = format!(
            "00-{}-{}-{:02x}",
            found.trace_id(),
            found.span_id(),
            found.trace_flags().to_u8()
        );
        let trace = Self::from_traceparent(&parent).ok()?;
        let state = found.trace_state().header();
        // A state the W3C rules refuse loses only itself.
        Some(match trace.clone().with_tracestate(&state) {
            Ok(with_state) => with_state,
            Err(_) => trace,
        })
    }

    /// The trace id (32 hex digits).
    pub fn trace_id(&self) -> &str {
        self.traceparent.get(3..35).unwrap_or_default()
    }
}

impl fmt::Display for TraceContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.traceparent)
    }
}

fn is_lower_hex(s: &str) -> bool {
    s.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn check_traceparent(value: &str) -> Result<(), &'static str> {
    let head = value
        .get(..55)
        .ok_or("it must be 55 characters (version 00)")?;
    let mut parts = head.split('-');
    let (Some(version), Some(trace_id), Some(parent_id), Some(flags), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err("it must be version-traceid-parentid-flags");
    };
    if version.len() != 2 || trace_id.len() != 32 || parent_id.len() != 16 || flags.len() != 2 {
        return Err("its fields must be 2, 32, 16 and 2 hex digits");
    }
    if ![version, trace_id, parent_id, flags]
        .iter()
        .all(|p| is_lower_hex(p))
    {
        return Err("its fields must be lowercase hex digits");
    }
    if version == "ff" {
        return Err("version ff is invalid");
    }
    if trace_id.bytes().all(|b| b == b'0') || parent_id.bytes().all(|b| b == b'0') {
        return Err("the trace id and parent id may not be all zeros");
    }
    let rest = &value[55..];
    match (version, rest.as_bytes().first()) {
        (_, None) => Ok(()),
        ("00", Some(_)) => Err("version 00 has exactly 55 characters"),
        (_, Some(b'-')) if rest.bytes().all(|b| (0x21..=0x7e).contains(&b)) => Ok(()),
        _ => Err("a later version's extra fields must follow a '-'"),
    }
}

fn check_tracestate(value: &str) -> Result<(), &'static str> {
    if value.len() > MAX_TRACESTATE {
        return Err("it is longer than 512 bytes");
    }
    let mut keys: Vec<&str> = Vec::new();
    for member in value.split(',') {
        let member = member.trim_matches([' ', '\t']);
        if member.is_empty() {
            continue;
        }
        let (key, val) = member.split_once('=').ok_or("a member has no '='")?;
        check_key(key)?;
        check_value(val)?;
        if keys.contains(&key) {
            return Err("a key appears twice");
        }
        keys.push(key);
    }
    if keys.len() > MAX_MEMBERS {
        return Err("it has more than 32 members");
    }
    Ok(())
}

fn check_key(key: &str) -> Result<(), &'static str> {
    let simple = |s: &str, max: usize, first_digit: bool| {
        let mut bytes = s.bytes();
        let first_ok = bytes
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || (first_digit && b.is_ascii_digit()));
        first_ok
            && s.len() <= max
            && bytes.all(|b| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || matches!(b, b'_' | b'-' | b'*' | b'/')
            })
    };
    let ok = match key.split_once('@') {
        None => simple(key, 256, true),
        Some((tenant, system)) => simple(tenant, 241, true) && simple(system, 14, false),
    };
    if ok {
        Ok(())
    } else {
        Err("a key has characters or a length the list does not allow")
    }
}

fn check_value(value: &str) -> Result<(), &'static str> {
    let ok = !value.is_empty()
        && value.len() <= 256
        && !value.ends_with(' ')
        && value
            .bytes()
            .all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=');
    if ok {
        Ok(())
    } else {
        Err("a value is empty, too long or has characters the list does not allow")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_recommendations_example_passes_and_reads_back() {
        let ctx = TraceContext::from_traceparent(GOOD).unwrap();
        assert_eq!(ctx.traceparent(), GOOD);
        assert_eq!(ctx.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        let ctx = ctx
            .with_tracestate("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE")
            .unwrap();
        assert_eq!(
            ctx.tracestate(),
            Some("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE")
        );
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra";
        assert_eq!(
            TraceContext::from_traceparent(later).unwrap().traceparent(),
            GOOD
        );
    }

    #[test]
    fn a_later_version_is_passed_on_as_version_00_whatever_it_appends() {
        let huge = format!(
            "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-{}",
            "x".repeat(100_000)
        );
        let ctx = TraceContext::from_traceparent(&huge).unwrap();
        assert_eq!(ctx.traceparent(), GOOD);
        assert_eq!(ctx.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        // Its first four fields must still be valid.
        let bad = "cc-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01-x";
        assert!(TraceContext::from_traceparent(bad).is_err());
    }

    #[cfg(feature = "opentelemetry")]
    #[test]
    fn the_current_spans_opentelemetry_context_is_taken() {
        use opentelemetry::trace::{
            SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
            TracerProvider as _,
        };
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        use tracing_subscriber::layer::SubscriberExt;

        let tracer = opentelemetry::trace::noop::NoopTracerProvider::new().tracer("test");
        let subscriber =
            tracing_subscriber::registry().with(tracing_opentelemetry::layer().with_tracer(tracer));
        tracing::subscriber::with_default(subscriber, || {
            assert_eq!(TraceContext::from_current_span(), None);
            let remote = SpanContext::new(
                TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap(),
                SpanId::from_hex("00f067aa0ba902b7").unwrap(),
                TraceFlags::SAMPLED,
                true,
                TraceState::from_key_value([("rojo", "1")]).unwrap(),
            );
            let span = tracing::info_span!("caller");
            let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(remote));
            let _inside = span.enter();
            let taken = TraceContext::from_current_span().unwrap();
            assert_eq!(taken.traceparent(), GOOD);
            assert_eq!(taken.tracestate(), Some("rojo=1"));
        });
    }

    #[test]
    fn malformed_traceparents_are_refused() {
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\n",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0é",
        ] {
            assert!(TraceContext::from_traceparent(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn malformed_tracestates_are_refused() {
        let ctx = TraceContext::from_traceparent(GOOD).unwrap();
        for bad in [
            "novalue",
            "Upper=1",
            "k=v,k=w",
            "k=v\r\nx: y",
            "k=a,b",
            &format!("k={}", "v".repeat(600)),
            &(0..33)
                .map(|i| format!("k{i}=v"))
                .collect::<Vec<_>>()
                .join(","),
        ] {
            assert!(ctx.clone().with_tracestate(bad).is_err(), "{bad:?}");
        }
        assert_eq!(ctx.clone().with_tracestate(" ").unwrap().tracestate(), None);
        assert!(ctx.with_tracestate("t@sys=1,a*b/c_d-e=x y").is_ok());
    }
}
