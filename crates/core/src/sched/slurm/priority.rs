//! A job's multifactor priority (`set_priority_factors` and `_get_priority_internal` in Slurm
//! 22.05's `priority_multifactor.c`): the weighted sum of its factors, minus its nice value, at
//! least 1, truncated to 32 bits.

use crate::sched::slurm::config::PrioritySettings;

/// The normalised factors of one job (each in [0, 1]) and its nice value.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Factors {
    pub age: f64,
    pub fairshare: f64,
    pub job_size: f64,
    pub partition: f64,
    pub qos: f64,
    pub nice: i64,
    /// `PriorityWeightTRES`'s term: already weighted (points).
    pub tres: f64,
}

/// The age factor at `now` of a job eligible since `eligible`: whole seconds waited over
/// `PriorityMaxAge`, 1 from then on.
pub fn age(settings: &PrioritySettings, now: f64, eligible: f64) -> f64 {
    let waited = (now - eligible).floor().max(0.0);
    if waited < settings.max_age {
        waited / settings.max_age
    } else {
        1.0
    }
}

/// The job-size factor of a job of `nodes` (its minimum) and `cpus`, requesting `limit` s, on a
/// cluster of `cluster_nodes` nodes and `cluster_cpus` CPUs.
pub fn job_size(
    settings: &PrioritySettings,
    nodes: u32,
    cpus: u32,
    limit: f64,
    cluster_nodes: u32,
    cluster_cpus: u64,
) -> f64 {
    let (n, c) = (f64::from(nodes), f64::from(cpus));
    let (total_nodes, total_cpus) = (f64::from(cluster_nodes), cluster_cpus as f64);
    let factor = if settings.small_relative_to_time {
        // CPUs (at least the nodes' average CPUs) per minute of time limit, over the cluster's
        let mut size = (n * total_cpus / total_nodes).max(c);
        size /= (limit / 60.0).ceil().max(1.0);
        size /= total_cpus;
        if settings.favor_small {
            1.0 - size
        } else {
            size
        }
    } else if settings.favor_small {
        ((total_nodes - n) / total_nodes + (total_cpus - c) / total_cpus) / 2.0
    } else {
        (n / total_nodes + c / total_cpus) / 2.0
    };
    factor.clamp(0.0, 1.0)
}

/// The priority from the factors (`_get_priority_internal`).
pub fn priority(settings: &PrioritySettings, f: &Factors) -> u32 {
    let s = settings;
    let sum = f.age * s.weight_age
        + f.fairshare * s.weight_fairshare
        + f.job_size * s.weight_job_size
        + f.partition * s.weight_partition
        + f.qos * s.weight_qos
        + f.tres
        - f.nice as f64;
    if sum < 1.0 {
        1
    } else if sum >= 4_294_967_295.0 {
        u32::MAX
    } else {
        sum as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> PrioritySettings {
        PrioritySettings {
            weight_age: 1000.0,
            weight_fairshare: 10000.0,
            weight_job_size: 100.0,
            weight_partition: 100.0,
            weight_qos: 50.0,
            max_age: 600.0,
            ..PrioritySettings::default()
        }
    }

    #[test]
    fn age_grows_by_whole_seconds_and_saturates_at_max_age() {
        let s = settings();
        assert_eq!(age(&s, 100.0, 100.0), 0.0);
        assert_eq!(age(&s, 400.9, 100.0), 0.5); // 300 whole seconds of 600
        assert_eq!(age(&s, 700.0, 100.0), 1.0);
        assert_eq!(age(&s, 5000.0, 100.0), 1.0);
    }

    #[test]
    fn job_size_favours_large_jobs_unless_told_otherwise() {
        let mut s = settings();
        // 2 of 4 nodes, 8 of 16 CPUs: (0.5 + 0.5) / 2
        assert_eq!(job_size(&s, 2, 8, 600.0, 4, 16), 0.5);
        // 1 node, 4 CPUs: (0.25 + 0.25) / 2
        assert_eq!(job_size(&s, 1, 4, 600.0, 4, 16), 0.25);
        s.favor_small = true;
        // ((4 - 1) / 4 + (16 - 4) / 16) / 2
        assert_eq!(job_size(&s, 1, 4, 600.0, 4, 16), 0.75);
        assert_eq!(job_size(&s, 4, 16, 600.0, 4, 16), 0.0);
    }

    #[test]
    fn the_sum_is_truncated_nice_subtracted_and_never_below_one() {
        let s = settings();
        let f = Factors {
            age: 0.5,        // 500
            fairshare: 0.25, // 2500
            job_size: 0.333, // 33.3
            partition: 1.0,  // 100
            qos: 0.5,        // 25
            nice: 0,
            tres: 0.0,
        };
        assert_eq!(priority(&s, &f), 3158);
        // a TRES term is points already: added as it is
        assert_eq!(priority(&s, &Factors { tres: 42.5, ..f }), 3200);
        assert_eq!(priority(&s, &Factors { nice: 158, ..f }), 3000);
        assert_eq!(priority(&s, &Factors { nice: 10_000, ..f }), 1);
        assert_eq!(priority(&s, &Factors { nice: -100, ..f }), 3258);
    }
}
