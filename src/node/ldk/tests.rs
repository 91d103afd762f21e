use super::*;
use crate::node::driver::NodeDriver;

#[test]
fn the_auth_header_is_an_hmac_of_the_time_and_the_body_under_the_key() {
    // Computed apart: python3 hmac.new(b'test_api_key', struct.pack('>Q', 1700000000)
    // + b'body', hashlib.sha256).hexdigest()
    assert_eq!(
        auth_header(b"test_api_key", 1_700_000_000, b"body"),
        "HMAC 1700000000:55b0d601f7f38c3986c727c988048ecf3cae20ec2c0a00114b6264e23b665ffd"
    );
    assert_ne!(
        auth_header(b"test_api_key", 1_700_000_001, b"body"),
        auth_header(b"test_api_key", 1_700_000_000, b"body")
    );
}

#[test]
fn error_responses_are_decoded_and_plain_text_is_kept() {
    let body = proto::ErrorResponse {
        message: "Invalid credentials".into(),
        error_code: proto::ErrorCode::AuthError as i32,
    }
    .encode_to_vec();
    let e = server_error(401, &body);
    assert_eq!(e.code, Some(proto::ErrorCode::AuthError));
    assert_eq!(e.to_string(), "HTTP 401 AuthError: Invalid credentials");
    let e = server_error(400, b"Unknown request: Nope");
    assert_eq!(e.code, None);
    assert_eq!(e.to_string(), "HTTP 400: Unknown request: Nope");
}

fn lightning_error(message: &str) -> ServerError {
    ServerError {
        http: 500,
        code: Some(proto::ErrorCode::LightningError),
        message: message.into(),
    }
}

#[test]
fn refused_sends_map_to_reasons_and_request_errors_stay_errors() {
    assert_eq!(
        send_failure(&lightning_error("Failed to send the given payment.")),
        Some(FailureReason::NoRoute)
    );
    assert_eq!(
        send_failure(&lightning_error("Insufficient funds for transaction.")),
        Some(FailureReason::InsufficientBalance)
    );
    assert_eq!(
        send_failure(&lightning_error(
            "A payment with the given hash has already been initiated."
        )),
        Some(FailureReason::IncorrectPaymentDetails)
    );
    assert_eq!(
        send_failure(&lightning_error("Something new.")),
        Some(FailureReason::Error)
    );
    let bad_invoice = ServerError {
        http: 400,
        code: Some(proto::ErrorCode::InvalidRequestError),
        message: "The given invoice is invalid.".into(),
    };
    assert_eq!(send_failure(&bad_invoice), None);
}

#[test]
fn payments_are_final_when_succeeded_or_failed() {
    let payment = |status: proto::PaymentStatus, fee| proto::Payment {
        id: "00".into(),
        amount_msat: Some(1000),
        status: status as i32,
        fee_paid_msat: fee,
    };
    assert_eq!(
        final_outcome(&payment(proto::PaymentStatus::Pending, None)),
        None
    );
    assert_eq!(
        final_outcome(&payment(proto::PaymentStatus::Succeeded, Some(7))),
        Some(PaymentOutcome::Succeeded {
            fee_msat: 7,
            hops: 0
        })
    );
    assert_eq!(
        final_outcome(&payment(proto::PaymentStatus::Failed, None)),
        Some(PaymentOutcome::Failed {
            reason: FailureReason::Error
        })
    );
    let unknown = proto::Payment {
        status: 9,
        ..payment(proto::PaymentStatus::Pending, None)
    };
    assert_eq!(final_outcome(&unknown), None, "asked again");
}

#[test]
fn the_payment_hash_is_read_from_the_invoice() {
    // BOLT 11's first example, whose payment hash is 0001020304...0102.
    let invoice = "lnbc1pvjluezsp5zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zyg3zygspp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypqdpl2pkx2ctnv5sxxmmwwd5kgetjypeh2ursdae8g6twvus8g6rfwvs8qun0dfjkxaq9qrsgq357wnc5r2ueh7ck6q93dj32dlqnls087fxdwk8qakdyafkq3yap9us6v52vjjsrvywa6rt52cm9r9zqt8r2t7mlcwspyetp5h2tztugp9lfyql";
    let hash = payment_hash_of(invoice).expect("a payment hash");
    let expected = <[u8; 32] as bitcoin::hex::FromHex>::from_hex(
        "0001020304050607080900010203040506070809000102030405060708090102",
    )
    .unwrap();
    assert_eq!(hash, expected);
    assert_eq!(payment_hash_of("lnbc1notaninvoice"), None);
    let mut broken = invoice.to_string();
    broken.replace_range(20..21, "q");
    assert_eq!(payment_hash_of(&broken), None, "checksum fails");
}

#[test]
fn channels_are_active_when_usable_and_carry_their_funding_outpoint() {
    let c = proto::Channel {
        channel_id: "ab".into(),
        counterparty_node_id: "02aa".into(),
        funding_txo: Some(proto::OutPoint {
            txid: "ff".repeat(32),
            vout: 1,
        }),
        user_channel_id: "7".into(),
        channel_value_sats: 1_000_000,
        outbound_capacity_msat: 900_000_500,
        is_channel_ready: true,
        is_usable: false,
    };
    let info = channel_info(&c);
    assert_eq!(info.channel_point, format!("{}:1", "ff".repeat(32)));
    assert_eq!(info.local_balance_sat, 900_000);
    assert!(!info.active, "ready but the peer is away");
    assert!(
        channel_info(&proto::Channel {
            is_usable: true,
            ..c
        })
        .active
    );
}

/// What faults left: open channels and the usable ones; a channel no longer listed
/// that still has a balance counts as closed, once however many balances it has; HTLCs are not counted (ldk-server gives their amounts only).
#[test]
fn channel_health_counts_open_usable_and_closed_channels() {
    use proto::{Balance, BalanceChannel, LightningBalance};
    let channel = |id: &str, usable: bool| proto::Channel {
        channel_id: id.into(),
        is_usable: usable,
        ..Default::default()
    };
    let balance = |b: fn(BalanceChannel) -> Balance, id: &str| LightningBalance {
        balance_type: Some(b(BalanceChannel {
            channel_id: id.into(),
        })),
    };
    let open = [channel("a", true), channel("b", false)];
    let balances = [
        balance(Balance::ClaimableOnChannelClose, "a"),
        balance(Balance::ClaimableOnChannelClose, "b"),
        balance(Balance::ClaimableAwaitingConfirmations, "c"),
        balance(Balance::MaybeTimeoutClaimableHtlc, "c"),
        balance(Balance::ContentiousClaimable, "d"),
        // Closed, its commitment not confirmed yet.
        balance(Balance::ClaimableOnChannelClose, "e"),
    ];
    let h = super::channels::channel_health(&open, &balances);
    assert_eq!(
        (h.channels, h.active, h.pending_htlcs, h.force_closed),
        (2, 1, None, 3)
    );
}

pub(super) fn endpoint(dir: &std::path::Path, binary: std::path::PathBuf) -> NodeEndpoint {
    NodeEndpoint {
        name: "bob".into(),
        implementation: Implementation::Ldk,
        rpc_addr: "127.0.0.1:1".into(),
        p2p_addr: "127.0.0.1:2".into(),
        credentials: LDK.credentials(&|f| dir.join(f)),
        data_dir: dir.to_path_buf(),
        binary,
        pid: None,
        payment_engine: Default::default(),
    }
}

#[test]
fn the_version_comes_from_the_build_stamp_or_the_image() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("ldk-server");
    assert_eq!(
        version_of(&endpoint(dir.path(), binary.clone())),
        "ldk-server"
    );
    std::fs::write(dir.path().join(".ldk-server.version"), "v0.1.0 ee1c96c\n").unwrap();
    assert_eq!(
        version_of(&endpoint(dir.path(), binary)),
        "ldk-server v0.1.0 (source ee1c96c)"
    );
    assert_eq!(
        version_of(&endpoint(dir.path(), "lnbench/ldk:v0.1.0".into())),
        "ldk-server (lnbench/ldk:v0.1.0)"
    );
}

#[tokio::test]
async fn a_missing_api_key_file_is_a_credentials_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let ep = endpoint(dir.path(), dir.path().join("ldk-server"));
    let Err(err) = LdkNode::connect("bob", &ep) else {
        panic!("connected without a key")
    };
    assert!(
        matches!(&err, NodeError::Credentials { what: "API key", path, .. } if path.ends_with("api_key")),
        "{err}"
    );
    let why = LDK.ready(&ep).await.expect_err("no key, not ready");
    assert!(why.contains("API key"), "{why}");
}

#[tokio::test]
async fn connect_peer_notes_the_address_open_channel_needs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("api_key"), "k\n").unwrap();
    let node = LdkNode::connect("bob", &endpoint(dir.path(), dir.path().join("x"))).unwrap();
    let peer = format!("02{}", "ab".repeat(32));
    let err = node.open_channel(&peer, 100_000).await.unwrap_err();
    assert!(
        err.to_string().contains("connect_peer comes first"),
        "{err}"
    );
    assert!(node.connect_peer("nothex", "127.0.0.1:9").await.is_err());
    node.connect_peer(&peer, "127.0.0.1:9").await.unwrap();
    let clone = node.clone();
    assert_eq!(
        clone.peers.lock().unwrap().get(&peer).map(String::as_str),
        Some("127.0.0.1:9"),
        "clones share the noted addresses"
    );
    // Nothing listens on port 1: the node is still starting, for the callers.
    let err = node.get_info().await.unwrap_err();
    assert!(is_starting_up(&err), "{err}");
}

#[tokio::test]
async fn keysend_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("api_key"), "k").unwrap();
    let node = LdkNode::connect("bob", &endpoint(dir.path(), dir.path().join("x"))).unwrap();
    let err = node
        .keysend(
            &format!("02{}", "ab".repeat(32)),
            1000,
            Duration::from_secs(1),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no keysend"), "{err}");
}
