//! Spearman's rank correlation: how alike two orderings of the same jobs are (a run's waits
//! against the waits a site recorded), whatever the scale.

use crate::engine::sort::ascending;

/// Ranks from 1 of `values` (no NaN), ties sharing their average rank.
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    assert!(values.len() < u32::MAX as usize, "at most 2^32 - 1 values");
    let order = ascending(values);
    let mut ranks = vec![0.0; values.len()];
    let mut first = 0;
    while first < order.len() {
        let value = values[order[first] as usize];
        let mut last = first + 1;
        while last < order.len() && values[order[last] as usize] == value {
            last += 1;
        }
        // positions first..last hold ranks first + 1 ..= last
        let rank = (first + last + 1) as f64 / 2.0;
        for &i in &order[first..last] {
            ranks[i as usize] = rank;
        }
        first = last;
    }
    ranks
}

/// Spearman's rho of two equally long samples (no NaN): Pearson's correlation of their average
/// ranks. `None` with fewer than two values, or when either sample is constant.
pub fn rank_correlation(a: &[f64], b: &[f64]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "two samples of the same jobs");
    if a.len() < 2 {
        return None;
    }
    let (ra, rb) = rayon::join(|| average_ranks(a), || average_ranks(b));
    // the mean rank is (n + 1) / 2 whatever the ties
    let mean = (a.len() + 1) as f64 / 2.0;
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        let (x, y) = (x - mean, y - mean);
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    let scale = (aa * bb).sqrt();
    (scale > 0.0).then(|| ab / scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_share_their_average_rank() {
        assert_eq!(
            average_ranks(&[3.0, 1.0, 3.0, 0.0, 3.0]),
            vec![4.0, 2.0, 4.0, 1.0, 4.0]
        );
        assert_eq!(average_ranks(&[-0.0, 0.0]), vec![1.5, 1.5]);
    }

    #[test]
    fn without_ties_rho_is_spearmans_formula() {
        // d = rank differences: rho = 1 - 6 sum d^2 / (n (n^2 - 1))
        let a = [10.0, 20.0, 30.0, 40.0, 50.0];
        let b = [2.0, 1.0, 4.0, 3.0, 5.0];
        let expected = 1.0 - 6.0 * 4.0 / (5.0 * 24.0);
        assert!((rank_correlation(&a, &b).unwrap() - expected).abs() < 1e-12);
        assert_eq!(rank_correlation(&a, &a), Some(1.0));
        let reversed: Vec<f64> = a.iter().rev().copied().collect();
        assert_eq!(rank_correlation(&a, &reversed), Some(-1.0));
    }

    #[test]
    fn a_large_shuffled_sample_with_ties_in_pairs() {
        // a shuffled 0..n halved: every value twice
        let n = 5000;
        let values: Vec<f64> = (0..n).map(|i| ((i * 7919) % n / 2) as f64).collect();
        let ranks = average_ranks(&values);
        for (v, r) in values.iter().zip(&ranks) {
            assert_eq!(*r, 2.0 * v + 1.5); // the pair holding value v takes ranks 2v+1, 2v+2
        }
    }

    #[test]
    fn a_constant_sample_has_no_correlation() {
        assert_eq!(rank_correlation(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(rank_correlation(&[1.0], &[2.0]), None);
    }
}
