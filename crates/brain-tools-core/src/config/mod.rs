//! The host config: a JSON document whose `tools` array holds the tool bindings.
//!
//! Loading checks everything at once and reports every problem with its JSON path; see
//! `docs/config.md` for the format and its rules.

mod error;
mod json;
mod parse;
mod rules;
mod suggest;

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

pub use error::{ConfigError, ConfigErrors};

use crate::binding::Binding;
use error::{Errors, field_path, index_path};
use parse::{SchemaCache, parse_binding, unknown_fields};

/// The largest config file [`HostConfig::load_path`] reads: 16 MiB.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// The fields of the document itself.
const ROOT_FIELDS: &[&str] = &["tools"];

/// A loaded, validated host config: the registry of tool bindings by name.
#[derive(Clone, Debug)]
pub struct HostConfig {
    tools: Vec<Arc<Binding>>,
    by_name: HashMap<String, usize>,
}

impl HostConfig {
    /// Parses and checks a host config document.
    pub fn load(json: &str) -> Result<Self, ConfigErrors> {
        let (document, duplicates) = json::parse(json).map_err(|error| {
            ConfigErrors::root(format!(
                "not valid JSON at line {} column {}: {}",
                error.line(),
                error.column(),
                strip_position(&error.to_string())
            ))
        })?;
        let mut errors = Errors::default();
        for path in &duplicates {
            errors.push(path, "duplicate field; only the last value would count");
        }
        Self::check(&document, errors)
    }

    /// Reads, parses and checks the host config file at `path` (at most [`MAX_CONFIG_BYTES`]).
    pub fn load_path(path: &Path) -> Result<Self, ConfigErrors> {
        let cannot = |error: std::io::Error| {
            ConfigErrors::root(format!("cannot read {}: {error}", path.display()))
        };
        let file = std::fs::File::open(path).map_err(cannot)?;
        let mut text = String::new();
        file.take(MAX_CONFIG_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(cannot)?;
        if text.len() as u64 > MAX_CONFIG_BYTES {
            return Err(ConfigErrors::root(format!(
                "{} is larger than {MAX_CONFIG_BYTES} bytes",
                path.display()
            )));
        }
        Self::load(&text)
    }

    /// Checks a host config document already parsed as JSON.
    ///
    /// A parsed value cannot show keys repeated in the text; [`Self::load`] reports those.
    pub fn from_value(document: &Value) -> Result<Self, ConfigErrors> {
        Self::check(document, Errors::default())
    }

    /// Checks the document, adding to the problems already found in `errors`.
    fn check(document: &Value, mut errors: Errors) -> Result<Self, ConfigErrors> {
        let Some(root) = document.as_object() else {
            errors.push("", "must be a JSON object with a \"tools\" array");
            return Err(errors.into_errors());
        };
        let mut tools = Vec::new();
        match root.get("tools") {
            None => errors.push("tools", "required field is missing"),
            Some(Value::Array(list)) => {
                let mut cache = SchemaCache::default();
                let mut first_use: HashMap<&str, String> = HashMap::new();
                for (i, value) in list.iter().enumerate() {
                    let path = index_path("tools", i);
                    // Duplicate names are found even in bindings with other problems.
                    if let Some(name) = value.get("name").and_then(Value::as_str) {
                        let name_path = field_path(&path, "name");
                        if let Some(first) = first_use.get(name) {
                            errors.push(
                                &name_path,
                                format!("duplicate name \"{name}\" (first used at {first})"),
                            );
                        } else {
                            first_use.insert(name, name_path);
                        }
                    }
                    if let Some(binding) = parse_binding(value, &path, &mut cache, &mut errors) {
                        tools.push(Arc::new(binding));
                    }
                }
            }
            Some(_) => errors.push("tools", "must be an array of tool bindings"),
        }
        unknown_fields(root, "", ROOT_FIELDS, &mut errors);
        if let Some(errors) = ConfigErrors::from_vec(errors.0) {
            return Err(errors);
        }
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, binding)| (binding.name.clone(), i))
            .collect();
        Ok(Self { tools, by_name })
    }

    /// Every binding, in config order.
    pub fn tools(&self) -> &[Arc<Binding>] {
        &self.tools
    }

    /// The binding the model knows as `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Binding>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }
}

/// Checks one binding on its own, with paths relative to it.
pub(crate) fn parse_single_binding(value: &Value) -> Result<Binding, ConfigErrors> {
    let mut errors = Errors::default();
    let binding = parse_binding(value, "", &mut SchemaCache::default(), &mut errors);
    match (binding, ConfigErrors::from_vec(errors.0)) {
        (Some(binding), None) => Ok(binding),
        (_, Some(errors)) => Err(errors),
        (None, None) => Err(ConfigErrors::root("invalid binding")),
    }
}

/// serde_json appends " at line L column C"; the message already says where.
fn strip_position(message: &str) -> &str {
    message
        .rfind(" at line ")
        .map_or(message, |cut| &message[..cut])
}

#[cfg(test)]
mod tests;
