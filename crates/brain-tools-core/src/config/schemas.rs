//! The schemas of a config, shared: bindings with equal schemas get one copy of the
//! schema and one compiled validator.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::Arc;

use serde_json::Value;

use super::repeats::Duplicates;
use crate::schema::{CompiledSchema, SchemaError};

/// Schemas seen so far, so that bindings with equal schemas share one copy of the schema
/// and one compiled validator. Keyed by a hash of the value; equal hashes are confirmed by
/// comparing values, so no schema is serialized to find its twin. Schemas a streamed load
/// hands over as text are also keyed by their text, so a schema written again the same
/// way is found without being built as a value at all.
#[derive(Default)]
pub(crate) struct SchemaCache {
    by_value: HashMap<u64, Vec<Shared>>,
    /// Texts that loaded; a refused text is checked again wherever it is written.
    by_text: HashMap<String, Shared, BuildHasherDefault<FxHasher>>,
}

/// One shared schema: its value and its compiled validator.
pub(crate) type Shared = (Arc<Value>, CompiledSchema);

/// Why a binding's schema was not taken.
pub(crate) enum SchemaRefusal {
    /// Keys repeated inside it.
    Duplicates(Duplicates),
    /// It is not an object.
    NotObject,
    /// Its text is not JSON that a value can hold (a lone surrogate escape, say).
    NotJson(String),
    /// It does not compile.
    Invalid(SchemaError),
    /// It nests deeper than a JSON value read from the document may.
    TooDeep,
}

impl SchemaCache {
    /// The shared schema written as `text` at `path()`: found by its text or else checked
    /// for its depth (a raw text skipped serde_json's nesting limit), parsed with the
    /// duplicate-key check every value gets, then found by value or compiled. The path is
    /// only written for a text not seen before.
    pub(crate) fn compile_text(
        &mut self,
        text: &str,
        path: impl FnOnce() -> String,
    ) -> Result<Shared, SchemaRefusal> {
        if let Some(found) = self.by_text.get(text) {
            return Ok(found.clone());
        }
        if super::json::schema_too_deep(text) {
            return Err(SchemaRefusal::TooDeep);
        }
        let (value, duplicates) = super::json::parse_at(text, &path())
            .map_err(|e| SchemaRefusal::NotJson(crate::exact::unjudged(&e).to_string()))?;
        if !duplicates.is_empty() {
            return Err(SchemaRefusal::Duplicates(duplicates));
        }
        if !value.is_object() {
            return Err(SchemaRefusal::NotObject);
        }
        let shared = self.compile(&value).map_err(SchemaRefusal::Invalid)?;
        self.by_text.insert(text.to_owned(), shared.clone());
        Ok(shared)
    }

    pub(crate) fn compile(&mut self, schema: &Value) -> Result<Shared, SchemaError> {
        let mut hasher = FxHasher(0);
        hash_value(schema, &mut hasher);
        let same = self.by_value.entry(hasher.finish()).or_default();
        if let Some((shared, compiled)) = same.iter().find(|(known, _)| **known == *schema) {
            return Ok((shared.clone(), compiled.clone()));
        }
        let compiled = CompiledSchema::compile(schema)?;
        let shared = Arc::new(schema.clone());
        same.push((shared.clone(), compiled.clone()));
        Ok((shared, compiled))
    }
}

/// A fast, non-cryptographic hasher (the multiply-rotate scheme of rustc's FxHash): the
/// cache confirms every hit by comparing values, so only speed matters here.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        for &byte in chunks.remainder() {
            self.add(u64::from(byte));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Feeds `value` to `state`, consistently with `Value`'s equality: equal values hash
/// alike (object members are visited in the map's order, which for equal maps is the
/// same sorted order).
fn hash_value(value: &Value, state: &mut impl Hasher) {
    match value {
        Value::Null => state.write_u8(0),
        Value::Bool(b) => (1u8, b).hash(state),
        Value::Number(n) => (2u8, n.to_string()).hash(state),
        Value::String(s) => (3u8, s).hash(state),
        Value::Array(items) => {
            (4u8, items.len()).hash(state);
            items.iter().for_each(|item| hash_value(item, state));
        }
        Value::Object(members) => {
            (5u8, members.len()).hash(state);
            for (key, item) in members {
                key.hash(state);
                hash_value(item, state);
            }
        }
    }
}
