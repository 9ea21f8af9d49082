//! HTTPS against a generated certificate authority; h2 by ALPN; a bad certificate.

use std::sync::Arc;

use brain_mcp_transport::{Delivery, HttpClient};
use http::StatusCode;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::server::{TestServer, handler, json};
use crate::{exchange, post, response};

pub struct Pki {
    pub ca_der: CertificateDer<'static>,
    ca_pem: String,
    leaf: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

/// A CA and a leaf for `localhost`, `127.0.0.1` and `mcp.test` (a name only the test
/// proxy resolves).
pub fn pki() -> Pki {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "mcp.test".to_owned(),
    ])
    .unwrap()
    .signed_by(&leaf_key, &ca)
    .unwrap();
    Pki {
        ca_der: ca.der().clone(),
        ca_pem: ca.pem(),
        leaf: leaf.der().clone(),
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
    }
}

pub fn acceptor(pki: &Pki) -> tokio_rustls::TlsAcceptor {
    tokio_rustls::TlsAcceptor::from(server_config(pki, &[b"h2", b"http/1.1"]))
}

/// A TLS server configuration with `pki`'s leaf, offering `alpn`.
pub fn server_config(pki: &Pki, alpn: &[&[u8]]) -> Arc<rustls::ServerConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![pki.leaf.clone()], pki.key.clone_key())
        .unwrap();
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(cfg)
}

async fn tls_server(pki: &Pki) -> TestServer {
    TestServer::start_with(
        handler(|_| async { json(StatusCode::OK, response(1)) }),
        Some(acceptor(pki)),
    )
    .await
}

/// A client configuration that trusts `pki`'s authority (and no platform root).
pub fn trusting(pki: &Pki) -> brain_mcp_transport::ClientConfig {
    let mut c = crate::config();
    c.extra_roots = vec![pki.ca_der.clone()];
    c
}

/// The test server's MCP endpoint over https, by the name its certificate carries.
pub fn https(server: &TestServer) -> http::Uri {
    format!("https://localhost:{}/mcp", server.addr.port())
        .parse()
        .unwrap()
}

#[tokio::test]
async fn https_with_a_trusted_test_ca_speaks_h2() {
    let pki = pki();
    let server = tls_server(&pki).await;
    let c = HttpClient::new(trusting(&pki)).unwrap();
    for _ in 0..3 {
        let items = exchange(&c, post(https(&server), 1)).await;
        assert!(items[0].is_final_response);
    }
    assert_eq!(server.seen()[0].version, http::Version::HTTP_2);
    assert_eq!(server.accepted(), 1);
}

/// The `Host` values each request the server saw carried.
fn hosts(server: &TestServer) -> Vec<Vec<String>> {
    let seen = server.seen();
    let values = |s: &crate::server::Seen| {
        let all = s.headers.get_all(http::header::HOST).iter();
        all.map(|v| v.to_str().unwrap().to_owned()).collect()
    };
    seen.iter().map(values).collect()
}

#[tokio::test]
async fn each_http1_request_names_its_host_once_and_h2_ones_use_the_authority() {
    let pki = pki();
    let reply = || handler(|_| async { json(StatusCode::OK, response(1)) });
    // Plain HTTP, and HTTPS that offers only HTTP/1.1: the first request (protocol not
    // known yet) and the later ones (the origin's `Host` written once) alike.
    let plain = TestServer::start(reply()).await;
    let h1 = TestServer::start_with(
        reply(),
        Some(tokio_rustls::TlsAcceptor::from(server_config(
            &pki,
            &[b"http/1.1"],
        ))),
    )
    .await;
    let c = HttpClient::new(trusting(&pki)).unwrap();
    for _ in 0..3 {
        exchange(&c, post(plain.url("/mcp"), 1)).await;
        exchange(&c, post(https(&h1), 1)).await;
    }
    let want = |host: &str| vec![vec![host.to_owned()]; 3];
    assert_eq!(
        hosts(&plain),
        want(&format!("127.0.0.1:{}", plain.addr.port()))
    );
    assert_eq!(hosts(&h1), want(&format!("localhost:{}", h1.addr.port())));
    // Over h2 the authority goes as `:authority`, with no `Host` beside it.
    let h2 = tls_server(&pki).await;
    for _ in 0..3 {
        exchange(&c, post(https(&h2), 1)).await;
    }
    assert_eq!(h2.seen()[2].version, http::Version::HTTP_2);
    assert_eq!(hosts(&h2), vec![Vec::<String>::new(); 3]);
}

#[tokio::test]
async fn a_certificate_from_an_unknown_ca_fails_as_tls_and_is_not_sent() {
    let trusted = pki();
    let served = pki();
    let server = tls_server(&served).await;
    let c = HttpClient::new(trusting(&trusted)).unwrap();
    let err = c.post(post(https(&server), 1)).await.unwrap_err();
    assert!(err.is_tls(), "{err}");
    assert_eq!(err.delivery(), Delivery::NotSent);
    assert!(server.seen().is_empty());
}

#[test]
fn pem_roots_are_accepted() {
    let pki = pki();
    let mut cfg = crate::config();
    assert_eq!(cfg.add_pem_roots(pki.ca_pem.as_bytes()).unwrap(), 1);
    assert_eq!(cfg.extra_roots[0], pki.ca_der);
}

#[tokio::test]
async fn a_tls_handshake_that_never_ends_fails_within_twice_the_connect_timeout() {
    // Accepts TCP and reads the ClientHello, then says nothing.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let c = HttpClient::new({
        let mut c = crate::config();
        c.connect_timeout = std::time::Duration::from_millis(200);
        c
    })
    .unwrap();
    let url: http::Uri = format!("https://localhost:{port}/mcp").parse().unwrap();
    let started = std::time::Instant::now();
    let err = tokio::time::timeout(std::time::Duration::from_secs(5), c.post(post(url, 1)))
        .await
        .expect("the connect is bounded")
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(err.delivery(), Delivery::NotSent, "{err}");
    assert!(
        took < std::time::Duration::from_secs(2),
        "failed after {took:?}: {err}"
    );
    held.abort();
}

/// One address whose first connection reaches an HTTP/1.1-only backend and later ones an
/// h2 backend (a load balancer midway through enabling h2). A request sent while the
/// origin's only open connection is HTTP/1.1, and busy, goes out on a new connection
/// that negotiates h2: it carries no `Host` there, as hyper-util would send it.
#[tokio::test]
async fn a_request_on_a_new_h2_connection_carries_no_host_header() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let pki = pki();
    let n = Arc::new(AtomicUsize::new(0));
    let n2 = n.clone();
    let h1 = TestServer::start_with(
        handler(move |_| {
            let k = n2.fetch_add(1, Ordering::SeqCst);
            async move {
                if k == 1 {
                    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
                }
                json(StatusCode::OK, response(1))
            }
        }),
        Some(tokio_rustls::TlsAcceptor::from(server_config(
            &pki,
            &[b"http/1.1"],
        ))),
    )
    .await;
    let h2 = tls_server(&pki).await;
    // The front: connection 1 -> h1 backend, later ones -> h2 backend.
    let front = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = front.local_addr().unwrap().port();
    let (a1, a2) = (h1.addr, h2.addr);
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let (mut inb, _) = front.accept().await.unwrap();
            let to = if std::mem::replace(&mut first, false) {
                a1
            } else {
                a2
            };
            tokio::spawn(async move {
                let mut out = tokio::net::TcpStream::connect(to).await.unwrap();
                let _ = tokio::io::copy_bidirectional(&mut inb, &mut out).await;
            });
        }
    });
    let c = HttpClient::new(trusting(&pki)).unwrap();
    let url: http::Uri = format!("https://localhost:{port}/mcp").parse().unwrap();
    exchange(&c, post(url.clone(), 1)).await; // conn 1, HTTP/1.1
    // Keep conn 1 busy (its second request is slow), then send another.
    let c2 = c.clone();
    let u2 = url.clone();
    let slow = tokio::spawn(async move { exchange(&c2, post(u2, 1)).await });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    exchange(&c, post(url.clone(), 1)).await;
    slow.await.unwrap();
    let seen = h2.seen();
    assert!(!seen.is_empty(), "the third request went to the h2 backend");
    for s in &seen {
        assert_eq!(s.version, http::Version::HTTP_2);
        let hosts: Vec<_> = s.headers.get_all(http::header::HOST).iter().collect();
        assert!(hosts.is_empty(), "Host sent over h2: {hosts:?}");
    }
}
