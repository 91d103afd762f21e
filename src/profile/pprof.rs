//! Go's pprof profiles (what LND's `/debug/pprof/` serves): a gzipped protobuf of the
//! `perftools.profiles.Profile` message. The messages below are written from the
//! format's public description (field numbers and meanings); fields the tool does not
//! read (mappings, labels, comments) are left out and skipped by the decoder.

use anyhow::{Context, Result, bail};
use prost::Message;
use std::collections::HashMap;
use std::io::Read;

#[derive(Clone, PartialEq, Message)]
pub struct Profile {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// Index 0 is always "".
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    /// Index into the string table.
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    /// Leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// One value per `sample_type`.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// Inlined calls: the last line is the caller the ones before were inlined into.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    #[prost(int64, tag = "2")]
    pub line: i64,
}

#[derive(Clone, PartialEq, Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Index into the string table.
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    #[prost(int64, tag = "4")]
    pub filename: i64,
}

/// Reads a profile: gzipped (as served) or plain protobuf.
pub fn parse(bytes: &[u8]) -> Result<Profile> {
    let plain;
    let body = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut out)
            .context("the profile is not valid gzip")?;
        plain = out;
        &plain[..]
    } else {
        bytes
    };
    let profile = Profile::decode(body).context("the profile is not a pprof protobuf")?;
    if profile.string_table.first().is_some_and(|s| !s.is_empty()) {
        bail!("the profile's string table does not start with the empty string");
    }
    Ok(profile)
}

impl Profile {
    fn string(&self, index: i64) -> &str {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.string_table.get(i))
            .map_or("", String::as_str)
    }

    /// The sample types as `type/unit`, e.g. `cpu/nanoseconds`.
    pub fn sample_types(&self) -> Vec<String> {
        (self.sample_type.iter())
            .map(|t| format!("{}/{}", self.string(t.r#type), self.string(t.unit)))
            .collect()
    }

    /// The index of the first sample type named one of `names` (in that preference),
    /// else the last one (pprof's default).
    pub fn value_index(&self, names: &[&str]) -> Option<usize> {
        for name in names {
            if let Some(i) = (self.sample_type.iter()).position(|t| self.string(t.r#type) == *name)
            {
                return Some(i);
            }
        }
        self.sample_type.len().checked_sub(1)
    }

    /// Folded stacks (`root;...;leaf` -> summed value of sample type `index`), the
    /// format flame graphs are drawn from.
    pub fn fold(&self, index: usize) -> HashMap<String, u64> {
        let functions: HashMap<u64, &str> = (self.function.iter())
            .map(|f| (f.id, self.string(f.name)))
            .collect();
        let locations: HashMap<u64, &Location> = self.location.iter().map(|l| (l.id, l)).collect();
        let mut folded: HashMap<String, u64> = HashMap::new();
        for sample in &self.sample {
            let value = sample.value.get(index).copied().unwrap_or(0);
            let Ok(value) = u64::try_from(value) else {
                continue;
            };
            if value == 0 {
                continue;
            }
            let mut frames: Vec<String> = Vec::new();
            for id in sample.location_id.iter().rev() {
                let Some(loc) = locations.get(id) else {
                    continue;
                };
                if loc.line.is_empty() {
                    frames.push(format!("0x{:x}", loc.address));
                }
                for line in loc.line.iter().rev() {
                    let name = functions.get(&line.function_id).copied().unwrap_or("?");
                    frames.push(super::flame::clean_frame(short_go_name(name)));
                }
            }
            if frames.is_empty() {
                continue;
            }
            *folded.entry(frames.join(";")).or_default() += value;
        }
        folded
    }
}

/// A Go function name with its import path cut to the last two elements, so frames
/// stay readable in a flame graph: `github.com/lightningnetwork/lnd/routing.(*T).M`
/// becomes `lnd/routing.(*T).M` (the raw profile keeps the full names).
pub fn short_go_name(name: &str) -> &str {
    // Type arguments (`F[go.shape.*a/b.T]`) may hold paths of their own.
    let head = name.find('[').map_or(name, |i| &name[..i]);
    let Some(last) = head.rfind('/') else {
        return name;
    };
    match head[..last].rfind('/') {
        Some(before) => &name[before + 1..],
        None => name,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A profile of two samples: main -> work (inlined helper) and main alone.
    pub(in crate::profile) fn sample_profile() -> Profile {
        let strings = [
            "",
            "samples",
            "count",
            "cpu",
            "nanoseconds",
            "main",
            "work",
            "helper",
        ];
        Profile {
            sample_type: vec![
                ValueType { r#type: 1, unit: 2 },
                ValueType { r#type: 3, unit: 4 },
            ],
            sample: vec![
                Sample {
                    location_id: vec![2, 1],
                    value: vec![3, 30],
                },
                Sample {
                    location_id: vec![1],
                    value: vec![1, 10],
                },
            ],
            location: vec![
                Location {
                    id: 1,
                    address: 0x10,
                    line: vec![Line {
                        function_id: 1,
                        line: 3,
                    }],
                },
                Location {
                    id: 2,
                    address: 0x20,
                    line: vec![
                        Line {
                            function_id: 3,
                            line: 9,
                        },
                        Line {
                            function_id: 2,
                            line: 5,
                        },
                    ],
                },
            ],
            function: vec![
                Function {
                    id: 1,
                    name: 5,
                    ..Function::default()
                },
                Function {
                    id: 2,
                    name: 6,
                    ..Function::default()
                },
                Function {
                    id: 3,
                    name: 7,
                    ..Function::default()
                },
            ],
            string_table: strings.iter().map(|s| s.to_string()).collect(),
            period: 10_000_000,
            ..Profile::default()
        }
    }

    #[test]
    fn gzipped_profiles_parse_and_fold_root_first_with_inlined_frames() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &sample_profile().encode_to_vec()).unwrap();
        let profile = parse(&gz.finish().unwrap()).unwrap();
        assert_eq!(profile.sample_types(), ["samples/count", "cpu/nanoseconds"]);
        let cpu = profile.value_index(&["cpu"]).unwrap();
        assert_eq!(cpu, 1);
        let folded = profile.fold(cpu);
        assert_eq!(folded["main;work;helper"], 30);
        assert_eq!(folded["main"], 10);
        assert_eq!(folded.len(), 2);
    }

    #[test]
    fn go_names_keep_the_last_two_path_elements() {
        assert_eq!(
            short_go_name("github.com/lightningnetwork/lnd/routing.(*ChannelRouter).sendPayment"),
            "lnd/routing.(*ChannelRouter).sendPayment"
        );
        assert_eq!(short_go_name("runtime.mallocgc"), "runtime.mallocgc");
        assert_eq!(
            short_go_name("internal/runtime/syscall.Syscall6"),
            "runtime/syscall.Syscall6"
        );
        assert_eq!(
            short_go_name("a.com/x/y/z.F[go.shape.*a.com/q/r.T]"),
            "y/z.F[go.shape.*a.com/q/r.T]"
        );
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(parse(&[0x1f, 0x8b, 1, 2, 3]).is_err());
        assert!(parse(b"\xff\xff\xff\xff not protobuf").is_err());
    }
}
