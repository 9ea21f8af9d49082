//! The test's subscriber: every span with its fields as finally recorded, every event,
//! and a writer for the formatter's text.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::registry::LookupSpan;

/// Field names to values, as text.
pub(crate) type Fields = BTreeMap<String, String>;

/// Spans (name, fields as finally recorded) and events (target, fields), in order.
#[derive(Clone, Default)]
pub(crate) struct Seen {
    spans: Arc<Mutex<BTreeMap<u64, (String, Fields)>>>,
    events: Arc<Mutex<Vec<(String, Fields)>>>,
}

struct Collect<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Collect<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(
            field.name().to_owned(),
            format!("{value:?}").trim_matches('"').to_owned(),
        );
    }
}

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Seen {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Collect(&mut fields));
        let name = attrs.metadata().name().to_owned();
        self.spans
            .lock()
            .expect("spans")
            .insert(id.into_u64(), (name, fields));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some((_, fields)) = self.spans.lock().expect("spans").get_mut(&id.into_u64()) {
            values.record(&mut Collect(fields));
        }
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Collect(&mut fields));
        let target = event.metadata().target().to_owned();
        self.events.lock().expect("events").push((target, fields));
    }
}

impl Seen {
    pub(crate) fn spans_named(&self, name: &str) -> Vec<BTreeMap<String, String>> {
        let spans = self.spans.lock().expect("spans");
        spans
            .values()
            .filter(|(n, _)| n == name)
            .map(|(_, f)| f.clone())
            .collect()
    }

    pub(crate) fn events_with(&self, target: &str) -> Vec<BTreeMap<String, String>> {
        let events = self.events.lock().expect("events");
        events
            .iter()
            .filter(|(t, _)| t == target)
            .map(|(_, f)| f.clone())
            .collect()
    }
}

impl Seen {
    pub(crate) fn clear(&self) {
        self.spans.lock().expect("spans").clear();
        self.events.lock().expect("events").clear();
    }
}

pub(crate) struct SharedWriter(pub(crate) Arc<Mutex<Vec<u8>>>);

impl std::io::Write for SharedWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("buffer").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
