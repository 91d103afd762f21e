use super::*;

/// A status as the gRPC plugin makes it of lightningd's JSON-RPC error.
fn rpc_error(method: &str, code: i64, message: &str) -> tonic::Status {
    tonic::Status::new(
        tonic::Code::Unknown,
        format!(
            "Error calling method {method}: RpcError {{ code: Some({code}), message: {message:?}, data: None }}"
        ),
    )
}

#[test]
fn the_json_rpc_code_is_read_from_the_plugins_status() {
    let status = rpc_error(
        "Xpay",
        205,
        "Failed: We could not find a usable set of paths.",
    );
    assert_eq!(rpc_error_code(status.message()), Some(205));
    assert_eq!(
        rpc_error_code(rpc_error("Xkeysend", -1, "x").message()),
        Some(-1)
    );
    assert_eq!(
        rpc_error_code("Error calling method Xpay: Io(Os { code: 2 })"),
        None
    );
}

#[test]
fn payment_failures_map_to_our_reasons() {
    let cases = [
        (
            203,
            "Destination said it doesn't know invoice",
            FailureReason::IncorrectPaymentDetails,
        ),
        (
            205,
            "Failed: We could not find a usable set of paths.",
            FailureReason::NoRoute,
        ),
        (
            205,
            "Failed: We could not find a usable set of paths. Total source capacity is only 4000msat (in 1 channels).",
            FailureReason::InsufficientBalance,
        ),
        (
            215,
            "insufficient funds",
            FailureReason::InsufficientBalance,
        ),
        (210, "Payment timed out", FailureReason::Timeout),
        (
            209,
            "Timed out after after 3 attempts. ",
            FailureReason::Timeout,
        ),
        (
            209,
            "Failed after 2 attempts. Then routing failed: We could not find a usable set of paths.",
            FailureReason::NoRoute,
        ),
        (209, "Other payment error", FailureReason::Error),
        (207, "Invoice expired", FailureReason::Error),
        (214, "keysend preapproval declined", FailureReason::Canceled),
        (-1, "Catchall nonspecific error", FailureReason::Error),
    ];
    for (code, message, reason) in cases {
        assert_eq!(
            payment_failure(&rpc_error("Xkeysend", code, message)),
            Some(reason),
            "{code} {message}"
        );
    }
}

#[test]
fn errors_that_are_not_about_the_payment_stay_errors() {
    // A malformed request is the tool's fault, not a failed payment.
    assert_eq!(
        payment_failure(&rpc_error("Xpay", -32602, "invstring: Invalid bolt11")),
        None
    );
    // Transport and plugin errors.
    assert_eq!(
        payment_failure(&tonic::Status::unavailable("connection refused")),
        None
    );
    assert_eq!(
        payment_failure(&tonic::Status::internal(
            "Connection refused (os error 111)"
        )),
        None
    );
}

#[test]
fn starting_up_is_recognised() {
    let rpc = |status: &str| NodeError::Rpc {
        node: "bob".into(),
        call: "Getinfo",
        status: status.into(),
    };
    assert!(is_starting_up(&rpc(
        "Unavailable: error trying to connect: tcp connect error"
    )));
    assert!(is_starting_up(&rpc(
        "Internal: Connection refused (os error 111)"
    )));
    assert!(is_starting_up(&NodeError::Connect {
        node: "bob".into(),
        endpoint: "127.0.0.1:1".into(),
        source: "refused".into(),
    }));
    assert!(!is_starting_up(&rpc(
        "Unknown: Error calling method Getinfo: RpcError { code: Some(-32601), message: \"Unknown command\", data: None }"
    )));
}

#[test]
fn getinfo_is_synced_without_either_warning() {
    let info = |bitcoind: Option<&str>, lightningd: Option<&str>| pb::GetinfoResponse {
        id: vec![2; 33],
        alias: "bob".into(),
        version: "v26.06.6".into(),
        blockheight: 251,
        num_active_channels: 3,
        warning_bitcoind_sync: bitcoind.map(str::to_string),
        warning_lightningd_sync: lightningd.map(str::to_string),
        ..Default::default()
    };
    let channels = vec![peer_channel(pb::ChannelState::ChanneldNormal, true, 0); 3];
    let synced = node_info(info(None, None), &channels);
    assert!(synced.synced_to_chain);
    assert_eq!(synced.pubkey, "02".repeat(33));
    assert_eq!((synced.block_height, synced.num_active_channels), (251, 3));
    let behind = info(Some("Bitcoind is not up-to-date"), None);
    assert!(!node_info(behind, &channels).synced_to_chain);
    let loading = info(None, Some("Still loading latest blocks"));
    assert!(!node_info(loading, &channels).synced_to_chain);
}

fn peer_channel(
    state: pb::ChannelState,
    connected: bool,
    htlcs: usize,
) -> pb::ListpeerchannelsChannels {
    pb::ListpeerchannelsChannels {
        peer_id: vec![3; 33],
        peer_connected: connected,
        state: state as i32,
        htlcs: vec![pb::ListpeerchannelsChannelsHtlcs::default(); htlcs],
        ..Default::default()
    }
}

/// A node started again has its channels in CHANNELD_NORMAL at once (getinfo counts
/// them); they are usable only once the peer is connected again.
#[test]
fn channels_of_a_disconnected_peer_are_not_active() {
    use pb::ChannelState as S;
    let info = pb::GetinfoResponse {
        id: vec![2; 33],
        num_active_channels: 2,
        ..Default::default()
    };
    let down = vec![peer_channel(S::ChanneldNormal, false, 0); 2];
    assert_eq!(node_info(info.clone(), &down).num_active_channels, 0);
    let back = [
        peer_channel(S::ChanneldNormal, true, 0),
        peer_channel(S::ChanneldNormal, false, 0),
    ];
    assert_eq!(node_info(info, &back).num_active_channels, 1);
}

/// What faults left: open channels with their HTLCs, force closes apart.
#[test]
fn channel_health_counts_open_active_htlcs_and_force_closed() {
    use pb::ChannelState as S;
    let channels = [
        peer_channel(S::ChanneldNormal, true, 2),
        peer_channel(S::ChanneldNormal, false, 1),
        peer_channel(S::ChanneldAwaitingLockin, true, 0),
        peer_channel(S::AwaitingUnilateral, false, 0),
        peer_channel(S::Onchain, false, 0),
        peer_channel(S::ClosingdComplete, true, 0),
    ];
    let h = super::readback::channel_health(&channels);
    assert_eq!(
        (h.channels, h.active, h.pending_htlcs, h.force_closed),
        (3, 1, Some(3), 2)
    );
}

#[test]
fn wallet_balance_counts_confirmed_and_unconfirmed_outputs_only() {
    use pb::listfunds_outputs::ListfundsOutputsStatus as S;
    let output = |sat: u64, status: S| pb::ListfundsOutputs {
        amount_msat: msat(sat * 1000),
        status: status as i32,
        ..Default::default()
    };
    let balance = wallet_balance(&[
        output(5_100_000, S::Confirmed),
        output(100_000, S::Confirmed),
        output(7, S::Unconfirmed),
        output(1_000, S::Spent),
        output(50, S::Immature),
    ]);
    assert_eq!(
        balance,
        WalletBalance {
            confirmed_sat: 5_200_000,
            unconfirmed_sat: 7
        }
    );
}

#[test]
fn a_channel_is_active_in_channeld_normal_with_its_peer_connected() {
    let channel = |state: pb::ChannelState, connected: bool| pb::ListpeerchannelsChannels {
        peer_id: vec![3; 33],
        peer_connected: connected,
        state: state as i32,
        funding_txid: Some(vec![0xab; 32]),
        funding_outnum: Some(1),
        total_msat: msat(5_000_000_000),
        to_us_msat: msat(4_999_000_500),
        ..Default::default()
    };
    let c = channel_info(&channel(pb::ChannelState::ChanneldNormal, true));
    assert!(c.active);
    assert_eq!(c.remote_pubkey, "03".repeat(33));
    assert_eq!(c.channel_point, format!("{}:1", "ab".repeat(32)));
    assert_eq!(
        (c.capacity_sat, c.local_balance_sat),
        (5_000_000, 4_999_000)
    );
    assert!(!channel_info(&channel(pb::ChannelState::ChanneldNormal, false)).active);
    assert!(!channel_info(&channel(pb::ChannelState::ChanneldAwaitingLockin, true)).active);
}

#[test]
fn success_reports_the_fee_as_sent_minus_delivered() {
    assert_eq!(
        succeeded(msat(1_000), msat(1_012)),
        PaymentOutcome::Succeeded {
            fee_msat: 12,
            hops: 0
        }
    );
}

#[test]
fn invoice_labels_are_fresh_and_retry_budgets_whole_seconds() {
    assert_ne!(invoice_label(), invoice_label());
    assert!(invoice_label().starts_with("lnbench-"));
    assert_eq!(retry_for(Duration::from_millis(300)), Some(1));
    assert_eq!(retry_for(Duration::from_secs(60)), Some(60));
}

#[test]
fn peers_are_dialled_at_host_and_port() {
    assert_eq!(split_host_port("127.0.0.1:9735"), Some(("127.0.0.1", 9735)));
    assert_eq!(split_host_port("bob:9735"), Some(("bob", 9735)));
    assert_eq!(split_host_port("[::1]:9735"), Some(("::1", 9735)));
    assert_eq!(split_host_port("bob"), None);
}
