//! LND driver: gRPC through voltage-tonic-lnd's generated clients.
//!
//! The TLS handshake is done by our own connector with LND's certificate pinned (see
//! [`crate::tls`]), so the endpoint is given to tonic as `http://127.0.0.1:port`.
//! Payments go through routerrpc `SendPaymentV2`, the only payment RPC LND 0.21 has.
//! `driver.rs` holds the rest of what the tool knows about LND.

mod capabilities;
mod driver;
#[doc(hidden)]
pub mod fake_grpc;
mod hold;
mod migrations;
mod outcome;
mod readback;
mod rebalance;
mod records;

pub use driver::{DEFAULT_VERSION, LND, LndCredentials};

use super::Credentials;
use super::deadline::{self, Deadline};
use super::driver::NodeEndpoint;
use super::parts::{Parts, Split};
use super::{
    ChannelInfo, FailureReason, Implementation, Invoice, LightningNode, NodeError, NodeInfo,
    PaymentOutcome, WalletBalance,
};
use crate::tls;
use async_trait::async_trait;
use bitcoin::hashes::{Hash, sha256};
use bitcoin::hex::DisplayHex;
pub use outcome::failure_reason;
use outcome::{final_outcome, parts_of};
use records::records_request;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use voltage_tonic_lnd::invoicesrpc::invoices_client::InvoicesClient;
use voltage_tonic_lnd::lnrpc::{self, lightning_client::LightningClient};
use voltage_tonic_lnd::routerrpc::{self, router_client::RouterClient};

/// The TLV record type that carries a keysend preimage.
const KEYSEND_RECORD: u64 = 5_482_373_484;
/// Fee budget on top of a share of the amount: generous, so a benchmark never fails on
/// fees in a regtest network where the scenario sets the fee policy.
const FEE_LIMIT_BASE_MSAT: i64 = 10_000_000;
/// Fee rate for channel funding transactions (regtest relays 1 sat/vB and up).
const FUNDING_SAT_PER_VBYTE: u64 = 2;
/// How long past the payment timeout we wait for LND's final answer before calling it
/// a timeout ourselves (an HTLC can stay in flight after LND's own timeout).
const FINAL_ANSWER_GRACE: Duration = Duration::from_secs(30);

/// Adds the hex macaroon to every call. The value is parsed once; cloning is cheap.
#[derive(Clone)]
pub struct MacaroonInterceptor {
    macaroon: AsciiMetadataValue,
}

impl tonic::service::Interceptor for MacaroonInterceptor {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request
            .metadata_mut()
            .insert("macaroon", self.macaroon.clone());
        Ok(request)
    }
}

type Service = InterceptedService<Deadline<Channel>, MacaroonInterceptor>;

/// The calls with a deadline of their own (the payment's), left out of the per-call one.
const OWN_DEADLINE: &[&str] = &["/routerrpc.Router/SendPaymentV2"];

/// One LND node. Clones share the HTTP/2 connection.
#[derive(Clone)]
pub struct LndNode {
    name: Arc<str>,
    lightning: LightningClient<Service>,
    router: RouterClient<Service>,
    invoices: InvoicesClient<Service>,
}

impl LndNode {
    /// Reads `tls.cert` and `admin.macaroon` once and connects to the gRPC listener.
    /// The connection is made here, so an unreachable node fails now, not on first use.
    pub async fn connect(name: &str, endpoint: &NodeEndpoint) -> Result<LndNode, NodeError> {
        Self::connect_with_deadline(name, endpoint, deadline::DEFAULT_CALL_DEADLINE).await
    }

    /// As [`LndNode::connect`], with `call_deadline` on every call but the payments.
    pub async fn connect_with_deadline(
        name: &str,
        endpoint: &NodeEndpoint,
        call_deadline: Duration,
    ) -> Result<LndNode, NodeError> {
        let credentials = |what, path: &std::path::Path, source| NodeError::Credentials {
            node: name.to_string(),
            what,
            path: path.to_path_buf(),
            source,
        };
        let Credentials::Lnd(LndCredentials { tls_cert, macaroon }) = &endpoint.credentials else {
            return Err(NodeError::Protocol {
                node: name.to_string(),
                call: "connect",
                detail: format!("not LND credentials: {:?}", endpoint.credentials),
            });
        };
        let cert = tls::read_pem_cert(tls_cert).map_err(|e| {
            let io = match e {
                tls::TlsError::Read { source, .. } => source,
                other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
            };
            credentials("TLS certificate", tls_cert, io)
        })?;
        let macaroon = crate::files::read_bytes(macaroon, crate::files::SMALL_MAX_BYTES)
            .map_err(|e| credentials("macaroon", macaroon, e))?;
        let connect_err = |source: Box<dyn std::error::Error + Send + Sync>| NodeError::Connect {
            node: name.to_string(),
            endpoint: endpoint.rpc_addr.clone(),
            source,
        };
        let macaroon_hex = macaroon.to_lower_hex_string();
        // The hex is what an HTTP dump or a log line would show.
        crate::secrets::register_secret(&macaroon_hex);
        let macaroon: AsciiMetadataValue =
            MetadataValue::try_from(macaroon_hex).map_err(|e| connect_err(Box::new(e)))?;
        let config = tls::grpc_client_config(cert).map_err(|e| connect_err(Box::new(e)))?;
        let channel = Endpoint::from_shared(format!("http://{}", endpoint.rpc_addr))
            .map_err(|e| connect_err(Box::new(e)))?
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true);
        let channel = deadline::keep_alive(channel)
            .connect_with_connector(tls::RustlsConnector::new(config))
            .await
            .map_err(|e| connect_err(Box::new(e)))?;
        let channel = Deadline::new(channel, call_deadline, OWN_DEADLINE);
        let interceptor = MacaroonInterceptor { macaroon };
        Ok(LndNode {
            name: Arc::from(name),
            lightning: LightningClient::with_interceptor(channel.clone(), interceptor.clone()),
            router: RouterClient::with_interceptor(channel.clone(), interceptor.clone()),
            invoices: InvoicesClient::with_interceptor(channel, interceptor),
        })
    }

    fn rpc(&self, call: &'static str) -> impl Fn(tonic::Status) -> NodeError + '_ {
        move |status| NodeError::grpc(&self.name, call, &status)
    }

    fn protocol(&self, call: &'static str, detail: impl Into<String>) -> NodeError {
        NodeError::protocol(&self.name, call, detail)
    }

    fn pubkey_bytes(&self, call: &'static str, pubkey: &str) -> Result<Vec<u8>, NodeError> {
        super::pubkey_bytes(&self.name, call, pubkey)
    }

    /// Sends a payment and reads the status stream until a final state.
    async fn send_payment(
        &self,
        request: routerrpc::SendPaymentRequest,
        timeout: Duration,
    ) -> Result<PaymentOutcome, NodeError> {
        Ok(self.send_payment_split(request, timeout).await?.outcome)
    }

    /// [`LndNode::send_payment`], with the HTLCs of the final status counted.
    async fn send_payment_split(
        &self,
        request: routerrpc::SendPaymentRequest,
        timeout: Duration,
    ) -> Result<Split, NodeError> {
        const CALL: &str = "SendPaymentV2";
        let mut router = self.router.clone();
        let wait = async {
            let mut stream = router
                .send_payment_v2(request)
                .await
                .map_err(self.rpc(CALL))?
                .into_inner();
            while let Some(payment) = stream.message().await.map_err(self.rpc(CALL))? {
                if let Some(outcome) = final_outcome(&payment) {
                    return Ok(Split {
                        outcome,
                        parts: Some(parts_of(&payment)),
                    });
                }
            }
            Err(self.protocol(CALL, "payment stream ended without a final status"))
        };
        match tokio::time::timeout(timeout + FINAL_ANSWER_GRACE, wait).await {
            Ok(result) => result,
            Err(_) => Ok(Split {
                outcome: PaymentOutcome::Failed {
                    reason: FailureReason::Timeout,
                },
                parts: None,
            }),
        }
    }
}

/// True when LND answered that its RPC server is not ready yet (it is still syncing
/// to the chain or unlocking its wallet). Callers retry on this.
fn is_starting_up(err: &NodeError) -> bool {
    match err {
        NodeError::Rpc { status, .. } => {
            // "... in the process of starting up" (RPC), "server is still in the
            // process of starting" (peer server, LND 0.20).
            status.contains("in the process of starting")
                || status.contains("waiting to start")
                || status.contains("wallet locked")
                || status.contains("not yet ready")
        }
        // The port may accept TCP before the gRPC server serves.
        NodeError::Connect { .. } => true,
        _ => false,
    }
}

/// LND takes the timeout in whole seconds, at least one.
fn timeout_seconds(timeout: Duration) -> i32 {
    i32::try_from(timeout.as_secs().max(1)).unwrap_or(i32::MAX)
}

/// A keysend request carrying `preimage`, paying at most `max_fee_msat` in fees when
/// given (below the default limit).
fn keysend_request(
    dest: Vec<u8>,
    amount_msat: u64,
    preimage: [u8; 32],
    timeout: Duration,
    max_fee_msat: Option<u64>,
) -> routerrpc::SendPaymentRequest {
    let payment_hash = sha256::Hash::hash(&preimage).to_byte_array();
    let amt_msat = i64::try_from(amount_msat).unwrap_or(i64::MAX);
    routerrpc::SendPaymentRequest {
        dest,
        amt_msat,
        payment_hash: payment_hash.to_vec(),
        dest_custom_records: HashMap::from([(KEYSEND_RECORD, preimage.to_vec())]),
        timeout_seconds: timeout_seconds(timeout),
        fee_limit_msat: fee_limit(amt_msat / 10 + FEE_LIMIT_BASE_MSAT, max_fee_msat),
        // Keysend has no payment address, so it cannot be split.
        max_parts: 1,
        no_inflight_updates: true,
        ..Default::default()
    }
}

/// LND's `fee_limit_msat` (an i64): the default, lowered to the caps' limit if given.
fn fee_limit(default_msat: i64, max_fee_msat: Option<u64>) -> i64 {
    let default_msat = u64::try_from(default_msat).unwrap_or(0);
    let limit = crate::node::fee_limit_msat(default_msat, max_fee_msat);
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// `txid:index` of a channel point; LND's txid bytes are in internal (reversed) order.
fn channel_point_string(point: &lnrpc::ChannelPoint) -> Option<String> {
    use lnrpc::channel_point::FundingTxid;
    let txid = match point.funding_txid.as_ref()? {
        FundingTxid::FundingTxidBytes(bytes) => {
            let array: [u8; 32] = bytes.as_slice().try_into().ok()?;
            bitcoin::Txid::from_byte_array(array).to_string()
        }
        FundingTxid::FundingTxidStr(s) => s.clone(),
    };
    Some(format!("{txid}:{}", point.output_index))
}

fn sat(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

#[async_trait]
impl LightningNode for LndNode {
    fn name(&self) -> &str {
        &self.name
    }

    fn implementation(&self) -> Implementation {
        Implementation::Lnd
    }

    /// `SendPaymentV2` streams the payment's updates; the final one ends it.
    fn completion(&self) -> super::Completion {
        super::Completion::exact(super::completion::Method::Stream, "SendPaymentV2")
    }

    async fn get_info(&self) -> Result<NodeInfo, NodeError> {
        let info = self
            .lightning
            .clone()
            .get_info(lnrpc::GetInfoRequest {})
            .await
            .map_err(self.rpc("GetInfo"))?
            .into_inner();
        Ok(NodeInfo {
            pubkey: info.identity_pubkey,
            alias: info.alias,
            version: info.version,
            block_height: info.block_height,
            synced_to_chain: info.synced_to_chain,
            num_active_channels: info.num_active_channels,
        })
    }

    async fn new_address(&self) -> Result<String, NodeError> {
        let request = lnrpc::NewAddressRequest {
            r#type: lnrpc::AddressType::WitnessPubkeyHash as i32,
            ..Default::default()
        };
        Ok(self
            .lightning
            .clone()
            .new_address(request)
            .await
            .map_err(self.rpc("NewAddress"))?
            .into_inner()
            .address)
    }

    async fn wallet_balance(&self) -> Result<WalletBalance, NodeError> {
        let balance = self
            .lightning
            .clone()
            .wallet_balance(lnrpc::WalletBalanceRequest::default())
            .await
            .map_err(self.rpc("WalletBalance"))?
            .into_inner();
        Ok(WalletBalance {
            confirmed_sat: sat(balance.confirmed_balance),
            unconfirmed_sat: sat(balance.unconfirmed_balance),
        })
    }

    async fn connect_peer(&self, pubkey: &str, host: &str) -> Result<(), NodeError> {
        let request = lnrpc::ConnectPeerRequest {
            addr: Some(lnrpc::LightningAddress {
                pubkey: pubkey.to_string(),
                host: host.to_string(),
            }),
            perm: false,
            timeout: 30,
        };
        match self.lightning.clone().connect_peer(request).await {
            Ok(_) => Ok(()),
            Err(status) if status.message().contains("already connected") => Ok(()),
            Err(status) => Err(self.rpc("ConnectPeer")(status)),
        }
    }

    async fn open_channel(&self, pubkey: &str, capacity_sat: u64) -> Result<String, NodeError> {
        const CALL: &str = "OpenChannelSync";
        let request = lnrpc::OpenChannelRequest {
            node_pubkey: self.pubkey_bytes(CALL, pubkey)?,
            local_funding_amount: i64::try_from(capacity_sat).unwrap_or(i64::MAX),
            sat_per_vbyte: FUNDING_SAT_PER_VBYTE,
            // Spending unconfirmed change lets one funded output pay for several
            // channels opened one after another; all confirm in the same block.
            min_confs: 0,
            spend_unconfirmed: true,
            ..Default::default()
        };
        let point = self
            .lightning
            .clone()
            .open_channel_sync(request)
            .await
            .map_err(self.rpc(CALL))?
            .into_inner();
        channel_point_string(&point)
            .ok_or_else(|| self.protocol(CALL, "channel point without txid"))
    }

    async fn list_channels(&self) -> Result<Vec<ChannelInfo>, NodeError> {
        let channels = self
            .lightning
            .clone()
            .list_channels(lnrpc::ListChannelsRequest::default())
            .await
            .map_err(self.rpc("ListChannels"))?
            .into_inner()
            .channels;
        Ok(channels
            .into_iter()
            .map(|c| ChannelInfo {
                remote_pubkey: c.remote_pubkey,
                channel_point: c.channel_point,
                capacity_sat: sat(c.capacity),
                local_balance_sat: sat(c.local_balance),
                active: c.active,
            })
            .collect())
    }

    async fn create_invoice(&self, amount_msat: u64) -> Result<Invoice, NodeError> {
        const CALL: &str = "AddInvoice";
        let request = lnrpc::Invoice {
            value_msat: i64::try_from(amount_msat).unwrap_or(i64::MAX),
            ..Default::default()
        };
        let added = self
            .lightning
            .clone()
            .add_invoice(request)
            .await
            .map_err(self.rpc(CALL))?
            .into_inner();
        let payment_hash = <[u8; 32]>::try_from(added.r_hash.as_slice())
            .map_err(|_| self.protocol(CALL, format!("r_hash of {} bytes", added.r_hash.len())))?;
        Ok(Invoice {
            bolt11: added.payment_request,
            payment_hash,
        })
    }

    fn keysend_takes_preimage(&self) -> bool {
        true
    }

    async fn keysend_capped(
        &self,
        dest: &str,
        amount_msat: u64,
        preimage: [u8; 32],
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        let dest = self.pubkey_bytes("SendPaymentV2", dest)?;
        let request = keysend_request(dest, amount_msat, preimage, timeout, max_fee_msat);
        self.send_payment(request, timeout).await
    }

    async fn pay_invoice_capped(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        let request = routerrpc::SendPaymentRequest {
            payment_request: bolt11.to_string(),
            timeout_seconds: timeout_seconds(timeout),
            fee_limit_msat: fee_limit(FEE_LIMIT_BASE_MSAT, max_fee_msat),
            no_inflight_updates: true,
            ..Default::default()
        };
        self.send_payment(request, timeout).await
    }

    fn hold_invoices(&self) -> Option<&dyn super::HoldInvoices> {
        Some(self)
    }

    fn circular_payments(&self) -> Option<&dyn super::CircularPayments> {
        Some(self)
    }

    fn custom_records(&self) -> Option<&dyn super::CustomRecords> {
        Some(self)
    }

    fn record_counts(&self) -> Option<&dyn super::RecordCounts> {
        Some(self)
    }

    fn part_limit(&self) -> Option<&dyn super::PartLimit> {
        Some(self)
    }

    fn own_ledger(&self) -> Option<&dyn super::Ledger> {
        Some(self)
    }

    fn health_check(&self) -> Option<&dyn super::HealthCheck> {
        Some(self)
    }

    fn network_name(&self) -> Option<&dyn super::NetworkName> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
