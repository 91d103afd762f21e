//! Small statistics for repeated runs: the spread of a figure across repeats, the
//! repeats that stand out, and whether a change between two sets of repeats exceeds
//! their noise (Mann-Whitney U, exact for small samples).

use serde::Serialize;

/// Significance level of [`significance`].
pub const ALPHA: f64 = 0.05;
/// A repeat whose modified z-score (Iglewicz and Hoaglin) exceeds this is an outlier.
pub const OUTLIER_Z: f64 = 3.5;

/// The spread of one figure across repeats.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for a single value.
    pub stddev: f64,
}

impl Stats {
    /// `None` for no values (or any that is not finite).
    pub fn of(values: &[f64]) -> Option<Stats> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Some(Stats {
            n,
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            median: median(values),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mean,
            stddev: var.sqrt(),
        })
    }
}

impl Stats {
    /// Coefficient of variation: the sample standard deviation over the mean, in
    /// percent. `None` under two values or for a mean of zero.
    pub fn cv_pct(&self) -> Option<f64> {
        (self.n > 1 && self.mean > 0.0).then(|| 100.0 * self.stddev / self.mean)
    }
}

pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Which values stand out: modified z-score `0.6745 (x - median) / MAD` beyond
/// [`OUTLIER_Z`]. Needs 3 values or more; with a MAD of 0 (most values equal) a value
/// is an outlier when it differs from the median by more than 1 %.
pub fn outliers(values: &[f64]) -> Vec<bool> {
    if values.len() < 3 {
        return vec![false; values.len()];
    }
    let m = median(values);
    let deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    let mad = median(&deviations);
    values
        .iter()
        .map(|v| {
            if mad > 0.0 {
                (0.6745 * (v - m) / mad).abs() > OUTLIER_Z
            } else {
                (v - m).abs() > 0.01 * m.abs()
            }
        })
        .collect()
}

/// A change between two sets of repeats, judged against their noise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Significance {
    /// Change of the median, percent of the baseline's median.
    pub change_pct: f64,
    /// Standard error of the difference of the means, percent of the baseline's
    /// median: the noise the change is read against.
    pub stderr_pct: f64,
    /// Two-sided p-value of the Mann-Whitney U test.
    pub p_value: f64,
    /// The smallest p-value these sample sizes can give (3 vs 3: 0.1).
    pub p_min: f64,
    pub significant: bool,
    pub n_base: usize,
    pub n_other: usize,
}

impl Significance {
    /// `+12.0 % ± 3.1 %, significant (Mann-Whitney U, p = 0.008, 5 vs 5 repeats)`.
    pub fn words(&self) -> String {
        let verdict = if self.significant {
            "significant"
        } else {
            "within noise"
        };
        let mut text = format!(
            "{:+.1} % ± {:.1} %, {verdict} (Mann-Whitney U, p = {:.3}, {} vs {} repeats",
            self.change_pct, self.stderr_pct, self.p_value, self.n_base, self.n_other
        );
        if self.p_min > ALPHA {
            text.push_str(&format!(
                "; so few cannot reach p < {ALPHA}: repeat 4 or more times"
            ));
        }
        text.push(')');
        text
    }
}

/// Whether `other` differs from `base` beyond their noise: Mann-Whitney U two-sided
/// at [`ALPHA`]. `None` when a side has fewer than 2 values or the baseline's median
/// is 0 (no percentage describes the change).
pub fn significance(base: &[f64], other: &[f64]) -> Option<Significance> {
    if base.len() < 2 || other.len() < 2 {
        return None;
    }
    let (a, b) = (Stats::of(base)?, Stats::of(other)?);
    if a.median == 0.0 {
        return None;
    }
    let p_value = mann_whitney_p(base, other);
    let p_min = mann_whitney_p_min(base.len(), other.len());
    let se = (a.stddev.powi(2) / a.n as f64 + b.stddev.powi(2) / b.n as f64).sqrt();
    Some(Significance {
        change_pct: (b.median - a.median) / a.median.abs() * 100.0,
        stderr_pct: se / a.median.abs() * 100.0,
        p_value,
        p_min,
        significant: p_value < ALPHA,
        n_base: a.n,
        n_other: b.n,
    })
}

/// U of the first sample: pairs (x, y) with x > y, ties counting one half.
fn u_statistic(x: &[f64], y: &[f64]) -> f64 {
    let mut u = 0.0;
    for a in x {
        for b in y {
            if a > b {
                u += 1.0;
            } else if a == b {
                u += 0.5;
            }
        }
    }
    u
}

/// Two-sided p-value: exact (every arrangement equally likely) without ties and up
/// to 20 values a side, else the normal approximation with the tie correction.
pub fn mann_whitney_p(x: &[f64], y: &[f64]) -> f64 {
    let (m, n) = (x.len(), y.len());
    let u = u_statistic(x, y);
    let tied = {
        let mut all: Vec<f64> = x.iter().chain(y).copied().collect();
        all.sort_by(f64::total_cmp);
        all.windows(2).any(|w| w[0] == w[1])
    };
    if !tied && m <= 20 && n <= 20 {
        let counts = u_distribution(m, n);
        let total: f64 = counts.iter().sum();
        let mean = (m * n) as f64 / 2.0;
        let distance = (u - mean).abs();
        // Arrangements at least as far from the mean as the one seen, both sides.
        let p: f64 = (counts.iter().enumerate())
            .filter(|(k, _)| (*k as f64 - mean).abs() >= distance - 1e-9)
            .map(|(_, c)| c)
            .sum::<f64>()
            / total;
        return p.min(1.0);
    }
    let (mf, nf) = (m as f64, n as f64);
    let mean = mf * nf / 2.0;
    let mut all: Vec<f64> = x.iter().chain(y).copied().collect();
    all.sort_by(f64::total_cmp);
    let mut tie_term = 0.0;
    let mut i = 0;
    while i < all.len() {
        let j = (i..all.len()).take_while(|&j| all[j] == all[i]).count();
        let t = j as f64;
        tie_term += t * t * t - t;
        i += j;
    }
    let total = mf + nf;
    let var = mf * nf / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
    if var <= 0.0 {
        return 1.0;
    }
    let z = ((u - mean).abs() - 0.5).max(0.0) / var.sqrt();
    (2.0 * (1.0 - normal_cdf(z))).min(1.0)
}

/// The smallest two-sided p-value of the exact test for these sizes: 2 / C(m+n, m).
pub fn mann_whitney_p_min(m: usize, n: usize) -> f64 {
    let mut c = 1.0;
    for i in 0..m.min(n) {
        c = c * (m + n - i) as f64 / (i + 1) as f64;
    }
    (2.0 / c).min(1.0)
}

/// How many arrangements of m and n values give each U (0..=m n), no ties.
fn u_distribution(m: usize, n: usize) -> Vec<f64> {
    // f[i][j][u]: arrangements of i x-values and j y-values with U = u, built by the
    // largest value: an x on top beats all j y-values, a y on top beats none.
    let max = m * n;
    let mut f = vec![vec![vec![0.0f64; max + 1]; n + 1]; m + 1];
    for (i, row) in f.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            if i == 0 || j == 0 {
                cell[0] = 1.0;
            }
        }
    }
    for i in 1..=m {
        for j in 1..=n {
            for u in 0..=i * j {
                let with_x = if u >= j { f[i - 1][j][u - j] } else { 0.0 };
                let with_y = f[i][j - 1][u];
                f[i][j][u] = with_x + with_y;
            }
        }
    }
    f[m][n].clone()
}

/// The standard normal CDF (Abramowitz and Stegun 7.1.26 for erf).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    let cdf = 0.5 * (1.0 + erf);
    if z >= 0.0 { cdf } else { 1.0 - cdf }
}

#[cfg(test)]
mod tests;
