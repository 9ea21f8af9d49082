//! Reading `WWW-Authenticate` (RFC 9110 §11.6.1, RFC 6750 §3): the `Bearer` challenge of
//! a 401 or 403 and the parameters MCP authorization reads from it.

/// The most bytes of a `WWW-Authenticate` value read; the rest is ignored.
pub const MAX_CHALLENGE_BYTES: usize = 8 * 1024;

/// The parameters of a `Bearer` challenge a client acts on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BearerChallenge {
    /// `resource_metadata` (RFC 9728 §5.1): where the protected resource metadata is.
    pub resource_metadata: Option<String>,
    /// `scope`: the scopes the request needs, space-separated.
    pub scope: Option<String>,
    /// `error` (RFC 6750 §3.1), such as `invalid_token` or `insufficient_scope`.
    pub error: Option<String>,
}

impl BearerChallenge {
    /// Whether the server says the token lacks scope (`error="insufficient_scope"`).
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}

/// The first `Bearer` challenge in `value`, a `WWW-Authenticate` header value that may
/// hold several challenges; `None` when there is none or it cannot be read. Scheme and
/// parameter names ignore case; a parameter given twice keeps its first value.
pub fn bearer(value: &str) -> Option<BearerChallenge> {
    of_scheme(value, "bearer")
}

/// The first `DPoP` challenge in `value` (RFC 9449 §7.1), read as [`bearer`] reads a
/// `Bearer` one: a server that wants DPoP-bound tokens, or a new nonce
/// (`error="use_dpop_nonce"`), says so with it.
pub fn dpop(value: &str) -> Option<BearerChallenge> {
    of_scheme(value, "dpop")
}

fn of_scheme(value: &str, scheme: &str) -> Option<BearerChallenge> {
    let value = crate::text::prefix(value, MAX_CHALLENGE_BYTES);
    let mut lexer = Lexer { rest: value };
    let mut in_bearer = false;
    let mut found: Option<BearerChallenge> = None;
    loop {
        lexer.skip_separators();
        if lexer.rest.is_empty() {
            break;
        }
        let Some(token) = lexer.token() else {
            break;
        };
        lexer.skip_spaces();
        if lexer.rest.starts_with('=') {
            // A parameter of the current challenge.
            lexer.rest = &lexer.rest[1..];
            lexer.skip_spaces();
            let value = if lexer.rest.starts_with('"') {
                lexer.quoted()?
            } else {
                lexer.token().unwrap_or_default().to_owned()
            };
            if in_bearer && let Some(challenge) = found.as_mut() {
                let slot = match token.to_ascii_lowercase().as_str() {
                    "resource_metadata" => &mut challenge.resource_metadata,
                    "scope" => &mut challenge.scope,
                    "error" => &mut challenge.error,
                    _ => continue,
                };
                if slot.is_none() {
                    *slot = Some(value);
                }
            }
        } else {
            // A new challenge: `token` is its scheme. A token68 after it is skipped.
            if found.is_some() && in_bearer {
                break;
            }
            in_bearer = token.eq_ignore_ascii_case(scheme);
            if in_bearer {
                found = Some(BearerChallenge::default());
            }
            lexer.skip_token68();
        }
    }
    found
}

struct Lexer<'a> {
    rest: &'a str,
}

impl<'a> Lexer<'a> {
    fn skip_spaces(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t']);
    }

    fn skip_separators(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t', ',']);
    }

    /// An RFC 9110 token.
    fn token(&mut self) -> Option<&'a str> {
        let end = self
            .rest
            .find(|c: char| !is_tchar(c))
            .unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (token, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(token)
    }

    /// A token68 right after a scheme (`Basic abc==`), if one is there: a token, its
    /// `=` padding, then the end or a comma. (`token=value` is a parameter instead.)
    fn skip_token68(&mut self) {
        let mut probe = Lexer { rest: self.rest };
        probe.skip_spaces();
        if probe.token().is_none() {
            return;
        }
        let after = probe.rest.trim_start_matches('=');
        let tail = after.trim_start_matches([' ', '\t']);
        if tail.is_empty() || tail.starts_with(',') {
            self.rest = after;
        }
    }

    /// A quoted string, unescaped; `None` when it is not closed.
    fn quoted(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.rest[1..].char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &self.rest[1 + i + 1..];
                    return Some(out);
                }
                '\\' => out.push(chars.next()?.1),
                c => out.push(c),
            }
        }
        None
    }
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~/".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parameters_mcp_reads() {
        let c = bearer(
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="files:read files:write""#,
        )
        .expect("a bearer challenge");
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("files:read files:write"));
        assert!(!c.insufficient_scope());
    }

    #[test]
    fn insufficient_scope_and_unquoted_values() {
        let c = bearer(r#"bearer error=insufficient_scope, scope="a b""#).expect("bearer");
        assert!(c.insufficient_scope());
        assert_eq!(c.scope.as_deref(), Some("a b"));
    }

    #[test]
    fn the_bearer_challenge_among_others() {
        let c = bearer(
            r#"Basic realm="x", Negotiate abc==, Bearer realm="mcp", error="invalid_token", DPoP algs="ES256""#,
        )
        .expect("bearer");
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope, None);
        let c = bearer(r#"Basic abc==, Bearer scope="s""#).expect("bearer after a token68");
        assert_eq!(c.scope.as_deref(), Some("s"));
    }

    #[test]
    fn escapes_and_first_value_wins() {
        let c = bearer(r#"Bearer scope="a \"b\"", scope="other""#).expect("bearer");
        assert_eq!(c.scope.as_deref(), Some(r#"a "b""#));
    }

    #[test]
    fn no_bearer_or_unreadable() {
        assert_eq!(bearer(r#"Basic realm="x""#), None);
        assert_eq!(bearer(""), None);
        assert_eq!(bearer(r#"Bearer scope="never closed"#), None);
        assert!(bearer("Bearer").is_some());
    }

    #[test]
    fn a_huge_value_is_bounded() {
        let long = format!(r#"Bearer scope="{}""#, "é".repeat(MAX_CHALLENGE_BYTES));
        // Cut inside the quoted string: not closed, so not read, and no panic.
        assert_eq!(bearer(&long), None);
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    proptest! {
        /// Any header value reads without a panic, and nothing read back is longer
        /// than the value.
        #[test]
        fn any_value_reads(value in "[ -~]{0,200}") {
            if let Some(c) = super::bearer(&value) {
                for field in [c.scope, c.error, c.resource_metadata].into_iter().flatten() {
                    prop_assert!(field.len() <= value.len());
                }
            }
        }

        /// A challenge built from parts reads back as those parts.
        #[test]
        fn built_challenges_read_back(
            scope in "[a-z:._-]{1,20}( [a-z:._-]{1,20}){0,3}",
            metadata in "https://[a-z]{1,10}\\.example/[a-z/]{0,20}",
            before in prop::option::of("Basic realm=\"[a-z]{0,8}\""),
        ) {
            let value = format!(
                "{}Bearer resource_metadata=\"{metadata}\", scope=\"{scope}\"",
                before.map(|b| format!("{b}, ")).unwrap_or_default()
            );
            let c = super::bearer(&value).expect("a bearer challenge");
            prop_assert_eq!(c.scope.as_deref(), Some(scope.as_str()));
            prop_assert_eq!(c.resource_metadata.as_deref(), Some(metadata.as_str()));
        }
    }
}
