//! The test authorization server's token endpoint: every grant it knows (client
//! credentials, code, refresh, jwt-bearer, token exchange), DPoP token types, and its
//! hostile settings.

use super::*;

pub(super) fn token(
    seen: &AuthSeen,
    state: &mut State,
    config: &AuthConfig,
) -> Response<Full<Bytes>> {
    if config.refuse_tokens {
        return reply(
            401,
            &json!({
                "error": "invalid_client",
                "error_description": format!("refused: {} {:?}", seen.body, seen.authorization),
            }),
        );
    }
    if seen.form("grant_type").as_deref() == Some("urn:ietf:params:oauth:grant-type:token-exchange")
    {
        let fits = seen.form("requested_token_type").as_deref()
            == Some("urn:ietf:params:oauth:token-type:id-jag")
            && seen.form("subject_token_type").as_deref()
                == Some("urn:ietf:params:oauth:token-type:id_token")
            && seen.form("audience").is_some_and(|a| !a.is_empty())
            && seen.form("resource").is_some_and(|r| !r.is_empty())
            && seen
                .form("subject_token")
                .is_some_and(|t| config.identity_assertions.contains(&t));
        if !fits {
            return reply(400, &json!({"error": "invalid_grant"}));
        }
        state.jags += 1;
        return reply(
            200,
            &json!({
                "access_token": jag_name(state.jags),
                "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                "token_type": "N_A",
            }),
        );
    }
    let basic = seen
        .authorization
        .as_deref()
        .and_then(|a| a.strip_prefix("Basic "))
        .and_then(|b| STANDARD.decode(b).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let client_ok = match basic {
        // RFC 6749 §2.3.1: both parts are form-encoded before they are joined.
        Some(pair) => pair.split_once(':').is_some_and(|(id, secret)| {
            decode(id) == config.client_id && decode(secret) == config.client_secret
        }),
        None => {
            seen.form("client_id").as_deref() == Some(config.client_id.as_str())
                && seen.form("client_secret").as_deref() == Some(config.client_secret.as_str())
        }
    };
    let grant_ok = match seen.form("grant_type").as_deref() {
        Some("client_credentials") => client_ok,
        Some("authorization_code") => {
            let challenge = seen
                .form("code")
                .and_then(|c| c.strip_prefix("code-").map(str::to_owned));
            let verifier = seen.form("code_verifier").unwrap_or_default();
            let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
            challenge.as_deref() == Some(URL_SAFE_NO_PAD.encode(digest).as_str())
        }
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => {
            (client_ok || seen.form("client_id").as_deref() == Some(config.client_id.as_str()))
                && seen
                    .form("assertion")
                    .is_some_and(|a| config.assertions.contains(&a))
        }
        Some("refresh_token") => refresh(seen, state, config),
        _ => false,
    };
    if !grant_ok {
        return reply(400, &json!({"error": "invalid_grant"}));
    }
    state.issued += 1;
    let token = token_name(state.issued);
    state.valid.insert(token.clone());
    let given = config.access_token.clone().unwrap_or(token);
    let token_type = if config.dpop_unasked || (config.dpop && seen.dpop.is_some()) {
        "DPoP"
    } else {
        "Bearer"
    };
    let mut answer = json!({"access_token": given, "token_type": token_type});
    if let Some(expires) = config.expires_in {
        answer["expires_in"] = json!(expires);
    }
    if config.refresh_tokens {
        let refresh = refresh_name(state.issued);
        state.refresh_live.insert(refresh.clone());
        answer["refresh_token"] = json!(refresh);
    }
    reply(200, &answer)
}

/// Whether the refresh token presented is good: any this server could have issued, or
/// with rotation one issued and not used yet; a used one revokes the grant.
fn refresh(seen: &AuthSeen, state: &mut State, config: &AuthConfig) -> bool {
    let Some(presented) = seen.form("refresh_token") else {
        return false;
    };
    if !config.rotate_refresh_tokens {
        return presented.starts_with("refresh-");
    }
    if state.refresh_live.remove(&presented) {
        state.refresh_used.insert(presented);
        return true;
    }
    if state.refresh_used.contains(&presented) {
        state.valid.clear();
        state.refresh_live.clear();
        state.revocations += 1;
    }
    false
}
