//! Sorting floats by value, stably: the one radix sort the engine's after-the-fact statistics
//! share (the utilization's change points, the ranks of waits).

/// Bits of the key each pass of the radix sort places: 2,048 counters stay in the L1 cache.
const DIGIT: u32 = 11;

/// `t` as an integer ordered as the floats are (no NaN; -0 and +0 equal, as numpy sorts them).
#[inline]
pub(crate) fn order_key(t: f64) -> u64 {
    let bits = (t + 0.0).to_bits(); // -0 + 0 = +0
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The positions of `values` (no NaN; fewer than 2^32) in ascending order, ties in their
/// order (stable): a least-significant-digit radix sort of their order keys (six passes over
/// keys and positions, none where every key shares the digit; half a million values sort in a
/// few milliseconds).
pub(crate) fn ascending(values: &[f64]) -> Vec<u32> {
    const BUCKETS: usize = 1 << DIGIT;
    const PASSES: usize = 64usize.div_ceil(DIGIT as usize);
    assert!(values.len() < u32::MAX as usize, "at most 2^32 - 1 values");
    let mut keys: Vec<u64> = values.iter().map(|&v| order_key(v)).collect();
    let mut order: Vec<u32> = (0..values.len() as u32).collect();
    let mut counts = vec![[0u32; BUCKETS]; PASSES];
    for &key in &keys {
        for (pass, count) in counts.iter_mut().enumerate() {
            count[(key >> (DIGIT as usize * pass)) as usize & (BUCKETS - 1)] += 1;
        }
    }
    let (mut spare_keys, mut spare_order) = (keys.clone(), order.clone());
    for (pass, count) in counts.iter_mut().enumerate() {
        if count.contains(&(keys.len() as u32)) {
            continue; // every key has the same digit here: the order stays
        }
        let mut next = 0;
        for c in count.iter_mut() {
            (*c, next) = (next, next + *c);
        }
        for (&key, &i) in keys.iter().zip(&order) {
            let digit = (key >> (DIGIT as usize * pass)) as usize & (BUCKETS - 1);
            let at = count[digit] as usize;
            spare_keys[at] = key;
            spare_order[at] = i;
            count[digit] += 1;
        }
        std::mem::swap(&mut keys, &mut spare_keys);
        std::mem::swap(&mut order, &mut spare_order);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascending_is_stable_and_orders_negatives_and_signed_zeros() {
        // past no threshold: a radix sort at any length; ties (-0 and +0, the two 2.5s) keep
        // their order
        let values = [2.5, -1.0, 0.0, -0.0, 2.5, -7.25, 1e9];
        assert_eq!(ascending(&values), vec![5, 1, 2, 3, 0, 4, 6]);
        let many: Vec<f64> = (0..5000)
            .map(|i| f64::from((i * 7919) % 5000) - 2500.0)
            .collect();
        let order = ascending(&many);
        assert!(order
            .windows(2)
            .all(|w| many[w[0] as usize] < many[w[1] as usize]));
    }
}
