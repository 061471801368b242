//! Actions: a heuristic ordering of the first `window` waiting jobs, followed by EASY.

use crate::engine::View;
use crate::error::{CoreError, Result};
pub use crate::sched::Action;
use crate::sched::{Decision, Heuristic, Policy, QueuePolicy};

/// Windows of the paper: 2, 4, ..., 1024.
pub const PAPER_WINDOWS: [u32; 10] = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// The actions a search branches on, with one ready policy per action.
#[derive(Debug, Clone)]
pub struct ActionSet {
    actions: Vec<Action>,
    policies: Vec<QueuePolicy>,
}

impl ActionSet {
    /// FCFS plus every other heuristic with every window: the paper's 161 actions.
    pub fn paper() -> Self {
        ActionSet::new(&Heuristic::ALL, &PAPER_WINDOWS)
    }

    /// FCFS (once, if listed) plus each other heuristic with each window.
    pub fn new(heuristics: &[Heuristic], windows: &[u32]) -> Self {
        let mut actions = Vec::new();
        if heuristics.contains(&Heuristic::Fcfs) {
            actions.push(Action {
                heuristic: Heuristic::Fcfs,
                window: 1,
            });
        }
        for &h in heuristics.iter().filter(|&&h| h != Heuristic::Fcfs) {
            for &w in windows {
                actions.push(Action {
                    heuristic: h,
                    window: w,
                });
            }
        }
        ActionSet::from_actions(actions)
    }

    pub fn from_actions(actions: Vec<Action>) -> Self {
        let policies = actions.iter().map(Action::policy).collect();
        ActionSet { actions, policies }
    }

    /// Parses `"paper"`, or a comma-separated list of `heuristic` (all paper windows),
    /// `heuristic:window` and `heuristic:all`, e.g. `"fcfs,wfp3:256,sjf"`.
    pub fn parse(spec: &str) -> Result<Self> {
        let spec = spec.trim();
        if spec == "paper" || spec == "all" {
            return Ok(ActionSet::paper());
        }
        // Nothing given is read as something else: not "" as the paper's set, nor an empty
        // item skipped, nor "sjf:" as every paper window.
        if spec.split(',').all(|item| item.trim().is_empty()) {
            return Err(CoreError::input(
                "the action set is empty: give at least one action (e.g. 'paper' or \
                 'fcfs,sjf:256')",
            ));
        }
        let mut actions = Vec::new();
        for item in spec.split(',').map(str::trim) {
            if item.is_empty() {
                return Err(CoreError::input(format!(
                    "an empty action in {spec:?} (a comma too many?)"
                )));
            }
            let (name, window) = match item.split_once(':') {
                Some((_, window)) if window.trim().is_empty() => {
                    return Err(CoreError::input(format!(
                        "{item:?} has no window after ':' (give one such as 256, or all; \
                         without ':' a heuristic takes the paper's windows)"
                    )))
                }
                Some((name, window)) => (name.trim(), Some(window.trim())),
                None => (item, None),
            };
            let heuristic = Heuristic::ordering_from_name(name).ok_or_else(|| {
                CoreError::input(format!("unknown heuristic {name:?} in actions {spec:?}"))
            })?;
            let windows: Vec<u32> = match window {
                None if heuristic == Heuristic::Fcfs => vec![1],
                // Slurm orders its whole queue
                None if heuristic == Heuristic::Slurm => vec![u32::MAX],
                None => PAPER_WINDOWS.to_vec(),
                Some("all") => vec![u32::MAX],
                Some(w) => vec![w.parse::<u32>().ok().filter(|&w| w >= 1).ok_or_else(|| {
                    CoreError::input(format!("bad window {w:?} in actions {spec:?}"))
                })?],
            };
            for w in windows {
                let action = Action {
                    heuristic,
                    window: w,
                };
                if !actions.contains(&action) {
                    actions.push(action);
                }
            }
        }
        if actions.is_empty() {
            return Err(CoreError::input("the action set is empty"));
        }
        Ok(ActionSet::from_actions(actions))
    }

    pub fn len(&self) -> usize {
        self.actions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    pub fn get(&self, index: usize) -> Action {
        self.actions[index]
    }

    /// Applies action `index` to `view`, writing its decision.
    pub fn decide(&mut self, index: usize, view: &View, decision: &mut Decision) {
        decision.clear();
        self.policies[index].decide(view, decision);
    }

    /// The distinct outcomes of the actions at `view`, each with the first action giving it, its
    /// decision, how many actions give it and the best-known of them, in action order. Stops
    /// once `limit` distinct outcomes are found.
    pub fn outcomes(&mut self, view: &View, limit: usize) -> Vec<Branch> {
        let mut branches: Vec<Branch> = Vec::new();
        // Each effective action evaluated so far, with the branch it gave.
        let mut tried: Vec<(Action, usize)> = Vec::new();
        let mut decision = Decision::default();
        for index in 0..self.actions.len() {
            let effective = self.actions[index].effective(view.queue.len());
            let branch = match tried.iter().find(|(a, _)| *a == effective) {
                Some(&(_, branch)) => branch,
                None => {
                    self.decide(index, view, &mut decision);
                    let outcome = outcome_of(&decision);
                    let branch = match branches.iter().position(|b| b.outcome == outcome) {
                        Some(branch) => branch,
                        None => {
                            if branches.len() >= limit {
                                break;
                            }
                            branches.push(Branch {
                                action: index as u16,
                                outcome,
                                decision: decision.clone(),
                                actions: 0,
                                best: index as u16,
                            });
                            branches.len() - 1
                        }
                    };
                    tried.push((effective, branch));
                    branch
                }
            };
            let b = &mut branches[branch];
            b.actions += 1;
            if self.actions[index].familiarity() < self.actions[usize::from(b.best)].familiarity() {
                b.best = index as u16;
            }
        }
        branches
    }
}

/// One distinct outcome at a decision point.
#[derive(Debug, Clone)]
pub struct Branch {
    /// The first action (index in the set) that gives this outcome.
    pub action: u16,
    /// Jobs started (job-table indices), sorted.
    pub outcome: Vec<u32>,
    pub decision: Decision,
    /// How many actions of the set give this outcome.
    pub actions: u32,
    /// The best-known of them (see [`Action::familiarity`]).
    pub best: u16,
}

/// The set of jobs a decision starts, as sorted job indices.
pub fn outcome_of(decision: &Decision) -> Vec<u32> {
    let mut jobs: Vec<u32> = decision.starts.iter().map(|s| s.job).collect();
    jobs.sort_unstable();
    jobs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_set_has_161_actions() {
        let set = ActionSet::paper();
        assert_eq!(set.len(), 161);
        assert_eq!(set.get(0).heuristic, Heuristic::Fcfs);
        assert_eq!(
            set.get(1),
            Action {
                heuristic: Heuristic::Lcfs,
                window: 2
            }
        );
    }

    #[test]
    fn parses_action_lists() {
        let set = ActionSet::parse("fcfs, wfp3:256, sjf").unwrap();
        assert_eq!(set.len(), 1 + 1 + 10);
        assert_eq!(set.get(1).name(), "wfp3:256");
        assert!(ActionSet::parse("wfp9").is_err());
        assert!(ActionSet::parse("sjf:0").is_err());
        // nothing given is an error, never read as something else
        for empty in ["", " ", ",", "fcfs,,sjf", "sjf:", "fcfs, sjf: "] {
            assert!(ActionSet::parse(empty).is_err(), "{empty:?}");
        }
        assert_eq!(ActionSet::parse("lrf:all").unwrap().get(0).window, u32::MAX);
    }
}
