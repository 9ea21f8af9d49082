use std::time::Duration;

use brain_mcp_proto::client::RpcError;
use brain_mcp_proto::jsonrpc::ErrorCode;

use super::*;

/// A server's words can sit deep in a source chain (an h2 GOAWAY's debug data inside
/// hyper's error): they end up in the message, redacted and bounded, and no live source
/// keeps them.
#[test]
fn the_source_chain_is_redacted_and_bounded() {
    let inner = std::io::Error::other(format!(
        "GoAway(b\"you sent Bearer s3cret-tok {}\")",
        "x".repeat(10_000)
    ));
    let outer = std::io::Error::other(inner);
    let err = TransportError::new(
        ErrorKind::Io,
        Delivery::MaybeSent,
        "POST http://h:1: the connection failed",
    )
    .with_source(outer)
    .finished(&Secrets::new(["s3cret-tok"]));
    let shown = format!("{err} {err:?}");
    assert!(!shown.contains("s3cret-tok"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
    assert!(err.message().len() <= MESSAGE_LIMIT);
    assert!(StdError::source(&err).is_none());
}

fn error(kind: ErrorKind) -> TransportError {
    TransportError::new(kind, Delivery::Answered, "m")
}

/// Which `is_*` questions answer yes, by the kind's name.
fn yes(e: &TransportError) -> Vec<&'static str> {
    let asked = [
        ("invalid_request", e.is_invalid_request()),
        ("connect", e.is_connect()),
        ("tls", e.is_tls()),
        ("timeout", e.is_timeout()),
        ("io", e.is_io()),
        ("body_too_large", e.is_body_too_large()),
        ("status", e.is_status()),
        ("unexpected_reply", e.is_unexpected_reply()),
        ("stream_ended", e.is_stream_ended()),
        ("invalid_session_id", e.is_invalid_session_id()),
        ("redirect", e.is_redirect()),
        ("destination", e.is_destination()),
    ];
    asked
        .into_iter()
        .filter_map(|(name, answer)| answer.then_some(name))
        .collect()
}

/// Every kind answers exactly its own question, and its name is the one telemetry has
/// always used.
#[test]
fn each_kind_answers_its_own_question_and_keeps_its_name() {
    let kinds = [
        ErrorKind::InvalidRequest,
        ErrorKind::Connect,
        ErrorKind::Tls,
        ErrorKind::Timeout,
        ErrorKind::Io,
        ErrorKind::BodyTooLarge { limit: 1 },
        ErrorKind::Status {
            status: StatusCode::BAD_GATEWAY,
            rpc: None,
            www_authenticate: None,
            dpop_nonce: None,
            retry_after: None,
        },
        ErrorKind::UnexpectedReply,
        ErrorKind::StreamEnded,
        ErrorKind::InvalidSessionId,
        ErrorKind::Redirect,
        ErrorKind::Destination,
    ];
    let names = [
        "invalid_request",
        "connect",
        "tls",
        "timeout",
        "io",
        "body_too_large",
        "status",
        "unexpected_reply",
        "stream_ended",
        "invalid_session_id",
        "redirect",
        "destination",
    ];
    for (kind, name) in kinds.into_iter().zip(names) {
        let e = error(kind);
        assert_eq!(e.kind_name(), name);
        assert_eq!(yes(&e), [name], "{e:?}");
    }
}

#[test]
fn a_status_error_answers_with_what_came_with_it() {
    let e = error(ErrorKind::Status {
        status: StatusCode::UNAUTHORIZED,
        rpc: Some(RpcError::new(ErrorCode(-32001), "no entry")),
        www_authenticate: Some("Bearer realm=\"mcp\"".into()),
        dpop_nonce: None,
        retry_after: Some(Duration::from_secs(3)),
    });
    assert!(e.is_status());
    assert_eq!(e.status(), Some(StatusCode::UNAUTHORIZED));
    assert_eq!(e.rpc_error().map(|r| r.code), Some(ErrorCode(-32001)));
    assert_eq!(e.rpc_error().map(|r| r.message.as_str()), Some("no entry"));
    assert_eq!(e.www_authenticate(), Some("Bearer realm=\"mcp\""));
    assert_eq!(e.retry_after(), Some(Duration::from_secs(3)));
    assert_eq!(e.body_limit(), None);
    assert_eq!(e.delivery(), Delivery::Answered);

    let bare = error(ErrorKind::Status {
        status: StatusCode::SERVICE_UNAVAILABLE,
        rpc: None,
        www_authenticate: None,
        dpop_nonce: None,
        retry_after: None,
    });
    assert_eq!(bare.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
    assert!(bare.rpc_error().is_none());
    assert!(bare.www_authenticate().is_none());
    assert!(bare.retry_after().is_none());
}

#[test]
fn a_body_too_large_error_names_its_limit_and_nothing_else() {
    let e = error(ErrorKind::BodyTooLarge { limit: 64 << 10 });
    assert!(e.is_body_too_large());
    assert_eq!(e.body_limit(), Some(64 << 10));
    assert_eq!(e.status(), None);
    assert!(e.rpc_error().is_none());
    assert!(e.www_authenticate().is_none());
    assert!(e.retry_after().is_none());
}

/// A proxy's refusal is a connect error with the proxy's status, not an answer of the
/// server.
#[test]
fn a_proxy_refusal_is_a_connect_error_without_a_server_status() {
    let e = TransportError::new(ErrorKind::Connect, Delivery::NotSent, "proxy said no")
        .with_proxy_status(Some(StatusCode::PROXY_AUTHENTICATION_REQUIRED));
    assert!(e.is_connect());
    assert_eq!(
        e.proxy_status(),
        Some(StatusCode::PROXY_AUTHENTICATION_REQUIRED)
    );
    assert_eq!(e.status(), None);
    assert_eq!(e.delivery(), Delivery::NotSent);
}

/// A challenge and a JSON-RPC error that reflect a secret leave the exchange without it.
#[test]
fn a_status_errors_details_are_redacted_when_finished() {
    let e = error(ErrorKind::Status {
        status: StatusCode::FORBIDDEN,
        rpc: Some(RpcError::new(ErrorCode(-32000), "you sent s3cret")),
        www_authenticate: Some("Bearer error=\"s3cret\"".into()),
        dpop_nonce: None,
        retry_after: None,
    })
    .finished(&Secrets::new(["s3cret"]));
    let challenge = e.www_authenticate().unwrap_or_default();
    assert!(!challenge.contains("s3cret"), "{challenge}");
    let message = e.rpc_error().map(|r| r.message.clone()).unwrap_or_default();
    assert!(!message.contains("s3cret"), "{message}");
}
