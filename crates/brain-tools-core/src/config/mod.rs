//! The host config: a JSON document whose `tools` array holds the tool bindings.
//!
//! Loading checks everything at once and reports every problem with its JSON path; see
//! `docs/config.md` for the format and its rules.

mod error;
mod json;
mod parse;
mod repeats;
pub(crate) mod rules;
mod schemas;
mod store;
mod suggest;
mod written;

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

pub use error::{ConfigError, ConfigErrors};
pub use store::TokenStoreConfig;

use crate::binding::Binding;
use crate::exact::strip_position;
use error::{Errors, field_path, index_path};
use parse::{UrlMemo, parse_binding, unknown_fields};
use schemas::SchemaCache;
use written::Written;

/// The largest config file [`HostConfig::load_path`] reads: 16 MiB.
pub const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// The fields of the document itself.
const ROOT_FIELDS: &[&str] = &["tools", ALLOW_PRIVATE, store::TOKEN_STORE];

/// The root field that lets URLs a server names reach private networks.
const ALLOW_PRIVATE: &str = "allow_private_auth_destinations";

/// A loaded, validated host config: the registry of tool bindings by name.
#[derive(Clone, Debug)]
pub struct HostConfig {
    tools: Vec<Arc<Binding>>,
    by_name: HashMap<String, usize>,
    allow_private_auth_destinations: bool,
    token_store: Option<TokenStoreConfig>,
}

impl HostConfig {
    /// Parses and checks a host config document.
    ///
    /// Each binding is checked as soon as it is parsed and its parsed form dropped, so the
    /// document is never held whole as values; equal schemas share one copy and one
    /// compiled validator.
    pub fn load(json: &str) -> Result<Self, ConfigErrors> {
        let mut checker = Checker::default();
        let streamed = json::stream(json, &mut |index, value, duplicates| {
            let path = index_path("tools", index);
            repeats::list(&duplicates, &mut checker.errors);
            checker.tool(&path, value.as_ref());
        });
        let (root, repeats) = streamed.map_err(|error| {
            ConfigErrors::root(format!(
                "not valid JSON at line {} column {}: {}",
                error.line(),
                error.column(),
                strip_position(&error.to_string())
            ))
        })?;
        repeats.report(&mut checker.errors, "");
        if !root.is_object {
            checker.errors.push("", NOT_AN_OBJECT);
            return Err(checker.errors.into_errors());
        }
        if root.tools_not_array {
            checker.errors.push("tools", NOT_AN_ARRAY);
        }
        for (key, value) in &root.others {
            checker.root_field(key, value);
        }
        checker.finish(root.keys.iter().map(String::as_str))
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
    fn check(document: &Value, errors: Errors) -> Result<Self, ConfigErrors> {
        let mut checker = Checker {
            errors,
            ..Checker::default()
        };
        let Some(root) = document.as_object() else {
            checker.errors.push("", NOT_AN_OBJECT);
            return Err(checker.errors.into_errors());
        };
        match root.get("tools") {
            Some(Value::Array(list)) => {
                for (i, value) in list.iter().enumerate() {
                    let written = value.as_object().map(Written::of_map);
                    checker.tool(&index_path("tools", i), written.as_ref());
                }
            }
            Some(_) => checker.errors.push("tools", NOT_AN_ARRAY),
            None => {}
        }
        for (key, value) in root {
            checker.root_field(key, value);
        }
        checker.finish(root.keys().map(String::as_str))
    }

    /// Every binding, in config order.
    pub fn tools(&self) -> &[Arc<Binding>] {
        &self.tools
    }

    /// The binding the model knows as `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Binding>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// `allow_private_auth_destinations` (default `false`): whether URLs a server names
    /// for authorization (its metadata, its authorization server's endpoints) may reach
    /// private, link-local and unique-local addresses whatever network the server is on.
    /// Loopback stays reachable only for servers on loopback. See
    /// `docs/untrusted-servers.md`.
    pub fn allow_private_auth_destinations(&self) -> bool {
        self.allow_private_auth_destinations
    }

    /// `token_store`, if set: the store on Postgres every host process shares OAuth
    /// tokens through. See `docs/config.md`.
    pub fn token_store(&self) -> Option<&TokenStoreConfig> {
        self.token_store.as_ref()
    }
}

const NOT_AN_OBJECT: &str = "must be a JSON object with a \"tools\" array";
const NOT_AN_ARRAY: &str = "must be an array of tool bindings";

/// The bindings checked so far and every problem found.
#[derive(Default)]
struct Checker {
    errors: Errors,
    cache: SchemaCache,
    urls: UrlMemo,
    tools: Vec<Arc<Binding>>,
    /// The binding that first used each name (its path).
    first_use: HashMap<String, String>,
    /// Each server's `max_in_flight` and the binding that first gave it (its path).
    limits: HashMap<String, (u32, String)>,
    /// The root's `allow_private_auth_destinations`.
    allow_private: bool,
    /// The root's `token_store`.
    token_store: Option<TokenStoreConfig>,
}

impl Checker {
    /// Checks a root field other than `tools` (unknown ones are reported by `finish`).
    fn root_field(&mut self, key: &str, value: &Value) {
        if key == store::TOKEN_STORE {
            self.token_store = store::parse(value, &mut self.errors);
            return;
        }
        if key != ALLOW_PRIVATE {
            return;
        }
        match value {
            Value::Bool(allow) => self.allow_private = *allow,
            _ => self.errors.push(ALLOW_PRIVATE, "must be true or false"),
        }
    }

    /// Checks the binding at `path` (an element of `tools`).
    fn tool(&mut self, path: &str, binding: Option<&Written<'_>>) {
        // Duplicate names are found even in bindings with other problems.
        let name = binding.and_then(|b| b.get("name")).and_then(|n| n.as_str());
        if let Some(name) = name {
            match self.first_use.get(name) {
                Some(first) => self.errors.push(
                    &field_path(path, "name"),
                    format!(
                        "duplicate name \"{name}\" (first used at {})",
                        field_path(first, "name")
                    ),
                ),
                None => {
                    self.first_use.insert(name.to_owned(), path.to_owned());
                }
            }
        }
        let (cache, urls, errors) = (&mut self.cache, &mut self.urls, &mut self.errors);
        if let Some(binding) = parse_binding(binding, path, cache, urls, errors) {
            if let (Some(limit), Some(url)) = (binding.max_in_flight, binding.url()) {
                match self.limits.get(url) {
                    Some((first, at)) if *first != limit => self.errors.push(
                        &field_path(path, "max_in_flight"),
                        format!(
                            "differs from {}'s {first} for the same server; a server has one limit",
                            field_path(at, "max_in_flight")
                        ),
                    ),
                    Some(_) => {}
                    None => {
                        self.limits.insert(url.to_owned(), (limit, path.to_owned()));
                    }
                }
            }
            self.tools.push(Arc::new(binding));
        }
    }

    /// The root-level checks, then the config or every problem.
    fn finish<'k>(
        mut self,
        root_keys: impl Iterator<Item = &'k str> + Clone,
    ) -> Result<HostConfig, ConfigErrors> {
        if !root_keys.clone().any(|key| key == "tools") {
            self.errors.push("tools", "required field is missing");
        }
        unknown_fields(root_keys, "", ROOT_FIELDS, &mut self.errors);
        let mut tools = self.tools;
        if let Some(errors) = self.errors.finish() {
            return Err(errors);
        }
        // A server's limit holds for every binding of it, whichever gave it.
        for binding in &mut tools {
            if let Some(url) = binding.url()
                && let Some((limit, _)) = self.limits.get(url)
                && let Some(binding) = Arc::get_mut(binding)
            {
                binding.max_in_flight = Some(*limit);
            }
        }
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, binding)| (binding.name.to_string(), i))
            .collect();
        Ok(HostConfig {
            tools,
            by_name,
            allow_private_auth_destinations: self.allow_private,
            token_store: self.token_store,
        })
    }
}

/// Checks one binding on its own, with paths relative to it.
pub(crate) fn parse_single_binding(value: &Value) -> Result<Binding, ConfigErrors> {
    let mut errors = Errors::default();
    let (mut cache, mut urls) = (SchemaCache::default(), UrlMemo::default());
    let written = value.as_object().map(Written::of_map);
    let binding = parse_binding(written.as_ref(), "", &mut cache, &mut urls, &mut errors);
    match (binding, errors.finish()) {
        (Some(binding), None) => Ok(binding),
        (_, Some(errors)) => Err(errors),
        (None, None) => Err(ConfigErrors::root("invalid binding")),
    }
}

/// Checked and compiled from JSON here, beside the loader whose rules it follows.
impl Binding {
    /// Checks and compiles one binding given as JSON (one element of the `tools` array).
    /// Error paths are relative to the binding, such as `timeout_seconds`.
    pub fn from_value(value: &Value) -> Result<Self, ConfigErrors> {
        parse_single_binding(value)
    }
}

#[cfg(test)]
mod tests;
