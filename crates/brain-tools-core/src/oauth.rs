//! A binding's OAuth client credentials (`oauth`): who the client is, which
//! authorization server it trusts, and where its secret is. The secret itself is read
//! from the environment when a token is needed, never from the config.

use serde::Serialize;
use serde_json::Value;

use crate::config::rules;
use crate::url::EndpointUrl;

/// The longest `client_id` accepted.
const MAX_CLIENT_ID_LEN: usize = 1024;
/// The most scopes a binding may ask for.
const MAX_SCOPES: usize = 64;
/// The longest scope accepted.
const MAX_SCOPE_LEN: usize = 256;

/// The fields an `oauth` block may have.
const FIELDS: &[&str] = &[
    "issuer",
    "client_id",
    "client_secret_env",
    "private_key_env",
    "workload_token_file",
    "workload_token_env",
    "scopes",
    "dpop",
];

/// The longest `workload_token_file` path accepted.
const MAX_PATH_LEN: usize = 4096;

/// Which environment variable holds a client's proof at the token endpoint, and what
/// it holds. The value here is the variable's *name*, never the secret: the secret is
/// read from that variable when a token is needed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SecretVar {
    /// The name of the variable holding a shared secret (`client_secret_basic` or
    /// `_post`).
    Secret(String),
    /// The name of the variable holding a PEM private key (`private_key_jwt`).
    Key(String),
    /// The name of the variable holding a JWT the platform issued to the workload,
    /// presented as a JWT bearer grant (workload identity federation).
    WorkloadEnv(String),
    /// The path of a file holding a JWT the platform issued to the workload (and
    /// rotates), read afresh for each token request.
    WorkloadFile(String),
}

impl SecretVar {
    /// The environment variable holding the secret, key or workload token; `None` when
    /// it is in a file.
    pub fn env_var(&self) -> Option<&str> {
        match self {
            Self::Secret(var) | Self::Key(var) | Self::WorkloadEnv(var) => Some(var),
            Self::WorkloadFile(_) => None,
        }
    }

    /// The file holding the workload token, if that is where it is.
    pub fn file(&self) -> Option<&str> {
        match self {
            Self::WorkloadFile(path) => Some(path),
            _ => None,
        }
    }

    /// Whether it holds a workload token (the JWT bearer grant) rather than the
    /// client's own secret or key.
    pub fn is_workload(&self) -> bool {
        matches!(self, Self::WorkloadEnv(_) | Self::WorkloadFile(_))
    }
}

/// A binding's `oauth` block, checked: machine credentials for the client credentials
/// grant, bound to one authorization server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OAuthConfig {
    issuer: EndpointUrl,
    client_id: String,
    secret: SecretVar,
    scopes: Vec<String>,
    dpop: bool,
}

impl OAuthConfig {
    /// Credentials for `client_id` at `issuer`, with `secret`, asking for `scopes`.
    pub fn new(
        issuer: EndpointUrl,
        client_id: impl Into<String>,
        secret: SecretVar,
        scopes: Vec<String>,
    ) -> Self {
        Self {
            issuer,
            client_id: client_id.into(),
            secret,
            scopes,
            dpop: false,
        }
    }

    /// These credentials, asking for DPoP-bound tokens (RFC 9449) when `dpop`.
    #[must_use]
    pub fn with_dpop(mut self, dpop: bool) -> Self {
        self.dpop = dpop;
        self
    }

    /// Whether tokens are asked for DPoP-bound (`dpop`): each request then carries a
    /// proof made with a key the host holds in memory.
    pub fn dpop(&self) -> bool {
        self.dpop
    }

    /// The only authorization server the credentials are ever sent to.
    pub fn issuer(&self) -> &str {
        self.issuer.as_str()
    }

    /// The client's identifier.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// Where the client's secret or key is.
    pub fn secret(&self) -> &SecretVar {
        &self.secret
    }

    /// The scopes asked for; empty to let the server's challenge or metadata decide.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The block in config form.
    pub fn to_value(&self) -> Value {
        #[derive(Serialize)]
        struct Form<'a> {
            issuer: &'a str,
            client_id: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            client_secret_env: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            private_key_env: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            workload_token_env: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            workload_token_file: Option<&'a str>,
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            scopes: &'a [String],
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            dpop: bool,
        }
        let (mut secret, mut key, mut workload_env, mut workload_file) = (None, None, None, None);
        match &self.secret {
            SecretVar::Secret(var) => secret = Some(var.as_str()),
            SecretVar::Key(var) => key = Some(var.as_str()),
            SecretVar::WorkloadEnv(var) => workload_env = Some(var.as_str()),
            SecretVar::WorkloadFile(path) => workload_file = Some(path.as_str()),
        }
        serde_json::to_value(Form {
            issuer: self.issuer(),
            client_id: &self.client_id,
            client_secret_env: secret,
            private_key_env: key,
            workload_token_env: workload_env,
            workload_token_file: workload_file,
            scopes: &self.scopes,
            dpop: self.dpop,
        })
        .unwrap_or(Value::Null)
    }

    /// Reads an `oauth` block; every problem is reported as `(field, reason)`, the field
    /// relative to the block.
    pub(crate) fn parse(value: &Value) -> Result<Self, Vec<(String, String)>> {
        let mut problems: Vec<(String, String)> = Vec::new();
        let Some(object) = value.as_object() else {
            return Err(vec![(String::new(), "must be an object".into())]);
        };
        let mut unknown: Vec<&String> = object
            .keys()
            .filter(|k| !FIELDS.contains(&k.as_str()))
            .collect();
        unknown.sort();
        for key in unknown {
            problems.push((
                key.clone(),
                format!("unknown field; expected one of: {}", FIELDS.join(", ")),
            ));
        }
        let mut text = |key: &str| match object.get(key) {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                problems.push((key.into(), "must be a string".into()));
                None
            }
        };
        let issuer = text("issuer");
        let client_id = text("client_id");
        let secret_env = text("client_secret_env");
        let key_env = text("private_key_env");
        let workload_env = text("workload_token_env");
        let workload_file = text("workload_token_file");
        let issuer = match issuer.map(|i| EndpointUrl::parse(&i)) {
            Some(Ok(url)) => Some(url),
            Some(Err(reason)) => {
                problems.push(("issuer".into(), reason.to_string()));
                None
            }
            None => {
                problems.push((
                    "issuer".into(),
                    "required: credentials go to this authorization server only".into(),
                ));
                None
            }
        };
        match client_id.as_deref() {
            None => problems.push(("client_id".into(), "required field is missing".into())),
            Some(id)
                if id.is_empty()
                    || id.len() > MAX_CLIENT_ID_LEN
                    || id.chars().any(char::is_control) =>
            {
                problems.push((
                    "client_id".into(),
                    format!("must be 1 to {MAX_CLIENT_ID_LEN} bytes without control characters"),
                ));
            }
            Some(_) => {}
        }
        for (key, var) in [
            ("client_secret_env", &secret_env),
            ("private_key_env", &key_env),
            ("workload_token_env", &workload_env),
        ] {
            if let Some(Err(reason)) = var.as_deref().map(rules::check_env_name) {
                problems.push((key.into(), reason.to_string()));
            }
        }
        if let Some(path) = &workload_file
            && (path.is_empty()
                || path.len() > MAX_PATH_LEN
                || path.chars().any(char::is_control)
                || !std::path::Path::new(path).is_absolute())
        {
            problems.push((
                "workload_token_file".into(),
                format!("must be an absolute path of 1 to {MAX_PATH_LEN} bytes without control characters"),
            ));
        }
        let given: Vec<(&str, SecretVar)> = [
            ("client_secret_env", secret_env.map(SecretVar::Secret)),
            ("private_key_env", key_env.map(SecretVar::Key)),
            (
                "workload_token_file",
                workload_file.map(SecretVar::WorkloadFile),
            ),
            (
                "workload_token_env",
                workload_env.map(SecretVar::WorkloadEnv),
            ),
        ]
        .into_iter()
        .filter_map(|(key, var)| var.map(|v| (key, v)))
        .collect();
        let secret = match given.as_slice() {
            [(_, one)] => Some(one.clone()),
            [] => {
                problems.push((
                    "client_secret_env".into(),
                    "required: one of client_secret_env, private_key_env, workload_token_file, \
                     workload_token_env"
                        .into(),
                ));
                None
            }
            [(first, _), (second, _), ..] => {
                problems.push((
                    (*second).into(),
                    format!("not allowed with {first}; give one"),
                ));
                None
            }
        };
        let dpop = match object.get("dpop") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                problems.push(("dpop".into(), "must be true or false".into()));
                false
            }
        };
        let scopes = match object.get("scopes") {
            None => Vec::new(),
            Some(Value::Array(list)) if list.len() <= MAX_SCOPES => {
                let scopes: Vec<String> = list
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect();
                if scopes.len() != list.len() || !scopes.iter().all(|s| is_scope(s)) {
                    problems.push(("scopes".into(), scope_rule()));
                }
                scopes
            }
            Some(_) => {
                problems.push(("scopes".into(), scope_rule()));
                Vec::new()
            }
        };
        match (issuer, client_id, secret) {
            (Some(issuer), Some(client_id), Some(secret)) if problems.is_empty() => Ok(Self {
                issuer,
                client_id,
                secret,
                scopes,
                dpop,
            }),
            _ => Err(problems),
        }
    }
}

fn scope_rule() -> String {
    format!(
        "must be an array of at most {MAX_SCOPES} scopes, each 1 to {MAX_SCOPE_LEN} visible ASCII characters without \" or \\"
    )
}

/// RFC 6749 §3.3 `scope-token`: visible ASCII except `"` and `\`.
fn is_scope(scope: &str) -> bool {
    !scope.is_empty()
        && scope.len() <= MAX_SCOPE_LEN
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Result<OAuthConfig, Vec<(String, String)>> {
        OAuthConfig::parse(&value)
    }

    #[test]
    fn a_complete_block_reads_and_writes_back() {
        let block = json!({
            "issuer": "https://auth.example.com",
            "client_id": "brain-host",
            "client_secret_env": "MCP_CLIENT_SECRET",
            "scopes": ["tools.read", "tools:write"],
        });
        let config = parse(block.clone()).unwrap();
        assert_eq!(config.issuer(), "https://auth.example.com");
        assert_eq!(
            config.secret(),
            &SecretVar::Secret("MCP_CLIENT_SECRET".into())
        );
        assert_eq!(config.to_value(), block);
        let key = parse(
            json!({"issuer": "https://a.example", "client_id": "c", "private_key_env": "KEY"}),
        )
        .unwrap();
        assert_eq!(key.secret(), &SecretVar::Key("KEY".into()));
        assert!(key.scopes().is_empty());
        assert!(!key.dpop());
        let bound = json!({"issuer": "https://a.example/", "client_id": "c", "client_secret_env": "S", "dpop": true});
        let config = parse(bound.clone()).unwrap();
        assert!(config.dpop());
        assert_eq!(config.to_value()["dpop"], true);
        assert!(parse(json!({"issuer": "https://a.example", "client_id": "c", "client_secret_env": "S", "dpop": "yes"})).is_err());
        for (field, var) in [
            (
                "workload_token_file",
                SecretVar::WorkloadFile("/var/run/secrets/tokens/mcp".into()),
            ),
            (
                "workload_token_env",
                SecretVar::WorkloadEnv("WORKLOAD_JWT".into()),
            ),
        ] {
            let mut block = json!({"issuer": "https://a.example", "client_id": "c"});
            block[field] = json!(var.file().or(var.env_var()).unwrap());
            let config = parse(block.clone()).unwrap();
            assert_eq!(config.secret(), &var);
            assert!(var.is_workload());
            assert_eq!(config.to_value(), block);
        }
    }

    #[test]
    fn every_problem_is_named_at_its_field() {
        let errs = parse(
            json!({"client_id": "", "client_secret_env": "1BAD", "scopes": ["a b"], "extra": 1}),
        )
        .unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "extra",
                "issuer",
                "client_id",
                "client_secret_env",
                "scopes"
            ],
            "{errs:?}"
        );
        let errs = parse(json!({"issuer": "https://a.example", "client_id": "c"})).unwrap_err();
        assert_eq!(errs[0].0, "client_secret_env");
        let errs = parse(json!({"issuer": "https://a.example", "client_id": "c", "client_secret_env": "A", "private_key_env": "B"})).unwrap_err();
        assert_eq!(errs[0].0, "private_key_env");
        let errs =
            parse(json!({"issuer": "ftp://a.example", "client_id": "c", "client_secret_env": "A"}))
                .unwrap_err();
        assert_eq!(errs[0].0, "issuer");
        let errs = parse(json!({"issuer": "https://a.example", "client_id": "c", "client_secret_env": "A", "workload_token_file": "/run/t"})).unwrap_err();
        assert_eq!(errs[0].0, "workload_token_file");
        let errs = parse(json!({"issuer": "https://a.example", "client_id": "c", "workload_token_file": "relative/t"})).unwrap_err();
        assert_eq!(errs[0].0, "workload_token_file");
        let errs = parse(
            json!({"issuer": "https://a.example", "client_id": "c", "workload_token_env": "1BAD"}),
        )
        .unwrap_err();
        assert_eq!(errs[0].0, "workload_token_env");
        assert!(parse(json!("x")).is_err());
        assert!(parse(json!({"issuer": "https://a.example", "client_id": "c", "client_secret_env": "A", "scopes": "a"})).is_err());
    }
}
