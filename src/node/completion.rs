//! How the tool learns that a payment ended, and so how exact a latency is: a latency
//! ends when the tool learns the outcome, so a method that learns late adds to it.
//! Each client says its own ([`super::LightningNode::completion`]); reports print it
//! beside the figures, so implementations measured with different rulers show as such.

use serde::Serialize;

/// The way a client learns of a payment's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// A stream of updates the node pushes (LND's `SendPaymentV2`).
    Stream,
    /// The paying call returns when the payment ended (CLN's `xpay`).
    ReturnsAtEnd,
    /// An event on a socket the client keeps open (Eclair's websocket).
    WebsocketEvent,
    /// Asking the node for the payment's state at intervals (ldk-server).
    Polling,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Stream => "stream",
            Method::ReturnsAtEnd => "returns at end",
            Method::WebsocketEvent => "websocket event",
            Method::Polling => "polling",
        }
    }
}

/// What a client says about how it learns that payments ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completion {
    pub method: Method,
    /// The call or event: `SendPaymentV2`, `xpay`, `payment-sent / payment-failed`,
    /// `GetPaymentDetails`.
    pub source: String,
    /// The interval between two polls; absent for the other methods.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<f64>,
    /// Up to how late the tool learns of an end because of the method: 0 when the
    /// node tells at once (exact).
    pub late_up_to_ms: f64,
    /// Payments whose end the client learned another, later way (Eclair: by polling
    /// `getsentinfo` while its websocket was down or after its event was lost), since
    /// the client connected; absent when there were none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
    /// The largest delay between the node's own timestamp of an end and the tool
    /// receiving it (Eclair's events carry one), in ms; absent when not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_lag_max_ms: Option<f64>,
}

/// Payments learned the slower way, and how late that way can be.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fallback {
    /// `polling getsentinfo`.
    pub method: String,
    pub payments: u64,
    pub late_up_to_ms: f64,
    /// How often the event socket dropped (and was reopened).
    pub socket_drops: u64,
}

impl Completion {
    /// A method that learns of an end as it happens.
    pub fn exact(method: Method, source: &str) -> Completion {
        Completion {
            method,
            source: source.to_string(),
            poll_interval_ms: None,
            late_up_to_ms: 0.0,
            fallback: None,
            delivery_lag_max_ms: None,
        }
    }

    /// Polling every `interval`, at most `late_up_to` late.
    pub fn polling(
        source: &str,
        interval: std::time::Duration,
        late_up_to: std::time::Duration,
    ) -> Completion {
        Completion {
            method: Method::Polling,
            source: source.to_string(),
            poll_interval_ms: Some(ms(interval)),
            late_up_to_ms: ms(late_up_to),
            fallback: None,
            delivery_lag_max_ms: None,
        }
    }

    /// One line as reports print it: `stream (SendPaymentV2), exact`, `polling
    /// (GetPaymentDetails) every 2 ms, up to 3 ms late`, with the fallback after it.
    pub fn describe(&self) -> String {
        let mut text = format!("{} ({})", self.method.as_str(), self.source);
        if let Some(every) = self.poll_interval_ms {
            text.push_str(&format!(" every {} ms", short(every)));
        }
        if self.late_up_to_ms > 0.0 {
            text.push_str(&format!(", up to {} ms late", short(self.late_up_to_ms)));
        } else {
            text.push_str(", exact");
        }
        if let Some(f) = &self.fallback {
            text.push_str(&format!(
                "; {} payment{} by {} (up to {} ms late), socket dropped {} time{}",
                f.payments,
                if f.payments == 1 { "" } else { "s" },
                f.method,
                short(f.late_up_to_ms),
                f.socket_drops,
                if f.socket_drops == 1 { "" } else { "s" },
            ));
        }
        text
    }

    /// The short form of a table cell: `websocket event, exact`, `polling, up to 3 ms
    /// late`, and `(+N by polling)` when a fallback was used.
    pub fn short(&self) -> String {
        let mut text = if self.late_up_to_ms > 0.0 {
            format!(
                "{}, up to {} ms late",
                self.method.as_str(),
                short(self.late_up_to_ms)
            )
        } else {
            format!("{}, exact", self.method.as_str())
        };
        if let Some(f) = &self.fallback {
            text.push_str(&format!(" (+{} by polling)", f.payments));
        }
        text
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `2`, `2.5`: a figure of ms without trailing zeros.
fn short(ms: f64) -> String {
    let text = format!("{ms:.1}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn descriptions_say_the_method_and_how_late_it_can_be() {
        let stream = Completion::exact(Method::Stream, "SendPaymentV2");
        assert_eq!(stream.describe(), "stream (SendPaymentV2), exact");
        assert_eq!(stream.short(), "stream, exact");
        let polling = Completion::polling(
            "GetPaymentDetails",
            Duration::from_millis(2),
            Duration::from_micros(3500),
        );
        assert_eq!(
            polling.describe(),
            "polling (GetPaymentDetails) every 2 ms, up to 3.5 ms late"
        );
        assert_eq!(polling.short(), "polling, up to 3.5 ms late");
        let mut ws = Completion::exact(Method::WebsocketEvent, "payment-sent / payment-failed");
        ws.fallback = Some(Fallback {
            method: "polling getsentinfo".into(),
            payments: 1,
            late_up_to_ms: 50.0,
            socket_drops: 2,
        });
        assert_eq!(
            ws.describe(),
            "websocket event (payment-sent / payment-failed), exact; 1 payment by polling \
             getsentinfo (up to 50 ms late), socket dropped 2 times"
        );
        assert_eq!(ws.short(), "websocket event, exact (+1 by polling)");
    }
}
