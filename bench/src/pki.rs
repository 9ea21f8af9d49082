//! A throwaway certificate authority and a server certificate for 127.0.0.1, for the
//! benchmark's HTTPS case. Clients trust the CA through their extra roots.

use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The CA (as PEM, for clients) and the server's certificate chain and key.
pub(crate) struct Pki {
    /// The CA certificate, PEM.
    pub(crate) ca_pem: String,
    leaf: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

impl Pki {
    /// A fresh CA and a leaf certificate for `127.0.0.1` and `localhost` signed by it.
    pub(crate) fn generate() -> Result<Self, String> {
        let err = |e: rcgen::Error| e.to_string();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(err)?)
            .map_err(err)?;
        let leaf_key = KeyPair::generate().map_err(err)?;
        let leaf = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .map_err(err)?
            .signed_by(&leaf_key, &ca)
            .map_err(err)?;
        Ok(Self {
            ca_pem: ca.pem(),
            leaf: leaf.der().clone(),
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        })
    }

    /// A server configuration offering `alpn` (for example `h2` and `http/1.1`).
    pub(crate) fn server_config(
        &self,
        alpn: &[&[u8]],
    ) -> Result<Arc<rustls::ServerConfig>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(vec![self.leaf.clone()], self.key.clone_key())
            .map_err(|e| e.to_string())?;
        cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(Arc::new(cfg))
    }
}
