//! Our own definitions of the ldk-server messages the tool uses (ldk-server's
//! `ldk-server-protos` at commit ee1c96c: `api.proto`, `types.proto`, `error.proto`),
//! written by hand with prost's derive: only the calls and fields we read or set, with
//! their field numbers. Fields we leave out are skipped on decoding, as protobuf
//! allows. The end-to-end tests check them against the real server.

/// `api.GetNodeInfoRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetNodeInfoRequest {}

/// `api.GetNodeInfoResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetNodeInfoResponse {
    #[prost(string, tag = "1")]
    pub node_id: String,
    #[prost(message, optional, tag = "3")]
    pub current_best_block: Option<BestBlock>,
    #[prost(uint64, optional, tag = "4")]
    pub latest_lightning_wallet_sync_timestamp: Option<u64>,
    #[prost(uint64, optional, tag = "5")]
    pub latest_onchain_wallet_sync_timestamp: Option<u64>,
}

/// `types.BestBlock`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BestBlock {
    #[prost(string, tag = "1")]
    pub block_hash: String,
    #[prost(uint32, tag = "2")]
    pub height: u32,
}

/// `api.OnchainReceiveRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OnchainReceiveRequest {}

/// `api.OnchainReceiveResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OnchainReceiveResponse {
    #[prost(string, tag = "1")]
    pub address: String,
}

/// `api.GetBalancesRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBalancesRequest {}

/// `api.GetBalancesResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBalancesResponse {
    #[prost(uint64, tag = "1")]
    pub total_onchain_balance_sats: u64,
    #[prost(uint64, tag = "2")]
    pub spendable_onchain_balance_sats: u64,
    #[prost(message, repeated, tag = "5")]
    pub lightning_balances: Vec<LightningBalance>,
}

/// `types.LightningBalance`: one of six kinds, each naming its channel first (field
/// 1); only the channel and whether it is still open are read.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LightningBalance {
    #[prost(oneof = "Balance", tags = "1, 2, 3, 4, 5, 6")]
    pub balance_type: Option<Balance>,
}

/// The kinds of [`LightningBalance`]: `ClaimableOnChannelClose` (field 1) until a
/// channel's closing transaction confirms; the others are funds of a closed channel on
/// their way back.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Balance {
    #[prost(message, tag = "1")]
    ClaimableOnChannelClose(BalanceChannel),
    #[prost(message, tag = "2")]
    ClaimableAwaitingConfirmations(BalanceChannel),
    #[prost(message, tag = "3")]
    ContentiousClaimable(BalanceChannel),
    #[prost(message, tag = "4")]
    MaybeTimeoutClaimableHtlc(BalanceChannel),
    #[prost(message, tag = "5")]
    MaybePreimageClaimableHtlc(BalanceChannel),
    #[prost(message, tag = "6")]
    CounterpartyRevokedOutputClaimable(BalanceChannel),
}

/// The channel a balance belongs to (field 1 of each kind).
#[derive(Clone, PartialEq, prost::Message)]
pub struct BalanceChannel {
    #[prost(string, tag = "1")]
    pub channel_id: String,
}

/// `api.OpenChannelRequest`: ldk-server connects to the peer at `address` itself.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpenChannelRequest {
    #[prost(string, tag = "1")]
    pub node_pubkey: String,
    #[prost(string, tag = "2")]
    pub address: String,
    #[prost(uint64, tag = "3")]
    pub channel_amount_sats: u64,
    #[prost(bool, tag = "6")]
    pub announce_channel: bool,
}

/// `api.OpenChannelResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpenChannelResponse {
    #[prost(string, tag = "1")]
    pub user_channel_id: String,
}

/// `api.ListChannelsRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListChannelsRequest {}

/// `api.ListChannelsResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListChannelsResponse {
    #[prost(message, repeated, tag = "1")]
    pub channels: Vec<Channel>,
}

/// `types.Channel`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Channel {
    #[prost(string, tag = "1")]
    pub channel_id: String,
    #[prost(string, tag = "2")]
    pub counterparty_node_id: String,
    #[prost(message, optional, tag = "3")]
    pub funding_txo: Option<OutPoint>,
    #[prost(string, tag = "4")]
    pub user_channel_id: String,
    #[prost(uint64, tag = "6")]
    pub channel_value_sats: u64,
    #[prost(uint64, tag = "8")]
    pub outbound_capacity_msat: u64,
    #[prost(bool, tag = "13")]
    pub is_channel_ready: bool,
    #[prost(bool, tag = "14")]
    pub is_usable: bool,
}

/// `types.OutPoint`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OutPoint {
    #[prost(string, tag = "1")]
    pub txid: String,
    #[prost(uint32, tag = "2")]
    pub vout: u32,
}

/// `api.Bolt11ReceiveRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Bolt11ReceiveRequest {
    #[prost(uint64, optional, tag = "1")]
    pub amount_msat: Option<u64>,
    #[prost(message, optional, tag = "2")]
    pub description: Option<Bolt11InvoiceDescription>,
    #[prost(uint32, tag = "3")]
    pub expiry_secs: u32,
}

/// `types.Bolt11InvoiceDescription` with its `direct` case (field 1 of the oneof);
/// the other case, a description hash, is field 2.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Bolt11InvoiceDescription {
    #[prost(string, optional, tag = "1")]
    pub direct: Option<String>,
}

/// `api.Bolt11ReceiveResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Bolt11ReceiveResponse {
    #[prost(string, tag = "1")]
    pub invoice: String,
}

/// `api.Bolt11SendRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Bolt11SendRequest {
    #[prost(string, tag = "1")]
    pub invoice: String,
    #[prost(message, optional, tag = "3")]
    pub route_parameters: Option<RouteParametersConfig>,
}

/// `types.RouteParametersConfig`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RouteParametersConfig {
    #[prost(uint64, optional, tag = "1")]
    pub max_total_routing_fee_msat: Option<u64>,
    #[prost(uint32, tag = "2")]
    pub max_total_cltv_expiry_delta: u32,
    #[prost(uint32, tag = "3")]
    pub max_path_count: u32,
    #[prost(uint32, tag = "4")]
    pub max_channel_saturation_power_of_half: u32,
}

/// `api.Bolt11SendResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Bolt11SendResponse {
    #[prost(string, tag = "1")]
    pub payment_id: String,
}

/// `api.GetPaymentDetailsRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetPaymentDetailsRequest {
    #[prost(string, tag = "1")]
    pub payment_id: String,
}

/// `api.GetPaymentDetailsResponse`: no payment when the node knows none by that id.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetPaymentDetailsResponse {
    #[prost(message, optional, tag = "1")]
    pub payment: Option<Payment>,
}

/// `types.Payment`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Payment {
    #[prost(string, tag = "1")]
    pub id: String,
    #[prost(uint64, optional, tag = "3")]
    pub amount_msat: Option<u64>,
    #[prost(enumeration = "PaymentStatus", tag = "5")]
    pub status: i32,
    #[prost(uint64, optional, tag = "7")]
    pub fee_paid_msat: Option<u64>,
}

/// `types.PaymentStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
pub enum PaymentStatus {
    Pending = 0,
    Succeeded = 1,
    Failed = 2,
}

/// `error.ErrorResponse`, the body of every answer that is not 200.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ErrorResponse {
    #[prost(string, tag = "1")]
    pub message: String,
    #[prost(enumeration = "ErrorCode", tag = "2")]
    pub error_code: i32,
}

/// `error.ErrorCode`, named as upstream names its values.
#[allow(
    clippy::enum_variant_names,
    reason = "the names upstream gives the protocol's values"
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
pub enum ErrorCode {
    UnknownError = 0,
    InvalidRequestError = 1,
    AuthError = 2,
    LightningError = 3,
    InternalServerError = 4,
}

/// `api.ListPaymentsRequest`: the first page without a token.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListPaymentsRequest {
    #[prost(message, optional, tag = "1")]
    pub page_token: Option<PageToken>,
}

/// `api.ListPaymentsResponse`: no next token on the last page.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListPaymentsResponse {
    #[prost(message, repeated, tag = "1")]
    pub payments: Vec<ListedPayment>,
    #[prost(message, optional, tag = "2")]
    pub next_page_token: Option<PageToken>,
}

/// `types.PageToken`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PageToken {
    #[prost(string, tag = "1")]
    pub token: String,
    #[prost(int64, tag = "2")]
    pub index: i64,
}

/// `types.Payment` as listed: the fields of [`Payment`] and its kind and direction.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ListedPayment {
    /// The payment's id, hex: for a BOLT 11 payment sent, its payment hash.
    #[prost(string, tag = "1")]
    pub id: String,
    #[prost(message, optional, tag = "2")]
    pub kind: Option<PaymentKind>,
    #[prost(uint64, optional, tag = "3")]
    pub amount_msat: Option<u64>,
    #[prost(enumeration = "PaymentDirection", tag = "4")]
    pub direction: i32,
    #[prost(enumeration = "PaymentStatus", tag = "5")]
    pub status: i32,
    #[prost(uint64, optional, tag = "7")]
    pub fee_paid_msat: Option<u64>,
}

/// `types.PaymentKind`: only whether it is on-chain (the other kinds are Lightning).
#[derive(Clone, PartialEq, prost::Message)]
pub struct PaymentKind {
    #[prost(message, optional, tag = "1")]
    pub onchain: Option<Onchain>,
}

/// `types.Onchain`: its fields are not read.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Onchain {}

/// `types.PaymentDirection`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
pub enum PaymentDirection {
    Inbound = 0,
    Outbound = 1,
}
