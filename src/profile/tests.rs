//! The profiles' raw files are written like report files: a symlink planted at their
//! name in a shared report directory does not redirect the write.

use super::*;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A pprof listener that answers every request with the gzipped sample profile.
async fn fake_pprof() -> String {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let profile = pprof::tests::sample_profile().encode_to_vec();
    std::io::Write::write_all(&mut gz, &profile).unwrap();
    let body = gz.finish().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(head.as_bytes()).await;
                let _ = conn.write_all(&body).await;
            });
        }
    });
    addr
}

#[tokio::test]
async fn planted_symlinks_do_not_redirect_the_raw_profiles() {
    crate::tls::install_crypto_provider();
    let addr = fake_pprof().await;
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    for kind in ["cpu", "heap"] {
        let raw = dir
            .path()
            .join(format!("{}.pb.gz", file_stem("alice", kind)));
        std::os::unix::fs::symlink(&victim, raw).unwrap();
    }
    let target = Target {
        name: "alice".into(),
        implementation: "lnd".into(),
        method: Method::Pprof { addr: addr.clone() },
    };
    let spec = ProfileSpec {
        nodes: vec!["alice".into()],
        start: Duration::ZERO,
        duration: Duration::from_secs(1),
    };
    let cpu = capture_cpu(&target, &spec, dir.path(), &CancellationToken::new()).await;
    let running = Running {
        spec,
        dir: dir.path().to_path_buf(),
        load_done: CancellationToken::new(),
        tasks: Vec::new(),
    };
    let heap = running.heap(&target, &addr).await;
    let victim_now = std::fs::read(&victim).unwrap();
    assert!(
        victim_now == b"untouched",
        "the symlink's target was overwritten ({} bytes)",
        victim_now.len()
    );
    for captured in [cpu, heap] {
        let raw = dir.path().join(captured.expect("profile taken").raw_file);
        let meta = std::fs::symlink_metadata(&raw).unwrap();
        assert!(meta.is_file(), "{} is a regular file", raw.display());
        assert!(pprof::parse(&std::fs::read(&raw).unwrap()).is_ok());
    }
}
