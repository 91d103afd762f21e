//! Eclair's websocket (`ws://<api>/ws`, basic auth with the API password): Eclair
//! pushes `payment-sent` and `payment-failed` there as a payment ends, with the
//! payment's id, which `sendtonode` and `payinvoice` answered. One socket per node, one
//! reader task, which hands each event to the payment waiting for its id.
//!
//! An event can come before its payment waits for it (the answer with the id is read
//! after the event): it is kept a while for the payment. Eclair drops events when its
//! small queue is full, and none come while the socket is down: a waiting payment then
//! asks `getsentinfo` (every second while the socket is up, at once and then often
//! while it is down), and such payments are counted, as the report says.

use super::{PaymentOutcome, failure_reason};
use crate::node::FailureReason;
use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_util::sync::{CancellationToken, DropGuard};

/// How long an event no payment waits for yet is kept, and how many at most.
const EARLY_KEEP: Duration = Duration::from_secs(60);
const EARLY_MAX: usize = 10_000;
/// The first and the longest pause before reopening a dropped socket.
const RECONNECT_FIRST: Duration = Duration::from_millis(50);
const RECONNECT_MAX: Duration = Duration::from_secs(2);
/// A ping now and then, so an idle socket is not closed by the server's idle timeout.
const PING_EVERY: Duration = Duration::from_secs(15);
/// How long `open` waits for the first connection.
const FIRST_CONNECT: Duration = Duration::from_secs(10);
/// How long one attempt may take to open the socket (a node that took the connection
/// and does not answer); then the reader tries again.
const HANDSHAKE: Duration = Duration::from_secs(10);

/// The end of a payment as an event told it.
#[derive(Debug)]
struct Ended {
    outcome: PaymentOutcome,
    /// When it came, for the keep-alive of early events.
    at: Instant,
}

#[derive(Default)]
struct Table {
    waiting: HashMap<String, oneshot::Sender<PaymentOutcome>>,
    early: HashMap<String, Ended>,
    early_order: VecDeque<String>,
}

impl Table {
    fn keep_early(&mut self, id: String, ended: Ended) {
        let now = ended.at;
        while self.early_order.len() >= EARLY_MAX
            || (self.early_order.front())
                .and_then(|id| self.early.get(id))
                .is_some_and(|e| now.duration_since(e.at) > EARLY_KEEP)
        {
            if let Some(old) = self.early_order.pop_front() {
                self.early.remove(&old);
            }
        }
        if self.early.insert(id.clone(), ended).is_none() {
            self.early_order.push_back(id);
        }
    }
}

/// What the reader task and the payments share.
struct Shared {
    table: Mutex<Table>,
    connected: watch::Sender<bool>,
    /// Times the socket dropped after it was open.
    drops: AtomicU64,
    /// Payments whose end came by `getsentinfo`: while the socket was down, or with it
    /// up (the event was lost).
    polled_down: AtomicU64,
    polled_up: AtomicU64,
    /// The largest delay from Eclair's timestamp of an end to its event's arrival, µs.
    lag_max_us: AtomicU64,
    /// Events with a timestamp, to tell "no lag measured" from "0".
    lags: AtomicU64,
}

impl Shared {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The socket of one node: its reader task ends when the last clone of the node is
/// dropped.
pub(super) struct EventSocket {
    shared: Arc<Shared>,
    _stop: DropGuard,
}

/// Counts for the report's completion line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Counts {
    pub drops: u64,
    pub polled_down: u64,
    pub polled_up: u64,
    pub lag_max_us: Option<u64>,
}

/// A payment waiting for its event; leaves the table when dropped.
pub(super) struct Waiter {
    shared: Arc<Shared>,
    id: String,
    pub ended: oneshot::Receiver<PaymentOutcome>,
    pub connected: watch::Receiver<bool>,
}

impl Drop for Waiter {
    fn drop(&mut self) {
        self.shared.table().waiting.remove(&self.id);
    }
}

impl Waiter {
    /// Counts a payment whose end came by polling, with the socket up or down.
    pub fn polled(&self, socket_up: bool) {
        let counter = if socket_up {
            &self.shared.polled_up
        } else {
            &self.shared.polled_down
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

impl EventSocket {
    /// Starts the reader task on `addr` (`host:port` of the API) and waits until the
    /// socket is open, or [`FIRST_CONNECT`] has passed (payments then poll until it is).
    pub async fn open(node: &str, addr: &str, password: &str) -> EventSocket {
        let (connected, _) = watch::channel(false);
        let shared = Arc::new(Shared {
            table: Mutex::default(),
            connected,
            drops: AtomicU64::new(0),
            polled_down: AtomicU64::new(0),
            polled_up: AtomicU64::new(0),
            lag_max_us: AtomicU64::new(0),
            lags: AtomicU64::new(0),
        });
        let stop = CancellationToken::new();
        let mut up = shared.connected.subscribe();
        let reader = Reader {
            node: node.to_string(),
            url: format!("ws://{addr}/ws"),
            auth: basic_auth(password),
            shared: Arc::clone(&shared),
            stop: stop.clone(),
        };
        tokio::spawn(reader.run());
        if tokio::time::timeout(FIRST_CONNECT, up.wait_for(|up| *up))
            .await
            .is_err()
        {
            tracing::warn!(
                "{node}: Eclair's websocket did not open in {FIRST_CONNECT:?}; payments poll getsentinfo until it does"
            );
        }
        EventSocket {
            shared,
            _stop: stop.drop_guard(),
        }
    }

    /// Waits for the end of payment `id`: at once if its event came already.
    pub fn wait(&self, id: &str) -> Waiter {
        let (tx, rx) = oneshot::channel();
        {
            let mut table = self.shared.table();
            match table.early.remove(id) {
                Some(ended) => {
                    let _ = tx.send(ended.outcome);
                }
                None => {
                    table.waiting.insert(id.to_string(), tx);
                }
            }
        }
        Waiter {
            shared: Arc::clone(&self.shared),
            id: id.to_string(),
            ended: rx,
            connected: self.shared.connected.subscribe(),
        }
    }

    pub fn counts(&self) -> Counts {
        let s = &self.shared;
        Counts {
            drops: s.drops.load(Ordering::Relaxed),
            polled_down: s.polled_down.load(Ordering::Relaxed),
            polled_up: s.polled_up.load(Ordering::Relaxed),
            lag_max_us: (s.lags.load(Ordering::Relaxed) > 0)
                .then(|| s.lag_max_us.load(Ordering::Relaxed)),
        }
    }
}

/// `Basic <base64 of ":password">`: Eclair's API user is empty.
fn basic_auth(password: &str) -> String {
    use base64::Engine as _;
    let token = base64::engine::general_purpose::STANDARD.encode(format!(":{password}"));
    format!("Basic {token}")
}

struct Reader {
    node: String,
    url: String,
    auth: String,
    shared: Arc<Shared>,
    stop: CancellationToken,
}

impl Reader {
    /// Opens the socket, reads it until it drops, and opens it again, until stopped.
    async fn run(self) {
        let mut pause = RECONNECT_FIRST;
        loop {
            let opened = tokio::select! {
                _ = self.stop.cancelled() => return,
                opened = self.connect() => opened,
            };
            match opened {
                Ok(socket) => {
                    pause = RECONNECT_FIRST;
                    self.shared.connected.send_replace(true);
                    let why = self.read(socket).await;
                    self.shared.connected.send_replace(false);
                    if self.stop.is_cancelled() {
                        return;
                    }
                    self.shared.drops.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!("{}: Eclair's websocket dropped: {why}", self.node);
                }
                Err(e) => tracing::debug!("{}: cannot open Eclair's websocket: {e}", self.node),
            }
            tokio::select! {
                _ = self.stop.cancelled() => return,
                _ = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(RECONNECT_MAX);
        }
    }

    async fn connect(
        &self,
    ) -> Result<
        tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
        tokio_tungstenite::tungstenite::Error,
    > {
        let mut request = self.url.as_str().into_client_request()?;
        let auth = http::HeaderValue::from_str(&self.auth)
            .map_err(|e| tokio_tungstenite::tungstenite::Error::HttpFormat(e.into()))?;
        request
            .headers_mut()
            .insert(http::header::AUTHORIZATION, auth);
        let handshake = tokio::time::timeout(HANDSHAKE, tokio_tungstenite::connect_async(request));
        let (socket, _) = handshake.await.map_err(|_| {
            tokio_tungstenite::tungstenite::Error::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no websocket handshake within {HANDSHAKE:?}"),
            ))
        })??;
        if let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = socket.get_ref() {
            let _ = tcp.set_nodelay(true);
        }
        Ok(socket)
    }

    /// Reads events until the socket ends or the node is gone; says why it ended.
    async fn read<S>(&self, socket: tokio_tungstenite::WebSocketStream<S>) -> String
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        let (mut sink, mut stream) = socket.split();
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = self.stop.cancelled() => return "stopped".into(),
                _ = ping.tick() => {
                    if let Err(e) = sink.send(Message::Ping(Vec::new().into())).await {
                        return e.to_string();
                    }
                }
                message = stream.next() => match message {
                    Some(Ok(Message::Text(text))) => self.event(text.as_str()),
                    Some(Ok(Message::Close(_))) | None => return "closed by Eclair".into(),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return e.to_string(),
                },
            }
        }
    }

    /// Hands a payment's end to its waiting payment, or keeps it for it.
    fn event(&self, text: &str) {
        let Some((id, outcome, stamp)) = parse_event(text) else {
            return;
        };
        if let Some(lag) = stamp.and_then(|t| SystemTime::now().duration_since(t).ok()) {
            let s = &self.shared;
            s.lags.fetch_add(1, Ordering::Relaxed);
            s.lag_max_us
                .fetch_max(lag.as_micros() as u64, Ordering::Relaxed);
        }
        let mut table = self.shared.table();
        match table.waiting.remove(&id) {
            Some(waiting) => {
                let _ = waiting.send(outcome);
            }
            None => table.keep_early(
                id,
                Ended {
                    outcome,
                    at: Instant::now(),
                },
            ),
        }
    }
}

/// Eclair's timestamps: `{"iso": "2019-03-28T14:45:37.711Z", "unix": <seconds>}`.
#[derive(Debug, Deserialize)]
struct Stamp {
    iso: String,
}

impl Stamp {
    fn time(&self) -> Option<SystemTime> {
        humantime::parse_rfc3339(&self.iso).ok()
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SentPart {
    #[serde(default)]
    fees_paid: u64,
    #[serde(default)]
    route: Vec<Value>,
    timestamp: Option<Stamp>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Event {
    #[serde(rename = "payment-sent")]
    Sent {
        id: String,
        #[serde(default)]
        parts: Vec<SentPart>,
    },
    #[serde(rename = "payment-failed")]
    Failed {
        id: String,
        #[serde(default)]
        failures: Vec<Value>,
        timestamp: Option<Stamp>,
    },
    #[serde(other)]
    Other,
}

/// The payment id, outcome and Eclair's timestamp of a `payment-sent` or
/// `payment-failed` event; None for other events and for text that is not one.
fn parse_event(text: &str) -> Option<(String, PaymentOutcome, Option<SystemTime>)> {
    match serde_json::from_str::<Event>(text).ok()? {
        Event::Sent { id, parts } => {
            let fee_msat = parts.iter().map(|p| p.fees_paid).sum();
            // The proof of payment comes with the first part fulfilled (Eclair's own
            // timestamp of the payment is the earliest part's).
            let stamp = (parts.iter())
                .filter_map(|p| p.timestamp.as_ref()?.time())
                .min();
            // Route lengths when Eclair includes the routes; 0 stands for unknown.
            let hops = parts
                .iter()
                .map(|p| p.route.len() as u32)
                .max()
                .unwrap_or(0);
            Some((id, PaymentOutcome::Succeeded { fee_msat, hops }, stamp))
        }
        Event::Failed {
            id,
            failures,
            timestamp,
        } => {
            // Eclair writes a failure's message as text (a local error's, a remote
            // node's failure message): the reasons are read from the text.
            let texts: Vec<String> = failures.iter().map(Value::to_string).collect();
            let messages: Vec<&str> = texts.iter().map(String::as_str).collect();
            let reason = if messages.is_empty() {
                FailureReason::Error
            } else {
                failure_reason(&messages)
            };
            let stamp = timestamp.as_ref().and_then(Stamp::time);
            Some((id, PaymentOutcome::Failed { reason }, stamp))
        }
        Event::Other => None,
    }
}

#[cfg(test)]
mod tests;
