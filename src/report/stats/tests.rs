//! The spread and the significance call, with fixed seeds.

use super::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `n` values around `centre`, each off by up to ±`noise` (uniform), from `seed`.
fn sample(seed: u64, n: usize, centre: f64, noise: f64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n)
        .map(|_| centre + rng.random_range(-noise..=noise))
        .collect()
}

#[test]
fn stats_give_the_spread() {
    let s = Stats::of(&[30.0, 36.5, 40.0, 33.0, 35.5]).unwrap();
    assert_eq!((s.n, s.min, s.median, s.max), (5, 30.0, 35.5, 40.0));
    assert!((s.mean - 35.0).abs() < 1e-9);
    // Sample standard deviation: sqrt(((5^2 + 1.5^2 + 5^2 + 2^2 + 0.5^2)) / 4).
    assert!((s.stddev - (56.5f64 / 4.0).sqrt()).abs() < 1e-9, "{s:?}");
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
    assert_eq!(Stats::of(&[]), None);
    assert_eq!(Stats::of(&[1.0, f64::NAN]), None);
    assert_eq!(Stats::of(&[7.0]).unwrap().stddev, 0.0);
}

#[test]
fn a_repeat_far_from_the_others_is_an_outlier() {
    assert_eq!(
        outliers(&[36.0, 35.5, 36.4, 12.0, 35.9]),
        [false, false, false, true, false]
    );
    assert_eq!(outliers(&[36.0, 35.5, 36.4, 35.8, 35.9]), [false; 5]);
    assert_eq!(outliers(&[36.0, 12.0]), [false, false], "two say nothing");
    assert_eq!(outliers(&[5.0, 5.0, 5.0, 9.0]), [false, false, false, true]);
}

#[test]
fn the_exact_test_matches_hand_counts() {
    // 3 vs 3, fully separated: 2 of the C(6,3) = 20 arrangements are as extreme.
    let p = mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
    assert!((p - 0.1).abs() < 1e-12, "{p}");
    assert!((mann_whitney_p_min(3, 3) - 0.1).abs() < 1e-12);
    // 5 vs 5 fully separated: 2 / 252.
    let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]);
    assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
    // Interleaved: no evidence at all.
    let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]);
    assert!(p > 0.5, "{p}");
    // Ties go to the normal approximation, still symmetric and within [0, 1].
    let p = mann_whitney_p(&[1.0, 1.0, 2.0], &[1.0, 2.0, 2.0]);
    assert!((0.0..=1.0).contains(&p), "{p}");
    assert!((p - mann_whitney_p(&[1.0, 2.0, 2.0], &[1.0, 1.0, 2.0])).abs() < 1e-12);
}

#[test]
fn identical_inputs_are_within_noise() {
    let a = sample(1, 5, 36.0, 2.0);
    let s = significance(&a, &a).unwrap();
    assert!(!s.significant, "{s:?}");
    assert_eq!(s.change_pct, 0.0);
    assert!(s.words().contains("within noise"), "{}", s.words());
    // Ten more draws of the same noise (seeds fixed): at α = 0.05 about one in twenty
    // is called significant by chance; at most one of these ten may be.
    let same: Vec<bool> = (2..12)
        .map(|seed| {
            significance(&a, &sample(seed, 5, 36.0, 2.0))
                .unwrap()
                .significant
        })
        .collect();
    assert!(same.iter().filter(|s| **s).count() <= 1, "{same:?}");
}

#[test]
fn a_clear_shift_is_significant_and_said_so() {
    let a = sample(7, 5, 36.0, 1.0);
    let b = sample(8, 5, 44.0, 1.0);
    let s = significance(&a, &b).unwrap();
    assert!(s.significant, "{s:?}");
    assert!((s.change_pct - 22.2).abs() < 5.0, "{s:?}");
    assert!(s.p_value < 0.01, "{s:?}");
    let words = s.words();
    assert!(
        words.starts_with('+')
            && words.contains("significant (Mann-Whitney U, p = 0.008, 5 vs 5 repeats)"),
        "{words}"
    );
    // The same shift with 3 repeats a side cannot be called: the words say why.
    let s = significance(&a[..3], &b[..3]).unwrap();
    assert!(!s.significant);
    assert!(
        s.words().contains("repeat 4 or more times"),
        "{}",
        s.words()
    );
    // A small shift inside wide noise is not significant.
    let wide_a = sample(9, 5, 36.0, 6.0);
    let wide_b = sample(10, 5, 37.0, 6.0);
    assert!(!significance(&wide_a, &wide_b).unwrap().significant);
    // One repeat a side: nothing to judge.
    assert_eq!(significance(&a[..1], &b), None);
}
