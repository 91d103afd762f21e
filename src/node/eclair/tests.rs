use super::*;

fn parts(json: &str) -> Vec<SentPart> {
    serde_json::from_str(json).unwrap()
}

/// The fields go as Eclair's API reads them: a form, with what is not plain escaped.
#[test]
fn form_bodies_escape_what_is_not_plain() {
    let fields: &[(&str, String)] = &[("uri", "02ab@127.0.0.1:9735".into()), ("d", "a b&c".into())];
    crate::tls::install_crypto_provider();
    let request = reqwest::Client::new()
        .post("http://127.0.0.1:1/connect")
        .form(fields)
        .build()
        .unwrap();
    assert_eq!(
        request.headers()[reqwest::header::CONTENT_TYPE],
        "application/x-www-form-urlencoded"
    );
    let body = request.body().and_then(|b| b.as_bytes()).unwrap();
    assert_eq!(body, b"uri=02ab%40127.0.0.1%3A9735&d=a+b%26c");
}

#[test]
fn error_answers_give_eclairs_message() {
    assert_eq!(
        error_message(r#"{"error":"route not found"}"#),
        "route not found"
    );
    assert_eq!(
        error_message("The requested resource could not be found.\n"),
        "The requested resource could not be found."
    );
}

#[test]
fn a_sent_part_makes_the_payment_succeed_with_its_fee_and_hops() {
    let outcome = payment_outcome(&parts(
        r#"[
          {"id":"a","status":{"type":"failed","failures":[{"failureType":"REMOTE","failureMessage":"x"}],"completedAt":{}}},
          {"id":"b","status":{"type":"sent","paymentPreimage":"00","feesPaid":1500,
            "route":[{"nodeId":"n1"},{"nodeId":"n2"}],"completedAt":{}}}
        ]"#,
    ));
    assert_eq!(
        outcome,
        Some(PaymentOutcome::Succeeded {
            fee_msat: 1500,
            hops: 2
        })
    );
}

#[test]
fn a_pending_part_or_no_part_yet_means_wait() {
    assert_eq!(
        payment_outcome(&parts(
            r#"[{"status":{"type":"failed","failures":[]}},{"status":{"type":"pending"}}]"#
        )),
        None
    );
    assert_eq!(payment_outcome(&parts("[]")), None);
}

#[test]
fn failed_payments_map_to_our_reasons() {
    let failed = |message: &str| {
        payment_outcome(&parts(&format!(
            r#"[{{"status":{{"type":"failed","failures":[{{"failureType":"LOCAL","failureMessage":{message:?},"failedRoute":[]}}]}}}}]"#
        )))
    };
    let cases = [
        (
            "02ab returned: incorrect payment details or unknown payment hash",
            FailureReason::IncorrectPaymentDetails,
        ),
        ("balance too low", FailureReason::InsufficientBalance),
        ("route not found", FailureReason::NoRoute),
        (
            "payment attempts exhausted without success",
            FailureReason::NoRoute,
        ),
        (
            "02ab returned: the complete payment amount was not received within a reasonable time",
            FailureReason::Timeout,
        ),
        ("something else", FailureReason::Error),
    ];
    for (message, reason) in cases {
        assert_eq!(
            failed(message),
            Some(PaymentOutcome::Failed { reason }),
            "{message}"
        );
    }
}

#[test]
fn a_payment_refused_at_once_is_a_failure_not_an_error() {
    assert_eq!(
        refused_payment("HTTP 500: balance too low"),
        Some(FailureReason::InsufficientBalance)
    );
    assert_eq!(refused_payment("HTTP 400: invalid invoice"), None);
}

#[test]
fn channels_are_read_from_their_active_commitment() {
    let c: Value = serde_json::from_str(
        r#"{"nodeId":"02ab","channelId":"cc","state":"NORMAL",
            "data":{"commitments":{"active":[{"fundingTxIndex":0,
              "fundingInput":"aa11:1","fundingAmount":1000000,
              "localCommit":{"spec":{"toLocal":400000000,"toRemote":600000000}}}]}}}"#,
    )
    .unwrap();
    assert_eq!(
        channel_info(&c),
        ChannelInfo {
            remote_pubkey: "02ab".into(),
            channel_point: "aa11:1".into(),
            capacity_sat: 1_000_000,
            local_balance_sat: 400_000,
            active: true,
        }
    );
    let waiting: Value =
        serde_json::from_str(r#"{"nodeId":"02ab","state":"WAIT_FOR_FUNDING_CONFIRMED"}"#).unwrap();
    assert!(!channel_info(&waiting).active);
}

/// What faults left: open channels (OFFLINE ones too) with the HTLCs of their
/// active commitment; a closing channel counts as force-closed once a commitment,
/// not a mutual close, is published.
#[test]
fn channel_health_counts_open_active_htlcs_and_force_closed() {
    let channels: Vec<Value> = serde_json::from_str(
        r#"[{"state":"NORMAL","data":{"commitments":{"active":[
              {"localCommit":{"spec":{"htlcs":[{"direction":"IN"},{"direction":"OUT"}]}}}]}}},
            {"state":"OFFLINE","data":{"commitments":{"active":[
              {"localCommit":{"spec":{"htlcs":[{"direction":"IN"}]}}}]}}},
            {"state":"CLOSING","data":{"localCommitPublished":{"commitTx":"ab"}}},
            {"state":"CLOSING","data":{"mutualClosePublished":[{"tx":"cd"}],
              "localCommitPublished":null,"revokedCommitPublished":[]}},
            {"state":"NEGOTIATING"}]"#,
    )
    .unwrap();
    let h = super::channels::channel_health(&channels);
    assert_eq!(
        (h.channels, h.active, h.pending_htlcs, h.force_closed),
        (2, 1, Some(3), 1)
    );
}

#[test]
fn refused_connections_mean_still_starting() {
    let connect = NodeError::Connect {
        node: "carol".into(),
        endpoint: "127.0.0.1:1".into(),
        source: "refused".into(),
    };
    assert!(is_starting_up(&connect));
    let unauthorized = NodeError::Rpc {
        node: "carol".into(),
        call: "getinfo",
        status: "HTTP 401: wrong password".into(),
    };
    assert!(!is_starting_up(&unauthorized));
    let dropped = NodeError::Rpc {
        node: "carol".into(),
        call: "getinfo",
        status: format!("{TRANSPORT}: error sending request: connection closed"),
    };
    assert!(
        is_starting_up(&dropped),
        "a proxy without a listener behind it"
    );
}
