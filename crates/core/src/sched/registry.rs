//! Built-in policies by name: the one place policy names are defined.

use crate::error::{CoreError, Result};
use crate::sched::{Backfill, Heuristic, Policy, QueuePolicy, Snf};

/// Names of the built-in policies: the 17 heuristics, `snf`, `mars`, `random` and `slurm`.
pub fn policy_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Heuristic::ALL.iter().map(|h| h.name()).collect();
    names.extend(["snf", "mars", "random", "slurm"]);
    names.extend(POWER_POLICIES);
    names
}

/// Names that stand for a queue policy under a power manager (the SNF-ICON paper's names).
pub const POWER_POLICIES: [&str; 6] = [
    "fcfs-b+ipm",
    "snf+ipm",
    "snf-icon",
    "snf-icon-ng",
    "snf-icon-nf",
    "snf-icon-ngnf",
];

/// What a paper name stands for: (queue policy, backfill, power manager). `fcfs-b+ipm` is FCFS
/// with EASY under IPM (PSAS+IPM), `snf+ipm` SNF under IPM, `snf-icon*` SNF under ICON and its
/// ablations.
pub fn power_alias(name: &str) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match name {
        "fcfs-b+ipm" => ("fcfs", "easy", "ipm"),
        "snf+ipm" => ("snf", "none", "ipm"),
        "snf-icon" => ("snf", "none", "icon"),
        "snf-icon-ng" => ("snf", "none", "icon-ng"),
        "snf-icon-nf" => ("snf", "none", "icon-nf"),
        "snf-icon-ngnf" => ("snf", "none", "icon-ngnf"),
        _ => return None,
    })
}

/// SNF with its starvation guard: jobs waiting `max_wait` seconds or more go first and hold a
/// reservation (see [`Snf`]).
pub fn build_snf(max_wait: Option<f64>) -> Result<Box<dyn Policy>> {
    if max_wait.is_some_and(|w| !(w.is_finite() && w >= 0.0)) {
        return Err(CoreError::input(
            "the maximum wait must be a number of seconds >= 0",
        ));
    }
    Ok(Box::new(Snf::with_max_wait(max_wait)))
}

/// Builds a built-in policy. `window` is the number of queue-head jobs a heuristic sorts
/// (`None` = the whole queue); `backfill` is "easy" or "none". SNF has neither.
pub fn build_policy(name: &str, window: Option<usize>, backfill: &str) -> Result<Box<dyn Policy>> {
    build_policy_estimated(name, window, backfill, "requested")
}

/// What EASY can plan on ([`build_policy_estimated`]'s `estimates`).
pub const ESTIMATES: [&str; 2] = ["requested", "history"];

/// [`build_policy`] with what EASY plans on: `"requested"` times or `"history"` (predictions
/// from completed jobs, Tsafrir et al. 2007).
pub fn build_policy_estimated(
    name: &str,
    window: Option<usize>,
    backfill: &str,
    estimates: &str,
) -> Result<Box<dyn Policy>> {
    let backfill = Backfill::from_name(backfill)
        .ok_or_else(|| CoreError::input(format!("unknown backfill {backfill:?} (easy, none)")))?;
    if window == Some(0) {
        return Err(CoreError::input("window must be at least 1"));
    }
    let predicted = match estimates {
        "requested" => false,
        "history" => true,
        other => {
            return Err(CoreError::input(format!(
                "unknown estimates {other:?} ({})",
                ESTIMATES.join(", ")
            )))
        }
    };
    if name.eq_ignore_ascii_case("snf") {
        if predicted {
            return Err(CoreError::input(
                "snf does not backfill: it takes no estimates",
            ));
        }
        return Ok(Box::new(Snf::default()));
    }
    let heuristic = Heuristic::from_name(name).ok_or_else(|| {
        CoreError::input(format!(
            "unknown policy {name:?}; choose one of: {}",
            policy_names().join(", ")
        ))
    })?;
    let policy = QueuePolicy::new(heuristic, window.unwrap_or(usize::MAX), backfill);
    Ok(Box::new(if predicted {
        policy.with_predictions()
    } else {
        policy
    }))
}
