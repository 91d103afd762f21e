//! Keysends carrying custom records beside the preimage: a podcast stream's splits
//! (`kind: stream`).

use super::{KEYSEND_RECORD, keysend_request};
use std::time::Duration;
use voltage_tonic_lnd::routerrpc;

/// A keysend request carrying `records` beside the preimage record (which they
/// cannot replace).
pub(super) fn records_request(
    dest: Vec<u8>,
    amount_msat: u64,
    preimage: [u8; 32],
    timeout: Duration,
    records: &[(u64, Vec<u8>)],
) -> routerrpc::SendPaymentRequest {
    let mut request = keysend_request(dest, amount_msat, preimage, timeout, None);
    for (kind, value) in records.iter().filter(|(k, _)| *k != KEYSEND_RECORD) {
        request.dest_custom_records.insert(*kind, value.clone());
    }
    request
}
