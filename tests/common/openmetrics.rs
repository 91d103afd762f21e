//! A small, strict parser of the OpenMetrics text format, for the tests that scrape
//! `--metrics-listen`: every sample belongs to a family declared with `# TYPE`, names
//! and labels are well formed, values parse, histogram buckets are cumulative and end
//! with `+Inf` equal to `_count`, and the text ends with `# EOF`. Anything else panics.

use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

#[derive(Debug, Default)]
pub struct Scrape {
    /// Family name -> type (`counter`, `gauge`, `histogram`, ...).
    pub types: HashMap<String, String>,
    pub samples: Vec<Sample>,
}

impl Scrape {
    /// The value of the sample `name` whose labels include every `(key, value)` of
    /// `labels`; None when there is none; panics when several match.
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        let found: Vec<&Sample> = self
            .samples
            .iter()
            .filter(|s| s.name == name)
            .filter(|s| {
                labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .collect();
        assert!(
            found.len() <= 1,
            "several samples {name} {labels:?}: {found:?}"
        );
        found.first().map(|s| s.value)
    }

    /// The sum of every sample `name` whose labels include `labels`.
    pub fn sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.samples
            .iter()
            .filter(|s| s.name == name)
            .filter(|s| {
                labels
                    .iter()
                    .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
            })
            .map(|s| s.value)
            .sum()
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// The family a sample name belongs to, given the declared types.
fn family_of<'a>(name: &'a str, types: &HashMap<String, String>) -> Option<&'a str> {
    if types.contains_key(name) {
        return Some(name);
    }
    for suffix in [
        "_total", "_created", "_bucket", "_count", "_sum", "_info", "_gcount", "_gsum",
    ] {
        if let Some(base) = name.strip_suffix(suffix)
            && types.contains_key(base)
        {
            return Some(base);
        }
    }
    None
}

fn parse_labels(text: &str, line: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (key, after) = rest
            .split_once("=\"")
            .unwrap_or_else(|| panic!("label without =\" in {line:?}"));
        assert!(valid_name(key), "bad label name {key:?} in {line:?}");
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            match chars.next() {
                Some((i, '"')) => break i,
                Some((_, '\\')) => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, c @ ('"' | '\\'))) => value.push(c),
                    other => panic!("bad escape {other:?} in {line:?}"),
                },
                Some((_, c)) => value.push(c),
                None => panic!("unterminated label value in {line:?}"),
            }
        };
        assert!(
            labels.insert(key.to_string(), value).is_none(),
            "label {key} twice in {line:?}"
        );
        rest = &after[end + 1..];
        rest = match rest.strip_prefix(',') {
            Some(r) => r,
            None => {
                assert!(rest.is_empty(), "junk after a label in {line:?}");
                rest
            }
        };
    }
    labels
}

fn parse_value(text: &str, line: &str) -> f64 {
    match text {
        "+Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        "NaN" => f64::NAN,
        _ => text
            .parse()
            .unwrap_or_else(|_| panic!("bad value {text:?} in {line:?}")),
    }
}

/// Parses a whole exposition; panics at the first thing that is not OpenMetrics.
pub fn parse(text: &str) -> Scrape {
    let mut scrape = Scrape::default();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.last().copied(),
        Some("# EOF"),
        "no # EOF at the end:\n{text}"
    );
    for line in &lines[..lines.len() - 1] {
        if let Some(meta) = line.strip_prefix("# ") {
            let mut words = meta.splitn(3, ' ');
            let (kind, name) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
            assert!(valid_name(name), "bad metric name in {line:?}");
            match kind {
                "TYPE" => {
                    let t = words.next().unwrap_or("");
                    assert!(
                        [
                            "counter",
                            "gauge",
                            "histogram",
                            "gaugehistogram",
                            "stateset",
                            "info",
                            "summary",
                            "unknown"
                        ]
                        .contains(&t),
                        "bad type in {line:?}"
                    );
                    assert!(
                        scrape
                            .types
                            .insert(name.to_string(), t.to_string())
                            .is_none(),
                        "{name} typed twice"
                    );
                }
                "HELP" | "UNIT" => {}
                _ => panic!("unknown comment {line:?}"),
            }
            continue;
        }
        assert!(
            !line.starts_with('#') && !line.is_empty(),
            "stray line {line:?}"
        );
        let (name_labels, value) = match line.find('{') {
            Some(_) => {
                let close = line
                    .rfind('}')
                    .unwrap_or_else(|| panic!("no }} in {line:?}"));
                (&line[..close + 1], line[close + 1..].trim_start())
            }
            None => line
                .split_once(' ')
                .unwrap_or_else(|| panic!("no value in {line:?}")),
        };
        let (name, labels) = match name_labels.split_once('{') {
            Some((n, l)) => (n, parse_labels(l.strip_suffix('}').unwrap(), line)),
            None => (name_labels, BTreeMap::new()),
        };
        assert!(valid_name(name), "bad sample name in {line:?}");
        let family = family_of(name, &scrape.types)
            .unwrap_or_else(|| panic!("sample of an undeclared family: {line:?}"));
        if scrape.types[family] == "counter" {
            assert!(
                name.ends_with("_total") || name.ends_with("_created"),
                "counter sample {line:?}"
            );
        }
        // A timestamp may follow the value.
        let value = parse_value(value.split(' ').next().unwrap_or(""), line);
        scrape.samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    check_histograms(&scrape);
    scrape
}

/// A series' labels without `le`, in order.
type LabelKey = Vec<(String, String)>;

fn check_histograms(scrape: &Scrape) {
    for (family, t) in &scrape.types {
        if t != "histogram" {
            continue;
        }
        // Per label set (without le): buckets in order, cumulative, +Inf = _count.
        let mut series: BTreeMap<LabelKey, Vec<(f64, f64)>> = BTreeMap::new();
        for s in scrape
            .samples
            .iter()
            .filter(|s| s.name == format!("{family}_bucket"))
        {
            let le = parse_value(s.labels.get("le").expect("bucket without le"), &s.name);
            let key = s
                .labels
                .iter()
                .filter(|(k, _)| *k != "le")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            series.entry(key).or_default().push((le, s.value));
        }
        assert!(!series.is_empty(), "histogram {family} has no buckets");
        for (key, buckets) in series {
            for pair in buckets.windows(2) {
                assert!(
                    pair[0].0 < pair[1].0,
                    "{family}: buckets out of order {pair:?}"
                );
                assert!(
                    pair[0].1 <= pair[1].1,
                    "{family}: buckets not cumulative {pair:?}"
                );
            }
            let (le, inf) = *buckets.last().unwrap();
            assert!(le.is_infinite(), "{family}: last bucket is not +Inf");
            let labels: Vec<(&str, &str)> =
                key.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let count = scrape
                .value(&format!("{family}_count"), &labels)
                .expect("histogram _count");
            assert_eq!(inf, count, "{family}: +Inf bucket differs from _count");
            assert!(
                scrape.value(&format!("{family}_sum"), &labels).is_some(),
                "{family}: no _sum"
            );
        }
    }
}

/// `GET /metrics` from `addr`: the body, or None when nothing answers there.
pub fn scrape(addr: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .ok()?;
    stream
        .write_all(format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .ok()?;
    let mut out = String::new();
    stream.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.1 200"), "scrape answered {head}");
    assert!(
        head.contains("application/openmetrics-text"),
        "content type: {head}"
    );
    Some(body.to_string())
}

/// A loopback port free now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
