//! The registry: what it keeps, for how long, and what it removes.
use super::*;
use crate::text::Secrets;

// The registry is the process's: each test uses values no other test uses.

#[test]
fn a_secret_is_known_everywhere_from_the_moment_it_exists() {
    let before = Secrets::none()
        .redact("known-1 tok-KNOWN-AAA111 x")
        .into_owned();
    assert!(before.contains("tok-KNOWN-AAA111"), "{before}");
    let secret = Secret::new("tok-KNOWN-AAA111");
    // A `Secrets` that was never given it, made before it existed, removes it.
    let shown = Secrets::none().shown("known-1 TOK-known-aaa111 x", 200);
    assert_eq!(shown, "known-1 [redacted] x");
    assert_eq!(format!("{secret:?}"), "Secret(***)");
    assert_eq!(secret.expose(), "tok-KNOWN-AAA111");
    // Encoded spellings too.
    assert_eq!(
        Secrets::none().redact("?t=tok%2DKNOWN-AAA111&u=tok\\u002dKNOWN-AAA111"),
        "?t=[redacted]&u=[redacted]"
    );
    assert!(!Secrets::none().is_empty());
}

#[test]
fn the_basic_forms_of_a_client_secret_are_known() {
    learn_basic("client one", "s3cret/KNOWN+basic");
    let plain = "client one:s3cret/KNOWN+basic";
    let encoded = "client+one:s3cret%2FKNOWN%2Bbasic";
    let b64 = |p: &str| base64::engine::general_purpose::STANDARD.encode(p);
    for echoed in [
        "s3cret/KNOWN+basic".to_owned(),
        plain.to_owned(),
        encoded.to_owned(),
        format!("Basic {}", b64(plain)),
        format!("Basic {}", b64(encoded)),
    ] {
        let shown = Secrets::none().redact(&echoed).into_owned();
        assert!(
            !shown.contains("KNOWN") && !shown.contains(&b64(encoded)[..12]),
            "{shown}"
        );
    }
}

#[test]
fn short_values_are_not_known_process_wide() {
    learn("ab1");
    assert_eq!(Secrets::none().redact("x ab1 y"), "x ab1 y");
    // A call that holds one still removes it.
    assert_eq!(Secrets::new(["ab1"]).redact("x ab1 y"), "x [redacted] y");
}

#[test]
fn a_secret_that_contains_another_goes_whole_and_learning_twice_is_once() {
    learn("inner-KNOWN-77");
    learn("outer-inner-KNOWN-77-tail");
    learn("outer-inner-KNOWN-77-tail");
    learn("OUTER-inner-KNOWN-77-TAIL");
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    let copies = registry
        .host
        .list
        .iter()
        .filter(|f| f.eq_ignore_ascii_case("outer-inner-KNOWN-77-tail"))
        .count();
    assert_eq!(copies, 1, "a known form is not added again");
    drop(registry);
    assert_eq!(
        Secrets::none().redact("a outer-inner-KNOWN-77-tail b inner-KNOWN-77 c"),
        "a [redacted] b [redacted] c"
    );
}

#[test]
fn a_value_a_peer_chose_is_kept_only_when_it_looks_like_a_credential() {
    for word in [
        "properties",
        "      ",
        "maxLength",
        "additionalProperties",
        "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
        "aaaaaaaaaaaaaaaaaaaa1",
    ] {
        learn_issued(word);
        let text = format!("x {word} y");
        assert_eq!(Secrets::none().redact(&text), text, "{word:?}");
    }
    learn_issued("at-ISSUED-7f3e9a1c2b");
    assert_eq!(
        Secrets::none().redact("x at-ISSUED-7f3e9a1c2b y"),
        "x [redacted] y"
    );
    // Through serde, as a token response is read.
    let token: Secret = serde_json::from_str(r#""required""#).unwrap();
    assert_eq!(token.expose(), "required");
    assert_eq!(Secrets::none().redact("required"), "required");
}

#[test]
fn one_secret_starting_inside_another_cannot_hide_its_rest() {
    learn("QQ-abcdef-PREFIX");
    learn("PREFIX-SECRET-tail-1");
    let shown = Secrets::none()
        .redact("QQ-abcdef-PREFIX-SECRET-tail-1 end")
        .into_owned();
    assert_eq!(shown, "[redacted] end");
    // A call's own secret overlapping a known one: merged too.
    let call = Secrets::new(["zz:OVERLAP-head"]);
    learn("OVERLAP-head-and-KNOWN-tail");
    let shown = call.redact("zz:OVERLAP-head-and-KNOWN-tail!").into_owned();
    assert_eq!(shown, "[redacted]!");
}

#[test]
fn a_long_secret_is_kept_in_pieces_and_removed_whole() {
    let long: String = (0..5000)
        .map(|i| char::from(b'a' + (i * 7 % 26) as u8))
        .collect();
    let long = format!("LONG-{long}");
    learn(&long);
    // Five pieces, the last overlapping the fourth, merged into one span.
    let shown = Secrets::none().redact(&format!("<{long}>")).into_owned();
    assert_eq!(shown, "<[redacted]>");
    // A part of it as long as a piece is removed too.
    let part = &long[1000..2100];
    assert!(!Secrets::none().redact(part).contains(&part[100..140]));
}

#[test]
fn the_registry_stays_within_its_bytes() {
    for i in 0..600 {
        learn_issued(&format!("bulk-{i:04}-{}", "Zq9".repeat(100)));
    }
    let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
    assert!(
        registry.issued.bytes <= MAX_BYTES,
        "{}",
        registry.issued.bytes
    );
    assert!(registry.issued.list.len() <= MAX_FORMS);
    assert!(registry.host.bytes <= MAX_BYTES);
    assert!(registry.per_request.bytes <= MAX_BYTES);
    // A peer's values never push out the host's.
    drop(registry);
    learn("host-KEPT-secret-1");
    for i in 0..600 {
        learn_issued(&format!("more-{i:04}-{}", "Xy7".repeat(100)));
    }
    assert_eq!(Secrets::none().redact("host-KEPT-secret-1"), "[redacted]");
}

#[test]
fn jwt_segments_and_unpadded_base64_are_known() {
    learn_jwt("eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJKV1RURVNUIn0.c2lnbmF0dXJlLUpXVFRFU1Q");
    assert_eq!(
        Secrets::none().redact("p=eyJpc3MiOiJKV1RURVNUIn0 s=c2lnbmF0dXJlLUpXVFRFU1Q"),
        "p=[redacted] s=[redacted]"
    );
    learn_basic("id-b64", "pad-TEST-secret");
    let pair = "id-b64:pad-TEST-secret";
    for echoed in [
        base64::engine::general_purpose::STANDARD.encode(pair),
        STANDARD_NO_PAD.encode(pair),
        URL_SAFE_NO_PAD.encode(pair),
    ] {
        assert!(
            !Secrets::none().redact(&echoed).contains(&echoed[..10]),
            "{echoed}"
        );
    }
    // The form-encoded secret alone, as a client_secret_post body carries it.
    learn_basic("id-post", "a b&c/d-POST-secret");
    assert_eq!(
        Secrets::none().redact("client_secret=a+b%26c%2Fd-POST-secret&x=1"),
        "client_secret=[redacted]&x=1"
    );
}

#[test]
fn a_session_id_that_is_the_start_of_a_secret_shows_nothing() {
    learn("tok-PREFIXID-0123456789abcdef");
    assert_eq!(
        Secrets::none().short_id("tok-PREFIXID-0123", 8),
        crate::text::REDACTED
    );
    assert_eq!(
        Secrets::none().short_id("sess-unrelated-99", 8),
        "sess-unr…"
    );
}

#[test]
fn assertions_by_the_hundred_never_push_out_what_the_host_holds() {
    learn("host-KEPT-configured-2");
    for i in 0..400 {
        let (pay, sig) = ("Qw3".repeat(40), "Ex9".repeat(20));
        learn_jwt(&format!(
            "eyJhbGciOiJFUzI1NiJ9.pay{i:04}{pay}.sig{i:04}{sig}"
        ));
        learn_per_request(&format!("verifier-{i:04}-{}", "Rt5".repeat(10)));
    }
    assert_eq!(
        Secrets::none().redact("host-KEPT-configured-2"),
        "[redacted]"
    );
}

#[test]
fn many_overlapping_secrets_merge_as_they_are_found() {
    let unit = "Ab1-Cd2-Ef3-Gh4-";
    let long = unit.repeat(12);
    // Suffixes of one another, each a credential to the registry.
    for len in (16..long.len()).step_by(8) {
        learn_issued(&long[long.len() - len..]);
    }
    let text = unit.repeat(2000);
    let shown = Secrets::none().redact(&text).into_owned();
    assert!(!shown.contains("Ab1-Cd2-Ef3-Gh4-Ab1"), "{}", &shown[..200]);
    let merged = merge_in_order([(0, 4), (2, 6), (0, 9), (10, 12), (11, 13)].into_iter());
    assert_eq!(merged, vec![(0, 9), (10, 13)]);
}

#[test]
fn learning_from_many_threads_is_seen_by_all() {
    let handles: Vec<_> = (0..4)
        .map(|i| std::thread::spawn(move || learn(&format!("thread-KNOWN-{i}-secret"))))
        .collect();
    for handle in handles {
        handle.join().expect("thread");
    }
    for i in 0..4 {
        let text = format!("v=thread-KNOWN-{i}-secret");
        assert_eq!(Secrets::none().redact(&text), "v=[redacted]");
    }
}
