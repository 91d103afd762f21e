//! TLS for talking to nodes and chain backends: one rustls crypto provider (ring) for
//! the whole process, a verifier that pins a node's self-signed certificate, and mutual
//! TLS with a node's own certificate authority.
//!
//! LND and btcd generate self-signed certificates. LND's is marked as a CA, which
//! webpki rejects as an end-entity certificate, and neither names a host we could check
//! in a meaningful way. So instead of chain validation we accept exactly the
//! certificate the node wrote to disk, and still verify the handshake signatures
//! against its public key (that is what proves the peer holds the key).
//!
//! Core Lightning's gRPC plugin makes a CA, a server certificate it signs (naming `cln`
//! and `localhost`) and a client certificate the server requires: there the server is
//! checked the ordinary way, against that CA and the name `localhost`, whatever address
//! is dialled.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tonic::transport::Uri;

/// A certificate could not be loaded or a TLS config not built.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read certificate {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no PEM certificate found in {path}")]
    NoCertificate { path: PathBuf },
    #[error("no PEM private key found in {path}")]
    NoKey { path: PathBuf },
    #[error("cannot build TLS client config")]
    Config(#[source] rustls::Error),
    #[error("cannot generate a certificate")]
    Generate(#[source] rcgen::Error),
}

/// The process-wide crypto provider (ring).
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Installs ring as rustls' process default. Idempotent; call it at start-up before
/// any client that relies on the default (reqwest, tonic) is built.
pub fn install_crypto_provider() {
    // Err means a provider is already installed (by us earlier, or by a test).
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Reads the first certificate of a PEM file (LND's `tls.cert`, btcd's `rpc.cert`).
pub fn read_pem_cert(path: &Path) -> Result<CertificateDer<'static>, TlsError> {
    let bytes = read_pem(path)?;
    cert_from_pem(&bytes).ok_or_else(|| TlsError::NoCertificate {
        path: path.to_path_buf(),
    })
}

/// A PEM file's bytes: a regular file of bounded size (an external node's are the
/// user's paths), never a FIFO waited on.
fn read_pem(path: &Path) -> Result<Vec<u8>, TlsError> {
    crate::files::read_bytes(path, crate::files::SMALL_MAX_BYTES).map_err(|source| TlsError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The first certificate in PEM text, if any.
pub fn cert_from_pem(pem: &[u8]) -> Option<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem).find_map(Result::ok)
}

/// Reads the private key of a PEM file (PKCS#8, SEC1 or PKCS#1), e.g. a client key.
pub fn read_pem_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let bytes = read_pem(path)?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|_| TlsError::NoKey {
        path: path.to_path_buf(),
    })
}

/// A fresh self-signed ECDSA P-256 certificate for `names` (DNS names or IP
/// addresses) and its PKCS#8 key, both PEM. btcd generates a P-521 certificate when it
/// has none, and ring cannot verify P-521 signatures; so we give btcd this one.
/// Marked as a CA like the certificates btcd and LND make, since Go clients put it in
/// their root pool.
pub fn self_signed_pem(names: &[&str]) -> Result<(String, String), TlsError> {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair, KeyUsagePurpose};
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).map_err(TlsError::Generate)?;
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names).map_err(TlsError::Generate)?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::KeyCertSign,
    ];
    params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, "lnbench-tui");
    let cert = params.self_signed(&key).map_err(TlsError::Generate)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// Accepts exactly one certificate, whatever its CA flag, names or validity dates,
/// and verifies handshake signatures with the ring provider's algorithms.
#[derive(Debug)]
pub struct PinnedCertVerifier {
    pinned: CertificateDer<'static>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl PinnedCertVerifier {
    pub fn new(pinned: CertificateDer<'static>) -> Self {
        Self {
            pinned,
            algorithms: rustls::crypto::ring::default_provider().signature_verification_algorithms,
        }
    }
}

impl ServerCertVerifier for PinnedCertVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.pinned.as_ref() {
            Ok(ServerCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A client config that trusts only `pinned` and offers the given ALPN protocols.
pub fn pinned_client_config(
    pinned: CertificateDer<'static>,
    alpn: &[&[u8]],
) -> Result<ClientConfig, TlsError> {
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Config)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(PinnedCertVerifier::new(pinned)))
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(config)
}

/// Client config for gRPC (tonic): pinned certificate, ALPN `h2`.
pub fn grpc_client_config(pinned: CertificateDer<'static>) -> Result<ClientConfig, TlsError> {
    pinned_client_config(pinned, &[b"h2"])
}

/// Client config for gRPC over mutual TLS: the server's certificate must chain to `ca`
/// (and name the server name the connector gives); the client presents `cert` signed
/// by the same CA, proving it holds `key`. ALPN `h2`.
pub fn mutual_grpc_client_config(
    ca: CertificateDer<'static>,
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> Result<ClientConfig, TlsError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).map_err(TlsError::Config)?;
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Config)?
        .with_root_certificates(roots)
        .with_client_auth_cert(vec![cert], key)
        .map_err(TlsError::Config)?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(config)
}

/// Client config for JSON-RPC over HTTPS (reqwest): pinned certificate, ALPN h2 and
/// HTTP/1.1 (btcd speaks HTTP/1.1).
pub fn https_client_config(pinned: CertificateDer<'static>) -> Result<ClientConfig, TlsError> {
    pinned_client_config(pinned, &[b"h2", b"http/1.1"])
}

/// A connector for `tonic::transport::Endpoint::connect_with_connector`: dials TCP to
/// the URI's host and port and does the TLS handshake itself with the given config
/// (pinned, or a CA for mutual TLS). The endpoint must be given as `http://host:port`
/// (tonic refuses `https://` when it does not do the TLS itself).
#[derive(Clone)]
pub struct RustlsConnector {
    connector: tokio_rustls::TlsConnector,
    /// The name to ask for and check, when it is not the dialled host.
    server_name: Option<ServerName<'static>>,
}

impl RustlsConnector {
    pub fn new(config: ClientConfig) -> Self {
        Self {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            server_name: None,
        }
    }

    /// Asks for (SNI) and checks `name` whatever address is dialled: a certificate
    /// names `localhost` while the tool dials `127.0.0.1:<published port>`.
    pub fn with_server_name(mut self, name: ServerName<'static>) -> Self {
        self.server_name = Some(name);
        self
    }
}

type TlsIo = hyper_util::rt::TokioIo<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl tower::Service<Uri> for RustlsConnector {
    type Response = TlsIo;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<TlsIo, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connector = self.connector.clone();
        let server_name = self.server_name.clone();
        Box::pin(async move {
            let host = uri.host().ok_or("URI without host")?.to_string();
            let port = uri.port_u16().ok_or("URI without port")?;
            let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
            tcp.set_nodelay(true)?;
            // A pinned verifier ignores the name; a CA-verifying one checks it.
            let name = match server_name {
                Some(name) => name,
                None => ServerName::try_from(host)?,
            };
            let tls = connector.connect(name, tcp).await?;
            Ok(hyper_util::rt::TokioIo::new(tls))
        })
    }
}

/// Ok when a TLS handshake with the certificate in `cert_pem` succeeds at `addr`;
/// otherwise what went wrong. A published container port accepts TCP before the
/// program inside listens (the engine's proxy answers), so only a handshake shows the
/// server is up.
pub async fn handshake_ok(addr: &str, cert_pem: &[u8]) -> Result<(), String> {
    let cert = cert_from_pem(cert_pem).ok_or("its TLS certificate is not PEM (yet)")?;
    let config = pinned_client_config(cert, &[]).map_err(|e| format!("TLS config: {e}"))?;
    handshake_with(addr, config, "localhost").await
}

/// Ok when a TLS handshake with `config`, asking for `server_name`, succeeds at `addr`
/// within 2 s; otherwise what went wrong (connect, handshake, or no answer in time).
pub async fn handshake_with(
    addr: &str,
    config: ClientConfig,
    server_name: &str,
) -> Result<(), String> {
    const LIMIT: std::time::Duration = std::time::Duration::from_secs(2);
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let attempt = async {
        let tcp = (tokio::net::TcpStream::connect(addr).await)
            .map_err(|e| format!("connecting to {addr}: {e}"))?;
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| format!("server name {server_name}: {e}"))?;
        (connector.connect(name, tcp).await)
            .map(|_| ())
            .map_err(|e| format!("TLS handshake at {addr}: {e}"))
    };
    match tokio::time::timeout(LIMIT, attempt).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!(
            "no TLS handshake at {addr} within {} s",
            LIMIT.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A FIFO named as a node's certificate or key (an external node's credentials
    /// are the user's paths) is refused unread: it used to block the reading thread,
    /// and the run with it.
    #[test]
    fn a_fifo_as_a_certificate_or_a_key_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("tls.cert");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for err in [
            read_pem_cert(&fifo).map(|_| ()).unwrap_err(),
            read_pem_key(&fifo).map(|_| ()).unwrap_err(),
        ] {
            let TlsError::Read { source, .. } = err else {
                panic!("not a read error: {err}");
            };
            assert_eq!(source.kind(), std::io::ErrorKind::InvalidInput, "{source}");
        }
    }

    // Two self-signed P-256 certificates, both marked CA like LND's, generated once
    // with openssl (valid until 2126).
    const CERT_A: &str = "-----BEGIN CERTIFICATE-----
MIIBzTCCAXOgAwIBAgIUZlgScTvP8RzYs3iQh5qFeNvTjC4wCgYIKoZIzj0EAwIw
LTEXMBUGA1UECgwObG5iZW5jaCB0ZXN0IGExEjAQBgNVBAMMCWxvY2FsaG9zdDAg
Fw0yNjExMjIxMTEwMTdaGA8yMTI2MTAyOTExMTAxN1owLTEXMBUGA1UECgwObG5i
ZW5jaCB0ZXN0IGExEjAQBgNVBAMMCWxvY2FsaG9zdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABJx9/Z+6nlyrFBk9tbpqqw5j3ckE9/sMOhwZZolmQbzODOKVaJ5L
yoky1YMmwxCccg8wGR8gmPpGveGU7xoa4b2jbzBtMB0GA1UdDgQWBBSC334vwZKD
OYogdqL/VXBh6KG6JTAfBgNVHSMEGDAWgBSC334vwZKDOYogdqL/VXBh6KG6JTAP
BgNVHRMBAf8EBTADAQH/MBoGA1UdEQQTMBGCCWxvY2FsaG9zdIcEfwAAATAKBggq
hkjOPQQDAgNIADBFAiEAmpnIjHhd4AACIiFUZdpFQDrjkUbNycoWRGptcu394VgC
IC19Wixqqd7Oc5/rGpCIqU+ifJ8SsE1APuBxc5t8nLrD
-----END CERTIFICATE-----
";
    const KEY_A: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgO4VC7mG0fJC4E2iW
wC9sDFq7uiXNXV6Zf/14fJ4c/PShRANCAAScff2fup5cqxQZPbW6aqsOY93JBPf7
DDocGWaJZkG8zgzilWieS8qJMtWDJsMQnHIPMBkfIJj6Rr3hlO8aGuG9
-----END PRIVATE KEY-----
";
    const CERT_B: &str = "-----BEGIN CERTIFICATE-----
MIIBzDCCAXOgAwIBAgIUOUwwcLh9vOCtcDeKqpKkv98KhCkwCgYIKoZIzj0EAwIw
LTEXMBUGA1UECgwObG5iZW5jaCB0ZXN0IGIxEjAQBgNVBAMMCWxvY2FsaG9zdDAg
Fw0yNjExMjIxMTEwMTdaGA8yMTI2MTAyOTExMTAxN1owLTEXMBUGA1UECgwObG5i
ZW5jaCB0ZXN0IGIxEjAQBgNVBAMMCWxvY2FsaG9zdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABF394I+3nmmZfhZlF1QBjtwJXGYJpzoQydQhFAoNyRmssrnv8Dcl
O/9E7WTXXaogaDng/F639qQgDdnU0fbDLRejbzBtMB0GA1UdDgQWBBS/9X8yt3Bk
AFgKzZ8To9fb2LJKUDAfBgNVHSMEGDAWgBS/9X8yt3BkAFgKzZ8To9fb2LJKUDAP
BgNVHRMBAf8EBTADAQH/MBoGA1UdEQQTMBGCCWxvY2FsaG9zdIcEfwAAATAKBggq
hkjOPQQDAgNHADBEAiAyjSjbCq8eq1Z60253TFtxoKZaa3q2lCCQRjf/zsdGiwIg
AibTWa1Ij4p2YVe9szgsgEr2RyIJ+3rU+PCZ5KE0VDk=
-----END CERTIFICATE-----
";

    /// Starts a TLS server with certificate A on a free port; returns its port.
    async fn serve_cert_a() -> u16 {
        serve(CERT_A, KEY_A).await
    }

    async fn serve(cert: &str, key: &str) -> u16 {
        let cert = cert_from_pem(cert.as_bytes()).unwrap();
        let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    if let Ok(mut tls) = acceptor.accept(tcp).await {
                        use tokio::io::AsyncWriteExt;
                        let _ = tls.write_all(b"hi").await;
                        let _ = tls.shutdown().await;
                    }
                });
            }
        });
        port
    }

    async fn handshake(pinned: &str, port: u16) -> Result<Vec<u8>, BoxError> {
        let config = grpc_client_config(cert_from_pem(pinned.as_bytes()).unwrap())?;
        let mut connector = RustlsConnector::new(config);
        let uri: Uri = format!("http://127.0.0.1:{port}").parse()?;
        let io = tower::Service::call(&mut connector, uri).await?;
        let mut tls = io.into_inner();
        let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        use tokio::io::AsyncReadExt;
        let mut buf = Vec::new();
        tls.read_to_end(&mut buf).await?;
        assert_eq!(buf, b"hi");
        Ok(alpn.unwrap_or_default())
    }

    #[tokio::test]
    async fn accepts_the_pinned_ca_flagged_cert() {
        let port = serve_cert_a().await;
        let alpn = handshake(CERT_A, port).await.expect("pinned cert accepted");
        assert_eq!(alpn, b"h2");
    }

    #[tokio::test]
    async fn generated_cert_serves_a_pinned_handshake() {
        let (cert, key) = self_signed_pem(&["localhost", "127.0.0.1"]).unwrap();
        let port = serve(&cert, &key).await;
        handshake(&cert, port)
            .await
            .expect("generated cert accepted");
        let err = handshake(CERT_A, port)
            .await
            .expect_err("other pin rejected");
        assert!(
            err.to_string().contains("invalid peer certificate"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn rejects_a_different_cert() {
        let port = serve_cert_a().await;
        let err = handshake(CERT_B, port).await.expect_err("must reject");
        assert!(
            err.to_string().contains("invalid peer certificate"),
            "unexpected error: {err}"
        );
    }

    #[test]
    fn reads_first_cert_from_pem_and_reports_missing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tls.cert");
        std::fs::write(&path, format!("{CERT_A}{CERT_B}")).unwrap();
        let cert = read_pem_cert(&path).unwrap();
        assert_eq!(cert, cert_from_pem(CERT_A.as_bytes()).unwrap());
        std::fs::write(&path, "not a pem").unwrap();
        assert!(matches!(
            read_pem_cert(&path),
            Err(TlsError::NoCertificate { .. })
        ));
        assert!(matches!(
            read_pem_cert(&dir.path().join("missing")),
            Err(TlsError::Read { .. })
        ));
    }

    /// A CA, and a server and a client certificate it signs, made the way Core
    /// Lightning's gRPC plugin makes them (names `cln` and `localhost`, no extended key
    /// usage): `(ca, server cert, server key, client cert, client key)`, PEM.
    fn cln_like_pki() -> [String; 5] {
        use rcgen::{CertificateParams, IsCa, Issuer, KeyPair, KeyUsagePurpose};
        let names = || vec!["cln".to_string(), "localhost".to_string()];
        let ca_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let mut ca_params = CertificateParams::new(names()).unwrap();
        ca_params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params.key_usages.push(KeyUsagePurpose::KeyCertSign);
        ca_params.use_authority_key_identifier_extension = true;
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf = || {
            let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
            let mut params = CertificateParams::new(names()).unwrap();
            params.key_usages = vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
                KeyUsagePurpose::KeyAgreement,
            ];
            params.use_authority_key_identifier_extension = true;
            let cert = params.signed_by(&key, &issuer).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server, server_key) = leaf();
        let (client, client_key) = leaf();
        [ca.pem(), server, server_key, client, client_key]
    }

    /// A server that requires a client certificate signed by `ca`; returns its port.
    async fn serve_mutual(ca: &str, cert: &str, key: &str) -> u16 {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert_from_pem(ca.as_bytes()).unwrap()).unwrap();
        let clients = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .unwrap();
        let mut config = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(clients)
            .with_single_cert(
                vec![cert_from_pem(cert.as_bytes()).unwrap()],
                PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
            )
            .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    if let Ok(mut tls) = acceptor.accept(tcp).await {
                        use tokio::io::AsyncWriteExt;
                        let _ = tls.write_all(b"hi").await;
                        let _ = tls.shutdown().await;
                    }
                });
            }
        });
        port
    }

    /// Dials 127.0.0.1 asking for `localhost`, reads what the server says.
    async fn mutual_exchange(config: ClientConfig, port: u16) -> Result<Vec<u8>, BoxError> {
        let name = ServerName::try_from("localhost").unwrap();
        let mut connector = RustlsConnector::new(config).with_server_name(name);
        let uri: Uri = format!("http://127.0.0.1:{port}").parse()?;
        let io = tower::Service::call(&mut connector, uri).await?;
        let mut tls = io.into_inner();
        use tokio::io::AsyncReadExt;
        let mut buf = Vec::new();
        tls.read_to_end(&mut buf).await?;
        Ok(buf)
    }

    #[tokio::test]
    async fn mutual_tls_checks_the_server_against_the_ca_and_shows_the_client_cert() {
        let [ca, server, server_key, client, client_key] = cln_like_pki();
        let port = serve_mutual(&ca, &server, &server_key).await;
        let config = |ca: &str| {
            mutual_grpc_client_config(
                cert_from_pem(ca.as_bytes()).unwrap(),
                cert_from_pem(client.as_bytes()).unwrap(),
                PrivateKeyDer::from_pem_slice(client_key.as_bytes()).unwrap(),
            )
            .unwrap()
        };
        let said = mutual_exchange(config(&ca), port)
            .await
            .expect("server signed by the CA, client certificate accepted");
        assert_eq!(said, b"hi");
        assert_eq!(
            handshake_with(&format!("127.0.0.1:{port}"), config(&ca), "localhost").await,
            Ok(())
        );
        let refused = handshake_with(&format!("127.0.0.1:{port}"), config(&ca), "example.com")
            .await
            .expect_err("a name the certificate does not carry");
        assert!(
            refused.starts_with("TLS handshake at 127.0.0.1:"),
            "{refused}"
        );
        let [other_ca, ..] = cln_like_pki();
        let err = mutual_exchange(config(&other_ca), port)
            .await
            .expect_err("a server of another CA is refused");
        assert!(
            err.to_string().contains("invalid peer certificate"),
            "{err}"
        );
        // Without a client certificate the server ends the connection.
        let anonymous = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates({
                let mut roots = rustls::RootCertStore::empty();
                roots.add(cert_from_pem(ca.as_bytes()).unwrap()).unwrap();
                roots
            })
            .with_no_client_auth();
        assert!(mutual_exchange(anonymous, port).await.is_err());
    }

    #[test]
    fn keys_are_read_from_pem_and_a_missing_one_is_named() {
        let [_, _, key, ..] = cln_like_pki();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("client-key.pem");
        std::fs::write(&path, &key).unwrap();
        assert!(matches!(read_pem_key(&path), Ok(PrivateKeyDer::Pkcs8(_))));
        std::fs::write(&path, CERT_A).unwrap();
        assert!(matches!(read_pem_key(&path), Err(TlsError::NoKey { .. })));
    }

    #[test]
    fn install_is_idempotent() {
        install_crypto_provider();
        install_crypto_provider();
        assert!(CryptoProvider::get_default().is_some());
    }
}
