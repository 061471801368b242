//! What each built-in policy takes: the facts the Python specs and the command line check
//! options against, stated once beside the registry.

use crate::sched::registry::{policy_names, POWER_POLICIES};

/// What a policy uses of the common options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// A look-ahead policy: it takes the search options (`mars`, `random`).
    pub searches: bool,
    /// It sorts a window of the queue's head (`--window`).
    pub window: bool,
    /// The backfilling it always uses, when the user cannot choose (`None`: `--backfill`).
    pub backfill: Option<&'static str>,
    /// A power manager: it switches nodes on and off and takes the power options.
    pub power: bool,
}

/// The capabilities of the built-in policy `name`, `None` when there is no such policy.
pub fn capabilities(name: &str) -> Option<Capabilities> {
    if !policy_names().contains(&name) {
        return None;
    }
    Some(match name {
        "mars" | "random" => Capabilities {
            searches: true,
            window: false,
            backfill: Some("easy"), // every action ends with EASY
            power: false,
        },
        "slurm" => Capabilities {
            searches: false,
            window: false,
            backfill: Some("slurm"), // Slurm's own backfill scheduler
            power: false,
        },
        "snf" => Capabilities {
            searches: false,
            window: false,
            backfill: Some("none"), // stops at the first job that does not fit
            power: false,
        },
        power if POWER_POLICIES.contains(&power) => Capabilities {
            searches: false,
            window: false,
            // FCFS/B+IPM backfills (PSAS+IPM); the SNF managers never do
            backfill: Some(if power.starts_with("fcfs") {
                "easy"
            } else {
                "none"
            }),
            power: true,
        },
        _ => Capabilities {
            searches: false,
            window: true,
            backfill: None,
            power: false,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_has_capabilities_and_only_heuristics_take_a_window() {
        for name in policy_names() {
            let c = capabilities(name).expect(name);
            assert_eq!(
                c.window,
                crate::Heuristic::from_name(name).is_some(),
                "{name}"
            );
            assert_eq!(c.backfill.is_none(), c.window, "{name}");
        }
        assert!(capabilities("mars").unwrap().searches);
        assert_eq!(capabilities("fcfs-b+ipm").unwrap().backfill, Some("easy"));
        assert_eq!(capabilities("snf-icon").unwrap().backfill, Some("none"));
        assert!(capabilities("snf-icon-ng").unwrap().power);
        assert_eq!(capabilities("nope"), None);
    }
}
