//! When Slurm's periodic work happens: the priority recalculation every `PriorityCalcPeriod`,
//! the main scheduler's full pass every `sched_interval`, a backfill cycle every `bf_interval`,
//! each on a grid of multiples of its period from the replay clock's 0 (slurmctld's threads
//! sleep their period between runs).

/// `x` rounded down to a whole number: a conversion where it is exact (the backfill floors
/// times for every candidate start, and `f64::floor` is a call into libm on baseline x86-64).
#[inline]
pub fn floor(x: f64) -> f64 {
    if (0.0..9.0e15).contains(&x) {
        (x as i64) as f64
    } else {
        x.floor()
    }
}

/// The first multiple of `period` after `t`.
#[inline]
pub fn after(t: f64, period: f64) -> f64 {
    (floor(t / period) + 1.0) * period
}

/// The last multiple of `period` at or before `t`.
#[inline]
pub fn at_or_before(t: f64, period: f64) -> f64 {
    floor(t / period) * period
}

/// Whether `t` is a multiple of `period` (a timer set by [`after`] lands exactly on one).
#[inline]
pub fn on_grid(t: f64, period: f64) -> bool {
    at_or_before(t, period) == t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_points_are_multiples_of_the_period() {
        assert_eq!(after(0.0, 30.0), 30.0);
        assert_eq!(after(29.9, 30.0), 30.0);
        assert_eq!(after(30.0, 30.0), 60.0);
        assert_eq!(at_or_before(59.0, 30.0), 30.0);
        assert!(on_grid(after(1234.5, 30.0), 30.0));
        assert!(!on_grid(1234.5, 30.0));
        // below 0 and past the exact range, as f64::floor
        for x in [-0.5, -3.0, -1e17, 2.5, 1e17, 0.0] {
            assert_eq!(floor(x), x.floor());
        }
    }
}
