//! Core Lightning driver: gRPC through the `cln-grpc` crate's generated client, served
//! by CLN's gRPC plugin over mutual TLS.
//!
//! The plugin makes its own CA and signs a server and a client certificate with it
//! (`regtest/ca.pem`, `client.pem`, `client-key.pem`); the server certificate names
//! `cln` and `localhost`, so the client checks it against that CA under the name
//! `localhost` whatever address it dials (see [`crate::tls`]). Every gRPC call is one
//! JSON-RPC call to lightningd; payments go through `xkeysend` / `xpay` (askrene
//! routing), which answer once the payment succeeded or failed for good: `keysend` and
//! `pay` are deprecated since v26.06 (refused under `--developer` unless deprecated
//! APIs are allowed). `driver.rs` holds the rest of what the tool knows about CLN.

mod capabilities;
mod driver;
mod jsonrpc;
mod keysend;
mod readback;

pub use driver::{CLN, ClnCredentials, DEFAULT_VERSION};

use super::Credentials;
use super::deadline::{self, Deadline};
use super::driver::NodeEndpoint;
use super::{
    ChannelInfo, FailureReason, Implementation, Invoice, LightningNode, NodeError, NodeInfo,
    PaymentOutcome, WalletBalance,
};
use crate::tls;
use async_trait::async_trait;
use bitcoin::hex::DisplayHex;
use cln_grpc::pb::{self, node_client::NodeClient};
use rand::RngCore;
use std::sync::Arc;
use std::time::Duration;
use tonic::transport::{Channel, Endpoint};

/// Fee budget on top of a share of the amount: generous, so a benchmark never fails on
/// fees in a regtest network where the scenario sets the fee policy (as for LND).
const FEE_LIMIT_BASE_MSAT: u64 = 10_000_000;
/// Fee rate of channel funding transactions: 2 sat/vB, as LND's (regtest relays 1 and up).
const FUNDING_SAT_PER_KVB: u32 = 2_000;
/// How long past the payment timeout we wait for CLN's final answer before calling it
/// a timeout ourselves (an HTLC can stay in flight after CLN stops retrying).
const FINAL_ANSWER_GRACE: Duration = Duration::from_secs(30);
/// The name the plugin's server certificate carries.
pub(crate) const SERVER_NAME: &str = "localhost";

/// CLN's JSON-RPC error codes for payments (`common/jsonrpc_errors.h`).
mod code {
    pub const CATCH_ALL: i64 = -1;
    pub const DESTINATION_PERM_FAIL: i64 = 203;
    pub const ROUTE_NOT_FOUND: i64 = 205;
    pub const ROUTE_TOO_EXPENSIVE: i64 = 206;
    pub const INVOICE_EXPIRED: i64 = 207;
    pub const UNSPECIFIED_ERROR: i64 = 209;
    pub const STOPPED_RETRYING: i64 = 210;
    pub const KEYSEND_PREAPPROVAL_DECLINED: i64 = 214;
    pub const INSUFFICIENT_FUNDS: i64 = 215;
    pub const UNREACHABLE: i64 = 216;
}

/// One CLN node. Clones share the HTTP/2 connection.
#[derive(Clone)]
pub struct ClnNode {
    name: Arc<str>,
    client: NodeClient<Deadline<Channel>>,
    /// The command that pays invoices.
    engine: super::PaymentEngine,
    /// Its `--lightning-dir` on this machine (`renepay` goes through the JSON-RPC
    /// socket there).
    lightning_dir: Arc<std::path::Path>,
}

/// The calls with a deadline of their own (the payment's), left out of the per-call one.
const OWN_DEADLINE: &[&str] = &["/cln.Node/Xpay", "/cln.Node/Xkeysend", "/cln.Node/Pay"];

/// The mutual-TLS client config from CLN's credential files.
fn client_config(name: &str, c: &ClnCredentials) -> Result<rustls::ClientConfig, NodeError> {
    let unreadable = |what, path: &std::path::Path| {
        let path = path.to_path_buf();
        move |e: tls::TlsError| NodeError::Credentials {
            node: name.to_string(),
            what,
            path,
            source: match e {
                tls::TlsError::Read { source, .. } => source,
                other => std::io::Error::new(std::io::ErrorKind::InvalidData, other.to_string()),
            },
        }
    };
    let ca = tls::read_pem_cert(&c.ca_cert).map_err(unreadable("CA certificate", &c.ca_cert))?;
    let cert = tls::read_pem_cert(&c.client_cert)
        .map_err(unreadable("client certificate", &c.client_cert))?;
    let key = tls::read_pem_key(&c.client_key).map_err(unreadable("client key", &c.client_key))?;
    // A key that does not fit the certificate fails here.
    tls::mutual_grpc_client_config(ca, cert, key).map_err(unreadable("client key", &c.client_key))
}

impl ClnNode {
    /// Reads the CA, client certificate and key once and connects to the gRPC listener.
    /// The connection is made here, so an unreachable node fails now, not on first use.
    /// Every call but the payments has [`deadline::DEFAULT_CALL_DEADLINE`].
    pub async fn connect(name: &str, endpoint: &NodeEndpoint) -> Result<ClnNode, NodeError> {
        let Credentials::Cln(credentials) = &endpoint.credentials else {
            return Err(NodeError::Protocol {
                node: name.to_string(),
                call: "connect",
                detail: format!("not Core Lightning credentials: {:?}", endpoint.credentials),
            });
        };
        let config = client_config(name, credentials)?;
        let connect_err = |source: Box<dyn std::error::Error + Send + Sync>| NodeError::Connect {
            node: name.to_string(),
            endpoint: endpoint.rpc_addr.clone(),
            source,
        };
        let server_name = rustls::pki_types::ServerName::try_from(SERVER_NAME)
            .map_err(|e| connect_err(Box::new(e)))?;
        let channel = Endpoint::from_shared(format!("http://{}", endpoint.rpc_addr))
            .map_err(|e| connect_err(Box::new(e)))?
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true);
        let channel = deadline::keep_alive(channel)
            .connect_with_connector(tls::RustlsConnector::new(config).with_server_name(server_name))
            .await
            .map_err(|e| connect_err(Box::new(e)))?;
        Ok(ClnNode {
            name: Arc::from(name),
            client: NodeClient::new(Deadline::new(
                channel,
                deadline::DEFAULT_CALL_DEADLINE,
                OWN_DEADLINE,
            )),
            engine: endpoint.payment_engine,
            lightning_dir: Arc::from(endpoint.data_dir.as_path()),
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

    /// Waits for a payment call's answer: its outcome, a failure CLN reported for the
    /// payment, or a timeout of our own when CLN has not answered well after `timeout`.
    async fn settle<T>(
        &self,
        call: &'static str,
        payment: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
        timeout: Duration,
        succeeded: impl FnOnce(T) -> PaymentOutcome,
    ) -> Result<PaymentOutcome, NodeError> {
        match tokio::time::timeout(timeout + FINAL_ANSWER_GRACE, payment).await {
            Err(_) => Ok(PaymentOutcome::Failed {
                reason: FailureReason::Timeout,
            }),
            Ok(Ok(answer)) => Ok(succeeded(answer.into_inner())),
            Ok(Err(status)) => match payment_failure(&status) {
                Some(reason) => Ok(PaymentOutcome::Failed { reason }),
                None => Err(self.rpc(call)(status)),
            },
        }
    }
}

/// The JSON-RPC error code in a status the gRPC plugin made of lightningd's error
/// (`Error calling method Xpay: RpcError { code: Some(205), message: "...", .. }`).
fn rpc_error_code(message: &str) -> Option<i64> {
    let rest = &message[message.find("code: Some(")? + "code: Some(".len()..];
    rest[..rest.find(')')?].trim().parse().ok()
}

/// The failure reason when `status` is lightningd's answer that a payment failed; None
/// for errors that are not about the payment (transport, bad request, node stopping).
fn payment_failure(status: &tonic::Status) -> Option<FailureReason> {
    if status.code() != tonic::Code::Unknown {
        return None;
    }
    let message = status.message();
    failure_of_code(rpc_error_code(message)?, message)
}

/// The failure reason of lightningd's error `code` with `message` for a payment; None
/// for codes that are not about the payment.
fn failure_of_code(code: i64, message: &str) -> Option<FailureReason> {
    let reason = match code {
        code::DESTINATION_PERM_FAIL => FailureReason::IncorrectPaymentDetails,
        code::ROUTE_NOT_FOUND | code::UNREACHABLE
            if message.contains("Total source capacity is only") =>
        {
            FailureReason::InsufficientBalance
        }
        code::ROUTE_NOT_FOUND | code::UNREACHABLE => FailureReason::NoRoute,
        code::INSUFFICIENT_FUNDS => FailureReason::InsufficientBalance,
        code::STOPPED_RETRYING => FailureReason::Timeout,
        code::UNSPECIFIED_ERROR if message.contains("Timed out") => FailureReason::Timeout,
        // Retries used up: the last routing attempt found nothing.
        code::UNSPECIFIED_ERROR if message.contains("routing failed") => FailureReason::NoRoute,
        code::KEYSEND_PREAPPROVAL_DECLINED => FailureReason::Canceled,
        code::ROUTE_TOO_EXPENSIVE | code::INVOICE_EXPIRED | code::UNSPECIFIED_ERROR => {
            FailureReason::Error
        }
        // The catch-all and the other payment codes (200-299). JSON-RPC's own codes
        // (a malformed request) are errors of the tool, not of the payment.
        code::CATCH_ALL | 200..=299 => FailureReason::Error,
        _ => return None,
    };
    Some(reason)
}

/// True for the errors CLN's gRPC plugin gives while the node is still starting: the
/// port accepts before the plugin serves, and the plugin answers before lightningd's
/// JSON-RPC socket does. Callers retry on this.
fn is_starting_up(err: &NodeError) -> bool {
    match err {
        NodeError::Connect { .. } => true,
        NodeError::Rpc { status, .. } => {
            status.starts_with("Unavailable")
                || status.contains("Connection refused")
                || status.contains("No such file or directory")
        }
        _ => false,
    }
}

/// CLN takes the retry budget in whole seconds, at least one.
fn retry_for(timeout: Duration) -> Option<u32> {
    Some(u32::try_from(timeout.as_secs().max(1)).unwrap_or(u32::MAX))
}

fn msat(amount: u64) -> Option<pb::Amount> {
    Some(pb::Amount { msat: amount })
}

fn sat_of(amount: Option<&pb::Amount>) -> u64 {
    amount.map_or(0, |a| a.msat / 1000)
}

/// What a successful `xkeysend` / `xpay` cost: the sent amount above the delivered one.
/// Neither says how many hops the route had: 0 stands for "not told".
fn succeeded(amount: Option<pb::Amount>, sent: Option<pb::Amount>) -> PaymentOutcome {
    let (amount, sent) = (amount.map_or(0, |a| a.msat), sent.map_or(0, |a| a.msat));
    PaymentOutcome::Succeeded {
        fee_msat: sent.saturating_sub(amount),
        hops: 0,
    }
}

/// A label no other invoice of the node has (labels are unique per node, across
/// restarts too).
fn invoice_label() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    format!("lnbench-{}", bytes.to_lower_hex_string())
}

/// `host` and port of `host:port` (an IPv6 host in brackets keeps its colons).
fn split_host_port(addr: &str) -> Option<(&str, u32)> {
    let (host, port) = addr.rsplit_once(':')?;
    Some((
        host.trim_start_matches('[').trim_end_matches(']'),
        port.parse().ok()?,
    ))
}

/// One channel of `listpeerchannels` in our terms: usable once in CHANNELD_NORMAL with
/// its peer connected.
fn channel_info(c: &pb::ListpeerchannelsChannels) -> ChannelInfo {
    let point = match (&c.funding_txid, c.funding_outnum) {
        // The plugin gives txids in the order they are shown.
        (Some(txid), Some(n)) => format!("{}:{n}", txid.to_lower_hex_string()),
        _ => String::new(),
    };
    ChannelInfo {
        remote_pubkey: c.peer_id.to_lower_hex_string(),
        channel_point: point,
        capacity_sat: sat_of(c.total_msat.as_ref()),
        local_balance_sat: sat_of(c.to_us_msat.as_ref()),
        active: c.state() == pb::ChannelState::ChanneldNormal && c.peer_connected,
    }
}

/// Synced when getinfo warns neither that bitcoind is still syncing nor that
/// lightningd has not caught up with it; active channels as [`channel_info`] has them
/// (normal, peer connected).
fn node_info(info: pb::GetinfoResponse, channels: &[pb::ListpeerchannelsChannels]) -> NodeInfo {
    let active = channels.iter().filter(|c| channel_info(c).active).count();
    NodeInfo {
        synced_to_chain: info.warning_bitcoind_sync.is_none()
            && info.warning_lightningd_sync.is_none(),
        pubkey: info.id.to_lower_hex_string(),
        alias: info.alias,
        version: info.version,
        block_height: info.blockheight,
        num_active_channels: u32::try_from(active).unwrap_or(u32::MAX),
    }
}

/// Confirmed and unconfirmed on-chain outputs; spent and immature ones are not funds.
fn wallet_balance(outputs: &[pb::ListfundsOutputs]) -> WalletBalance {
    use pb::listfunds_outputs::ListfundsOutputsStatus as Status;
    let mut balance = WalletBalance::default();
    for o in outputs {
        let sat = sat_of(o.amount_msat.as_ref());
        match o.status() {
            Status::Confirmed => balance.confirmed_sat += sat,
            Status::Unconfirmed => balance.unconfirmed_sat += sat,
            Status::Spent | Status::Immature => {}
        }
    }
    balance
}

#[async_trait]
impl LightningNode for ClnNode {
    fn name(&self) -> &str {
        &self.name
    }

    fn implementation(&self) -> Implementation {
        Implementation::Cln
    }

    /// `xpay` (or `pay`, `renepay`) and `xkeysend` answer when the payment ended.
    fn completion(&self) -> super::Completion {
        let source = match self.engine {
            super::PaymentEngine::Xpay => "xpay / xkeysend",
            super::PaymentEngine::Pay => "pay / xkeysend",
            super::PaymentEngine::Renepay => "renepay / xkeysend",
        };
        super::Completion::exact(super::completion::Method::ReturnsAtEnd, source)
    }

    async fn get_info(&self) -> Result<NodeInfo, NodeError> {
        let info = self
            .client
            .clone()
            .getinfo(pb::GetinfoRequest {})
            .await
            .map_err(self.rpc("Getinfo"))?
            .into_inner();
        // getinfo counts channels in CHANNELD_NORMAL, connected or not: a node just
        // started again has them all before any peer is back.
        let channels = (self.client.clone())
            .list_peer_channels(pb::ListpeerchannelsRequest::default())
            .await
            .map_err(self.rpc("ListPeerChannels"))?
            .into_inner()
            .channels;
        Ok(node_info(info, &channels))
    }

    async fn new_address(&self) -> Result<String, NodeError> {
        const CALL: &str = "NewAddr";
        let request = pb::NewaddrRequest {
            addresstype: Some(pb::newaddr_request::NewaddrAddresstype::Bech32 as i32),
        };
        let address = self
            .client
            .clone()
            .new_addr(request)
            .await
            .map_err(self.rpc(CALL))?
            .into_inner();
        // Asked for, a segwit v0 address comes back; a taproot one would do as well.
        address
            .bech32
            .or(address.p2tr)
            .ok_or_else(|| self.protocol(CALL, "no address"))
    }

    async fn wallet_balance(&self) -> Result<WalletBalance, NodeError> {
        let funds = self
            .client
            .clone()
            .list_funds(pb::ListfundsRequest::default())
            .await
            .map_err(self.rpc("ListFunds"))?
            .into_inner();
        Ok(wallet_balance(&funds.outputs))
    }

    async fn connect_peer(&self, pubkey: &str, host: &str) -> Result<(), NodeError> {
        const CALL: &str = "ConnectPeer";
        let (h, port) = split_host_port(host)
            .ok_or_else(|| self.protocol(CALL, format!("not host:port: {host:?}")))?;
        let request = pb::ConnectRequest {
            id: pubkey.to_string(),
            host: Some(h.to_string()),
            port: Some(port),
        };
        // CLN answers an already connected peer with success.
        self.client
            .clone()
            .connect_peer(request)
            .await
            .map_err(self.rpc(CALL))?;
        Ok(())
    }

    async fn open_channel(&self, pubkey: &str, capacity_sat: u64) -> Result<String, NodeError> {
        const CALL: &str = "FundChannel";
        let request = pb::FundchannelRequest {
            id: self.pubkey_bytes(CALL, pubkey)?,
            amount: Some(pb::AmountOrAll {
                value: Some(pb::amount_or_all::Value::Amount(pb::Amount {
                    msat: capacity_sat.saturating_mul(1000),
                })),
            }),
            feerate: Some(pb::Feerate {
                style: Some(pb::feerate::Style::Perkb(FUNDING_SAT_PER_KVB)),
            }),
            // Spending unconfirmed change lets one funded output pay for several
            // channels opened one after another; all confirm in the same block.
            minconf: Some(0),
            ..Default::default()
        };
        let funded = self
            .client
            .clone()
            .fund_channel(request)
            .await
            .map_err(self.rpc(CALL))?
            .into_inner();
        if funded.txid.len() != 32 {
            return Err(self.protocol(CALL, format!("txid of {} bytes", funded.txid.len())));
        }
        Ok(format!(
            "{}:{}",
            funded.txid.to_lower_hex_string(),
            funded.outnum
        ))
    }

    async fn list_channels(&self) -> Result<Vec<ChannelInfo>, NodeError> {
        let channels = self
            .client
            .clone()
            .list_peer_channels(pb::ListpeerchannelsRequest::default())
            .await
            .map_err(self.rpc("ListPeerChannels"))?
            .into_inner()
            .channels;
        Ok(channels.iter().map(channel_info).collect())
    }

    async fn create_invoice(&self, amount_msat: u64) -> Result<Invoice, NodeError> {
        const CALL: &str = "Invoice";
        let request = pb::InvoiceRequest {
            amount_msat: Some(pb::AmountOrAny {
                value: Some(pb::amount_or_any::Value::Amount(pb::Amount {
                    msat: amount_msat,
                })),
            }),
            label: invoice_label(),
            description: "lnbench".into(),
            ..Default::default()
        };
        let added = self
            .client
            .clone()
            .invoice(request)
            .await
            .map_err(self.rpc(CALL))?
            .into_inner();
        let payment_hash = <[u8; 32]>::try_from(added.payment_hash.as_slice()).map_err(|_| {
            self.protocol(
                CALL,
                format!("payment_hash of {} bytes", added.payment_hash.len()),
            )
        })?;
        Ok(Invoice {
            bolt11: added.bolt11,
            payment_hash,
        })
    }

    async fn keysend_capped(
        &self,
        dest: &str,
        amount_msat: u64,
        _preimage: [u8; 32],
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        let extratlvs = Default::default();
        self.xkeysend(dest, amount_msat, timeout, max_fee_msat, extratlvs)
            .await
    }

    /// Through the node's payment engine: `xpay`, `pay` or `renepay`, each with the
    /// same fee budget and retry time.
    // `pay` is deprecated in the gRPC interface (its fields say so).
    #[allow(deprecated)]
    async fn pay_invoice_capped(
        &self,
        bolt11: &str,
        timeout: Duration,
        max_fee_msat: Option<u64>,
    ) -> Result<PaymentOutcome, NodeError> {
        let maxfee = msat(super::fee_limit_msat(FEE_LIMIT_BASE_MSAT, max_fee_msat));
        let mut client = self.client.clone();
        match self.engine {
            super::PaymentEngine::Xpay => {
                let request = pb::XpayRequest {
                    invstring: bolt11.to_string(),
                    maxfee,
                    retry_for: retry_for(timeout),
                    ..Default::default()
                };
                self.settle("Xpay", client.xpay(request), timeout, |r| {
                    succeeded(r.amount_msat, r.amount_sent_msat)
                })
                .await
            }
            super::PaymentEngine::Pay => {
                let request = pb::PayRequest {
                    bolt11: bolt11.to_string(),
                    maxfee,
                    retry_for: retry_for(timeout),
                    ..Default::default()
                };
                self.settle("Pay", client.pay(request), timeout, |r| {
                    succeeded(r.amount_msat, r.amount_sent_msat)
                })
                .await
            }
            // CLN's gRPC interface has no renepay call: its JSON-RPC socket does.
            super::PaymentEngine::Renepay => {
                let maxfee = maxfee.map_or(0, |a| a.msat);
                jsonrpc::renepay(&self.name, &self.lightning_dir, bolt11, maxfee, timeout).await
            }
        }
    }

    fn custom_records(&self) -> Option<&dyn super::CustomRecords> {
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
