//! Slurm's settings, as numbers, with Slurm 22.05's defaults (slurm.conf(5)): the multifactor
//! priority's weights and parameters (`Priority*`) and the schedulers' (`SchedulerParameters`).
//! Python reads them from a `slurm.conf`; times here are seconds.

use crate::error::{CoreError, Result};

/// How fair-share ranks associations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FairShare {
    /// Fair Tree (Slurm's default since 19.05).
    #[default]
    FairTree,
    /// The classic formula, `2^(-usage_effective / shares_norm)` (`PriorityFlags=NO_FAIR_TREE`).
    Classic,
}

/// The multifactor priority's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PrioritySettings {
    pub weight_age: f64,
    pub weight_fairshare: f64,
    pub weight_job_size: f64,
    pub weight_partition: f64,
    pub weight_qos: f64,
    pub weight_assoc: f64,
    /// `PriorityMaxAge` (s).
    pub max_age: f64,
    /// `PriorityDecayHalfLife` (s); 0: no decay.
    pub decay_half_life: f64,
    /// `PriorityCalcPeriod` (s).
    pub calc_period: f64,
    /// `PriorityFavorSmall`.
    pub favor_small: bool,
    /// `PriorityFlags=SMALL_RELATIVE_TO_TIME`.
    pub small_relative_to_time: bool,
    pub fair_share: FairShare,
    /// `FairShareDampeningFactor` (classic fair-share only).
    pub dampening: f64,
    /// Whether a job's usage since the last recalculation is charged when it ends: only with
    /// `AccountingStorageEnforce=limits` (`priority_p_job_end` is called from the limits' code);
    /// otherwise that last stretch is never charged.
    pub charge_at_end: bool,
}

impl Default for PrioritySettings {
    fn default() -> Self {
        PrioritySettings {
            weight_age: 0.0,
            weight_fairshare: 0.0,
            weight_job_size: 0.0,
            weight_partition: 0.0,
            weight_qos: 0.0,
            weight_assoc: 0.0,
            max_age: 7.0 * 86400.0,
            decay_half_life: 7.0 * 86400.0,
            calc_period: 300.0,
            favor_small: false,
            small_relative_to_time: false,
            fair_share: FairShare::FairTree,
            dampening: 1.0,
            charge_at_end: false,
        }
    }
}

/// The main scheduler's and the backfill scheduler's settings (`SchedulerParameters`).
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerSettings {
    /// `sched_interval` (s): the main scheduler's full pass; `None`: disabled (-1).
    pub sched_interval: Option<f64>,
    /// `default_queue_depth`: jobs an event-triggered main pass tests.
    pub default_queue_depth: usize,
    /// `bf_interval` (s); `None`: backfill disabled (-1, or `SchedulerType=sched/builtin`).
    pub bf_interval: Option<f64>,
    /// `bf_window` (s; the option is in minutes).
    pub bf_window: f64,
    /// `bf_resolution` (s).
    pub bf_resolution: f64,
    /// `bf_max_job_test`.
    pub bf_max_job_test: usize,
    /// `bf_max_job_user` (0: no limit).
    pub bf_max_job_user: usize,
    /// `bf_continue`: no effect on a simulated cycle (it never yields its locks).
    pub bf_continue: bool,
}

impl Default for SchedulerSettings {
    fn default() -> Self {
        SchedulerSettings {
            sched_interval: Some(60.0),
            default_queue_depth: 100,
            bf_interval: Some(30.0),
            bf_window: 1440.0 * 60.0,
            bf_resolution: 60.0,
            bf_max_job_test: 500,
            bf_max_job_user: 0,
            bf_continue: false,
        }
    }
}

impl PrioritySettings {
    pub fn validate(&self) -> Result<()> {
        let weights = [
            ("PriorityWeightAge", self.weight_age),
            ("PriorityWeightFairshare", self.weight_fairshare),
            ("PriorityWeightJobSize", self.weight_job_size),
            ("PriorityWeightPartition", self.weight_partition),
            ("PriorityWeightQOS", self.weight_qos),
            ("PriorityWeightAssoc", self.weight_assoc),
        ];
        for (name, w) in weights {
            if !(w.is_finite() && (0.0..=f64::from(u32::MAX)).contains(&w)) {
                return Err(CoreError::input(format!(
                    "{name} must be a whole number from 0 to 4294967295, not {w}"
                )));
            }
        }
        for (name, v, min) in [
            ("PriorityMaxAge", self.max_age, 0.0),
            ("PriorityDecayHalfLife", self.decay_half_life, 0.0),
            ("PriorityCalcPeriod", self.calc_period, 1.0),
        ] {
            if !(v.is_finite() && v >= min) {
                return Err(CoreError::input(format!(
                    "{name} must be at least {min} s, not {v}"
                )));
            }
        }
        if !(self.dampening.is_finite() && self.dampening >= 1.0) {
            return Err(CoreError::input(format!(
                "FairShareDampeningFactor must be at least 1, not {}",
                self.dampening
            )));
        }
        Ok(())
    }
}

impl SchedulerSettings {
    pub fn validate(&self) -> Result<()> {
        let positive = |name: &str, v: Option<f64>| -> Result<()> {
            match v {
                Some(v) if !(v.is_finite() && v >= 1.0) => Err(CoreError::input(format!(
                    "{name} must be at least 1 s (or -1: disabled), not {v}"
                ))),
                _ => Ok(()),
            }
        };
        positive("sched_interval", self.sched_interval)?;
        positive("bf_interval", self.bf_interval)?;
        positive("bf_resolution", Some(self.bf_resolution))?;
        positive("bf_window", Some(self.bf_window))?;
        if self.bf_max_job_test == 0 || self.default_queue_depth == 0 {
            return Err(CoreError::input(
                "bf_max_job_test and default_queue_depth must be at least 1",
            ));
        }
        Ok(())
    }
}
