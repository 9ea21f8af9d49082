//! Walks one binding object, checking every field and collecting every problem.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::error::{Errors, field_path, index_path};
use super::rules;
use super::schemas::{SchemaCache, SchemaRefusal, Shared};
use super::suggest::suggest;
use super::written::{Member, Written};
use crate::binding::{Binding, Endpoint, HttpEndpoint, McpEndpoint, TaskSupport};
use crate::headers;
use crate::oauth::OAuthConfig;
use crate::url::{EndpointUrl, UrlError};

/// The fields a binding may have.
pub(crate) const BINDING_FIELDS: &[&str] = &[
    "name",
    "description",
    "input_schema",
    "url",
    "mcp_tool",
    "token_env",
    "tenants",
    "timeout_seconds",
    "max_output_bytes",
    "output_schema",
    "inspect_session",
    "headers",
    "oauth",
    "max_in_flight",
    "task_support",
];

/// Reports every key in `keys` not in `known`, with a suggestion when one is close, in
/// sorted order whatever the order written.
pub(crate) fn unknown_fields<'k>(
    keys: impl Iterator<Item = &'k str>,
    path: &str,
    known: &[&str],
    errors: &mut Errors,
) {
    let mut unknown: Vec<&str> = keys.filter(|key| !known.contains(key)).collect();
    unknown.sort_unstable();
    for key in unknown {
        let reason = match suggest(key, known) {
            Some(likely) => format!("unknown field; did you mean \"{likely}\"?"),
            None => format!("unknown field; expected one of: {}", known.join(", ")),
        };
        errors.push(&field_path(path, key), reason);
    }
}

/// The URLs checked so far in one load: a host config names a few servers many times
/// (10,000 bindings over 200 servers in the benchmark's), and checking a URL cost 5% of
/// the load. Only accepted URLs are kept; a refused one is checked again, to report it
/// at each binding.
#[derive(Default)]
pub(crate) struct UrlMemo(HashMap<String, EndpointUrl>);

impl UrlMemo {
    /// `url` checked by the one URL rule ([`EndpointUrl::parse`]).
    fn parse(&mut self, url: &str) -> Result<EndpointUrl, UrlError> {
        if let Some(known) = self.0.get(url) {
            return Ok(known.clone());
        }
        let checked = EndpointUrl::parse(url)?;
        self.0.insert(url.to_owned(), checked.clone());
        Ok(checked)
    }
}

/// Checks the binding at `path` (`None` if it is not a JSON object); `None` when it had
/// any problem (all of them are in `errors`).
pub(crate) fn parse_binding(
    object: Option<&Written<'_>>,
    path: &str,
    cache: &mut SchemaCache,
    urls: &mut UrlMemo,
    errors: &mut Errors,
) -> Option<Binding> {
    let Some(object) = object else {
        errors.push(path, "must be an object");
        return None;
    };
    let before = errors.len();
    let mut fields = Fields {
        object,
        path,
        errors,
    };

    let name = fields.string("name", true);
    if let Some(name) = name
        && let Err(reason) = rules::check_name(name)
    {
        fields.error("name", reason.to_string());
    }
    let description = fields.string("description", true);
    let input_schema = fields.schema("input_schema", true, cache);
    // The schema as written: a streamed binding holds it as text, read from the shared
    // copy when it loaded (or parsed again, only to report on one that did not).
    let reparsed;
    let written = match object.get("input_schema") {
        Some(Member::Schema(text)) => match &input_schema {
            Some(Some((shared, _))) => Some(&**shared),
            _ => {
                reparsed = serde_json::from_str::<Value>(text).ok();
                reparsed.as_ref()
            }
        },
        Some(member) => member.value(),
        None => None,
    };
    if let Some(schema) = written.filter(|s| s.is_object()) {
        match schema.get("type") {
            Some(Value::String(kind)) if kind == "object" => {}
            Some(_) => fields.error(
                "input_schema.type",
                "must be \"object\": tool arguments are always a JSON object",
            ),
            None => fields.error("input_schema", "must have \"type\": \"object\""),
        }
    }
    let mcp_tool = fields.string("mcp_tool", false);
    if let Some(tool) = mcp_tool
        && let Err(reason) = rules::check_mcp_tool(tool)
    {
        fields.error("mcp_tool", reason.to_string());
    }
    let is_mcp = object.contains("mcp_tool");
    let url = fields.string("url", false);
    let mut endpoint_url = None;
    match url {
        Some(url) => match urls.parse(url) {
            Ok(parsed) => endpoint_url = Some(parsed),
            Err(reason) => fields.error("url", reason.to_string()),
        },
        None if is_mcp && !object.contains("url") => {
            fields.error("url", "required for an MCP binding (mcp_tool is set)");
        }
        None => {}
    }
    let token_env = fields.string("token_env", false);
    if let Some(var) = token_env
        && let Err(reason) = rules::check_env_name(var)
    {
        fields.error("token_env", reason.to_string());
    }
    let oauth = fields.oauth(is_mcp, token_env.is_some());
    let max_in_flight = match object.get("max_in_flight") {
        None => Some(None),
        Some(_) if !is_mcp => {
            fields.error(
                "max_in_flight",
                "only allowed on an MCP binding (mcp_tool is set)",
            );
            None
        }
        Some(_) => fields
            .integer("max_in_flight", 0, rules::MAX_IN_FLIGHT)
            .and_then(|n| u32::try_from(n).ok())
            .map(Some),
    };
    let tenants = fields.tenants();
    let timeout = fields.integer(
        "timeout_seconds",
        rules::DEFAULT_TIMEOUT_SECONDS,
        rules::MAX_TIMEOUT_SECONDS,
    );
    let max_output = fields.integer(
        "max_output_bytes",
        rules::DEFAULT_MAX_OUTPUT_BYTES,
        rules::MAX_OUTPUT_BYTES,
    );
    let output_schema = fields.schema("output_schema", false, cache);
    let extra_headers = fields.headers();
    let inspect_session = match object.get("inspect_session").map(Member::value) {
        None => Some(false),
        Some(Some(Value::Bool(_))) if is_mcp => {
            fields.error(
                "inspect_session",
                "not allowed on an MCP binding (mcp_tool is set)",
            );
            None
        }
        Some(Some(Value::Bool(flag))) => Some(*flag),
        Some(_) => {
            fields.error("inspect_session", "must be a boolean");
            None
        }
    };
    let task_support = fields.task_support(is_mcp);
    unknown_fields(object.keys(), path, BINDING_FIELDS, errors);

    if errors.len() > before {
        return None;
    }
    let (input_schema, input_validator) = input_schema??;
    let output = output_schema?;
    let endpoint = match mcp_tool {
        Some(tool) => Endpoint::Mcp(McpEndpoint {
            url: endpoint_url?,
            tool: tool.to_owned(),
            task_support: task_support?,
        }),
        None => Endpoint::Http(HttpEndpoint {
            url: endpoint_url,
            inspect_session: inspect_session?,
        }),
    };
    Some(Binding {
        name: Arc::from(name?),
        description: description?.to_owned(),
        input_schema,
        endpoint,
        token_env: token_env.map(str::to_owned),
        tenants: tenants?,
        timeout: Duration::from_secs(timeout?),
        max_output_bytes: usize::try_from(max_output?).ok()?,
        output_schema: output.as_ref().map(|(schema, _)| schema.clone()),
        output_validator: output.map(|(_, validator)| validator),
        input_validator,
        headers: extra_headers?,
        oauth: oauth?,
        max_in_flight: max_in_flight?,
    })
}

/// Typed access to the fields of one binding object.
struct Fields<'a, 'e> {
    object: &'a Written<'a>,
    path: &'a str,
    errors: &'e mut Errors,
}

impl<'a> Fields<'a, '_> {
    fn error(&mut self, key: &str, reason: impl Into<String>) {
        let path = key
            .split('.')
            .fold(self.path.to_owned(), |path, part| field_path(&path, part));
        self.errors.push(&path, reason);
    }

    /// A string field; `None` when absent or wrong (wrong and required-missing are reported).
    fn string(&mut self, key: &str, required: bool) -> Option<&'a str> {
        match self.object.get(key).map(Member::as_str) {
            Some(Some(text)) => Some(text),
            Some(None) => {
                self.error(key, "must be a string");
                None
            }
            None => {
                if required {
                    self.error(key, "required field is missing");
                }
                None
            }
        }
    }

    /// `task_support`: `"optional"` or `"required"`, only on an MCP binding; absent means
    /// the tool never runs as a task.
    fn task_support(&mut self, is_mcp: bool) -> Option<TaskSupport> {
        let text = match self.object.get("task_support") {
            None => return Some(TaskSupport::Forbidden),
            Some(member) => member.as_str(),
        };
        match text {
            _ if !is_mcp => {
                self.error(
                    "task_support",
                    "only allowed on an MCP binding (mcp_tool is set)",
                );
                None
            }
            Some("optional") => Some(TaskSupport::Optional),
            Some("required") => Some(TaskSupport::Required),
            _ => {
                self.error("task_support", "must be \"optional\" or \"required\"");
                None
            }
        }
    }

    /// An integer field between 1 and `max`, or `default` when absent.
    fn integer(&mut self, key: &str, default: u64, max: u64) -> Option<u64> {
        let Some(member) = self.object.get(key) else {
            return Some(default);
        };
        let value = member.value();
        let number = value
            .and_then(Value::as_i64)
            .map(i128::from)
            .or(value.and_then(Value::as_u64).map(i128::from));
        match number {
            Some(n) if (1..=i128::from(max)).contains(&n) => u64::try_from(n).ok(),
            // An integer too long for 64 bits is out of range too, not the wrong type.
            _ if number.is_some() || value.is_some_and(is_long_integer) => {
                self.error(key, format!("must be between 1 and {max}"));
                None
            }
            _ => {
                self.error(key, "must be an integer");
                None
            }
        }
    }

    /// A schema field: a JSON object that compiles, as the schema and its validator. The
    /// outer `Option` is "valid", the inner one "present".
    fn schema(
        &mut self,
        key: &str,
        required: bool,
        cache: &mut SchemaCache,
    ) -> Option<Option<Shared>> {
        let found = match self.object.get(key) {
            None if required => {
                self.error(key, "required field is missing");
                return None;
            }
            None => return Some(None),
            // A streamed binding holds its schema as text; a whole document as a value.
            Some(Member::Schema(text)) => cache.compile_text(text, || field_path(self.path, key)),
            Some(Member::Value(value)) if value.is_object() => {
                cache.compile(value).map_err(SchemaRefusal::Invalid)
            }
            Some(_) => Err(SchemaRefusal::NotObject),
        };
        match found {
            Ok(shared) => Some(Some(shared)),
            Err(SchemaRefusal::Duplicates(repeats)) => {
                repeats.report(self.errors, &field_path(self.path, key));
                None
            }
            Err(SchemaRefusal::NotObject) => {
                self.error(key, "must be a JSON Schema object");
                None
            }
            Err(SchemaRefusal::TooDeep) => {
                self.error(
                    key,
                    "nests arrays and objects deeper than the recursion limit of a JSON value",
                );
                None
            }
            Err(SchemaRefusal::NotJson(reason)) => {
                self.error(key, reason);
                None
            }
            Err(SchemaRefusal::Invalid(reason)) => {
                self.error(key, format!("is not a valid JSON Schema: {reason}"));
                None
            }
        }
    }

    /// `oauth`: client credentials ([`OAuthConfig`]), only on an MCP binding and never
    /// beside `token_env`. The outer `Option` is "valid", the inner one "present".
    fn oauth(&mut self, is_mcp: bool, has_token_env: bool) -> Option<Option<OAuthConfig>> {
        let value = match self.object.get("oauth").map(Member::value) {
            None => return Some(None),
            Some(value) => value?,
        };
        if !is_mcp {
            self.error("oauth", "only allowed on an MCP binding (mcp_tool is set)");
            return None;
        }
        if has_token_env {
            self.error(
                "oauth",
                "not allowed with token_env; a binding has one kind of credential",
            );
            return None;
        }
        match OAuthConfig::parse(value) {
            Ok(config) => Some(Some(config)),
            Err(problems) => {
                for (field, reason) in problems {
                    let key = if field.is_empty() {
                        "oauth".to_owned()
                    } else {
                        format!("oauth.{field}")
                    };
                    self.error(&key, reason);
                }
                None
            }
        }
    }

    /// `headers`: an object of header names and string values, by the rule of
    /// [`crate::headers`]; every problem is reported at its header.
    fn headers(&mut self) -> Option<Vec<(String, String)>> {
        let map = match self.object.get("headers").map(Member::value) {
            None => return Some(Vec::new()),
            Some(Some(Value::Object(map))) => map,
            Some(_) => {
                self.error(
                    "headers",
                    "must be an object of header names and string values",
                );
                return None;
            }
        };
        let headers_path = field_path(self.path, "headers");
        let mut list: Vec<(String, String)> = Vec::with_capacity(map.len());
        // Names met so far, by their lower case: a document may hold many.
        let mut first_of: HashMap<String, &str> = HashMap::new();
        let mut ok = true;
        for (name, value) in map {
            let path = field_path(&headers_path, name);
            let mut problem = |reason: String| {
                self.errors.push(&path, reason);
                ok = false;
            };
            if let Err(reason) = headers::check_header_name(name) {
                problem(reason.to_string());
            } else if let Some(first) = first_of.get(&name.to_ascii_lowercase()) {
                problem(format!(
                    "duplicate header; {first:?} is the same name (header names ignore case)"
                ));
            } else {
                first_of.insert(name.to_ascii_lowercase(), name);
            }
            match value {
                Value::String(text) => {
                    if let Err(reason) = headers::check_header_value(text) {
                        problem(reason.to_string());
                    }
                    list.push((name.clone(), text.clone()));
                }
                _ => problem("must be a string".to_owned()),
            }
        }
        if let Err(reason) = headers::check_totals(map.len(), headers::total_bytes(&list)) {
            self.error("headers", reason.to_string());
            ok = false;
        }
        ok.then_some(list)
    }

    /// `tenants`: a non-empty array of distinct non-empty strings.
    fn tenants(&mut self) -> Option<Vec<String>> {
        let list = match self.object.get("tenants").map(Member::value) {
            None => {
                self.error("tenants", "required field is missing");
                return None;
            }
            Some(Some(Value::Array(list))) => list,
            Some(_) => {
                self.error("tenants", "must be an array of tenant names");
                return None;
            }
        };
        if list.is_empty() {
            self.error(
                "tenants",
                "must not be empty: list the tenants allowed to call the tool",
            );
            return None;
        }
        let tenants_path = field_path(self.path, "tenants");
        let mut tenants = Vec::with_capacity(list.len());
        // The names met so far, for a long list (a short one is searched in order).
        let mut seen: HashSet<&str> = HashSet::new();
        let long = list.len() > 16;
        let mut repeated = |name: &'a str, tenants: &[String]| {
            if long {
                !seen.insert(name)
            } else {
                tenants.iter().any(|t| t == name)
            }
        };
        let mut ok = true;
        for (i, tenant) in list.iter().enumerate() {
            let path = index_path(&tenants_path, i);
            match tenant {
                Value::String(name) if name.is_empty() => {
                    self.errors.push(&path, "must not be empty");
                    ok = false;
                }
                Value::String(name) if repeated(name, &tenants) => {
                    self.errors
                        .push(&path, format!("duplicate tenant \"{name}\""));
                    ok = false;
                }
                Value::String(name) => tenants.push(name.clone()),
                _ => {
                    self.errors.push(&path, "must be a string");
                    ok = false;
                }
            }
        }
        ok.then_some(tenants)
    }
}

/// Whether `value` is a number written as an integer (digits, maybe a minus sign) that
/// does not fit 64 bits.
fn is_long_integer(value: &Value) -> bool {
    let Value::Number(number) = value else {
        return false;
    };
    // With serde_json's `arbitrary_precision` the text is as written; without, a number
    // past 64 bits is an f64, an integer when it has no fraction (as JSON Schema counts).
    let text = number.to_string();
    let digits = text.strip_prefix('-').unwrap_or(&text);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        || number
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18)
}
