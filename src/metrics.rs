//! Agreement between two partitions.

use std::collections::HashMap;

/// The adjusted Rand index of two labellings of the same rows (Hubert & Arabie 1985): 1 for
/// identical partitions (up to renaming), about 0 for unrelated ones.
///
/// # Panics
/// When the labellings differ in length.
#[track_caller]
pub fn adjusted_rand_index(a: &[usize], b: &[usize]) -> f64 {
    assert_eq!(a.len(), b.len(), "labellings of different lengths");
    let n = a.len() as f64;
    let pairs = |m: f64| m * (m - 1.0) / 2.0;
    let mut joint: HashMap<(usize, usize), f64> = HashMap::new();
    let mut ca: HashMap<usize, f64> = HashMap::new();
    let mut cb: HashMap<usize, f64> = HashMap::new();
    for (&x, &y) in a.iter().zip(b) {
        *joint.entry((x, y)).or_default() += 1.0;
        *ca.entry(x).or_default() += 1.0;
        *cb.entry(y).or_default() += 1.0;
    }
    let index: f64 = joint.values().map(|&m| pairs(m)).sum();
    let sa: f64 = ca.values().map(|&m| pairs(m)).sum();
    let sb: f64 = cb.values().map(|&m| pairs(m)).sum();
    let expected = sa * sb / pairs(n).max(1.0);
    let max = 0.5 * (sa + sb);
    if (max - expected).abs() < f64::EPSILON {
        return 1.0;
    }
    (index - expected) / (max - expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(adjusted_rand_index(&[0, 0, 1, 1], &[5, 5, 2, 2]), 1.0);
        // Hand computation: joint pairs 0 (all cells single), sa = sb = 2, pairs(4) = 6,
        // expected = 4/6, max = 2 → (0 − 2/3) / (2 − 2/3) = −0.5.
        assert!((adjusted_rand_index(&[0, 0, 1, 1], &[0, 1, 0, 1]) + 0.5).abs() < 1e-12);
    }
}
