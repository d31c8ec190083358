//! TLS for extensions: client configurations that trust exactly an ExtensionConfig's
//! `caBundle`, server configurations from PEM files, and generated certificates (a CA
//! and a serving certificate it signs) for extensions started without their own.

use std::sync::Arc;

use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A client configuration trusting only the certificates of the PEM `ca_bundle`.
pub fn client_config(ca_bundle: &[u8]) -> Result<rustls::ClientConfig, String> {
    let mut roots = RootCertStore::empty();
    let mut count = 0;
    for cert in CertificateDer::pem_slice_iter(ca_bundle) {
        let cert = cert.map_err(|e| format!("failed to read caBundle: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("failed to read caBundle: {e}"))?;
        count += 1;
    }
    if count == 0 {
        // Cluster API would fall back to the system's roots; topograph verifies
        // extensions with their ExtensionConfig's bundle only, so say so.
        return Err("caBundle holds no PEM certificate to verify the extension with".into());
    }
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// A server configuration from a PEM certificate chain and private key.
pub fn server_config(cert_pem: &[u8], key_pem: &[u8]) -> Result<rustls::ServerConfig, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("failed to read certificate: {e}"))?;
    if certs.is_empty() {
        return Err("no PEM certificate in the certificate file".into());
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|e| format!("failed to read private key: {e}"))?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("failed to use certificate and key: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// A generated CA and a serving certificate it signed, all PEM.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The CA certificate (what an ExtensionConfig's `caBundle` holds).
    pub ca_pem: String,
    /// The serving certificate.
    pub cert_pem: String,
    /// The serving certificate's private key.
    pub key_pem: String,
}

/// Generates a CA and a serving certificate for `hosts` (DNS names or IP addresses).
pub fn generate(hosts: &[&str]) -> Result<Generated, String> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let err = |e: rcgen::Error| format!("failed to generate certificates: {e}");
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "topograph extension CA");
    let ca_key = KeyPair::generate().map_err(err)?;
    let ca_cert = ca_params.self_signed(&ca_key).map_err(err)?;
    let issuer = Issuer::new(ca_params, ca_key);
    let names: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
    let mut leaf = CertificateParams::new(names).map_err(err)?;
    leaf.distinguished_name.push(
        DnType::CommonName,
        hosts.first().copied().unwrap_or("localhost"),
    );
    let leaf_key = KeyPair::generate().map_err(err)?;
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer).map_err(err)?;
    Ok(Generated {
        ca_pem: ca_cert.pem(),
        cert_pem: leaf_cert.pem(),
        key_pem: leaf_key.serialize_pem(),
    })
}
