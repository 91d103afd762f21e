//! Value distributions a scenario may give instead of a number (channel capacities,
//! channel counts, payment amounts): `5000000`, `{ fixed: 5000000 }`,
//! `{ uniform: [1000000, 8000000] }`, `{ log_normal: { median: 10000, sigma: 1.0 } }`.

use super::error::Ctx;
use super::error::ScenarioError;
use rand::Rng;
use serde::Deserialize;
use serde_saphyr::Spanned;
use std::fmt;

/// A distribution as written.
#[derive(Debug, Clone)]
pub(super) enum RawDist {
    Fixed(f64),
    Tagged(RawTagged),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum RawTagged {
    Fixed(f64),
    Uniform([f64; 2]),
    LogNormal(RawLogNormal),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLogNormal {
    pub median: f64,
    pub sigma: f64,
}

impl<'de> Deserialize<'de> for RawDist {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DistVisitor;

        impl<'de> serde::de::Visitor<'de> for DistVisitor {
            type Value = RawDist;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a number, or one of { fixed: N }, { uniform: [LOW, HIGH] }, { log_normal: { median: M, sigma: S } }",
                )
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RawDist, E> {
                Ok(RawDist::Fixed(v as f64))
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RawDist, E> {
                Ok(RawDist::Fixed(v as f64))
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RawDist, E> {
                Ok(RawDist::Fixed(v))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<RawDist, A::Error> {
                let tagged =
                    RawTagged::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(RawDist::Tagged(tagged))
            }
        }

        deserializer.deserialize_any(DistVisitor)
    }
}

/// A checked distribution of positive values.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Dist {
    Fixed {
        value: f64,
    },
    Uniform {
        low: f64,
        high: f64,
    },
    /// exp(N(ln median, sigma²)).
    LogNormal {
        median: f64,
        sigma: f64,
    },
}

/// The widest log-normal spread accepted: beyond it single samples dwarf the rest.
const MAX_SIGMA: f64 = 4.0;

impl Dist {
    /// Checks `raw` (every value above 0 and at most `max`); `what` names the field.
    pub(super) fn validate(
        ctx: &Ctx,
        raw: &Spanned<RawDist>,
        what: &str,
        max: f64,
    ) -> Result<Dist, ScenarioError> {
        let at = &raw.referenced;
        let positive = |v: f64| v.is_finite() && v > 0.0 && v <= max;
        let dist = match &raw.value {
            RawDist::Fixed(v) | RawDist::Tagged(RawTagged::Fixed(v)) => Dist::Fixed { value: *v },
            RawDist::Tagged(RawTagged::Uniform([low, high])) => Dist::Uniform {
                low: *low,
                high: *high,
            },
            RawDist::Tagged(RawTagged::LogNormal(l)) => Dist::LogNormal {
                median: l.median,
                sigma: l.sigma,
            },
        };
        let ok = match dist {
            Dist::Fixed { value } => positive(value),
            Dist::Uniform { low, high } => positive(low) && positive(high) && low <= high,
            Dist::LogNormal { median, sigma } => {
                positive(median) && sigma.is_finite() && (0.0..=MAX_SIGMA).contains(&sigma)
            }
        };
        if ok {
            return Ok(dist);
        }
        Err(ctx.error(
            at,
            format!(
                "{what} is not a distribution of values between 0 and {max}: {}",
                dist.written()
            ),
            format!(
                "write a number above 0, {{ uniform: [LOW, HIGH] }} with 0 < LOW <= HIGH <= {max}, \
                 or {{ log_normal: {{ median: M, sigma: S }} }} with M above 0 and S from 0 to {MAX_SIGMA}"
            ),
        ))
    }

    /// As a scenario writes it: `1000`, `{ uniform: [1, 5] }`.
    fn written(&self) -> String {
        match *self {
            Dist::Fixed { value } => format!("{value}"),
            Dist::Uniform { low, high } => format!("{{ uniform: [{low}, {high}] }}"),
            Dist::LogNormal { median, sigma } => {
                format!("{{ log_normal: {{ median: {median}, sigma: {sigma} }} }}")
            }
        }
    }

    /// One sample.
    pub fn sample(&self, rng: &mut impl Rng) -> f64 {
        match *self {
            Dist::Fixed { value } => value,
            Dist::Uniform { low, high } if low < high => rng.random_range(low..=high),
            Dist::Uniform { low, .. } => low,
            Dist::LogNormal { median, sigma } => {
                // Box-Muller: one standard normal from two uniforms.
                let u1: f64 = rng.random_range(f64::EPSILON..1.0);
                let u2: f64 = rng.random();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                median * (sigma * z).exp()
            }
        }
    }

    /// One sample as a whole number of at least 1.
    pub fn sample_u64(&self, rng: &mut impl Rng) -> u64 {
        (self.sample(rng).round() as u64).max(1)
    }

    /// The typical value: the fixed value, the middle of the range, the median.
    pub fn typical(&self) -> f64 {
        match *self {
            Dist::Fixed { value } => value,
            Dist::Uniform { low, high } => (low + high) / 2.0,
            Dist::LogNormal { median, .. } => median,
        }
    }

    /// The largest value a sample may take (log-normal: its median x e^(3 sigma)).
    pub fn high(&self) -> f64 {
        match *self {
            Dist::Fixed { value } => value,
            Dist::Uniform { high, .. } => high,
            Dist::LogNormal { median, sigma } => median * (3.0 * sigma).exp(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn samples_stay_in_their_range_and_log_normal_centres_on_its_median() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let u = Dist::Uniform {
            low: 10.0,
            high: 20.0,
        };
        assert!((0..1000).all(|_| (10.0..=20.0).contains(&u.sample(&mut rng))));
        let l = Dist::LogNormal {
            median: 1000.0,
            sigma: 1.0,
        };
        let mut v: Vec<f64> = (0..2001).map(|_| l.sample(&mut rng)).collect();
        v.sort_by(f64::total_cmp);
        assert!((800.0..1250.0).contains(&v[1000]), "median {}", v[1000]);
        assert_eq!(Dist::Fixed { value: 0.2 }.sample_u64(&mut rng), 1);
    }
}
