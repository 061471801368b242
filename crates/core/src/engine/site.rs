//! The site's nodes during a run: free nodes in each atom, and the nodes each running job
//! holds (`model::site` says what atoms are).

use std::collections::HashMap;

use crate::model::Site;

/// No atom: a job that holds nodes of several atoms is looked up in `SiteState::spread`.
const SPREAD: u32 = u32::MAX;

/// Free nodes per atom and each running job's nodes, as (atom, count) pairs.
#[derive(Debug, Clone, Default)]
pub struct SiteState {
    free: Vec<u32>,
    /// (atom, count) of each job holding nodes of one atom (the common case), by job index;
    /// `(SPREAD, 0)` for a job holding several atoms' nodes, `(0, 0)` for one holding none.
    single: Vec<(u32, u32)>,
    spread: HashMap<u32, Box<[(u32, u32)]>>,
}

impl SiteState {
    pub fn new(site: &Site, jobs: usize) -> Self {
        SiteState {
            free: site.atom_sizes().to_vec(),
            single: vec![(0, 0); jobs],
            spread: HashMap::new(),
        }
    }

    /// Free nodes of each atom.
    #[inline]
    pub fn free(&self) -> &[u32] {
        &self.free
    }

    /// The (atom, count) pairs of the nodes job `job` holds (empty when it holds none).
    #[inline]
    pub fn holdings(&self, job: u32) -> &[(u32, u32)] {
        let j = job as usize;
        match self.single[j] {
            (SPREAD, _) => &self.spread[&job],
            (_, 0) => &[],
            _ => std::slice::from_ref(&self.single[j]),
        }
    }

    /// Job `job` takes `takes` ((atom, count) pairs, each within the atom's free nodes).
    pub(crate) fn take(&mut self, job: u32, takes: &[(u32, u32)]) {
        for &(atom, count) in takes {
            self.free[atom as usize] -= count;
        }
        match takes {
            [one] => self.single[job as usize] = *one,
            _ => {
                self.single[job as usize] = (SPREAD, 0);
                self.spread.insert(job, takes.into());
            }
        }
    }

    /// Job `job` gives its nodes back.
    pub(crate) fn release(&mut self, job: u32) {
        let j = job as usize;
        match std::mem::take(&mut self.single[j]) {
            (SPREAD, _) => {
                for (atom, count) in self.spread.remove(&job).into_iter().flatten() {
                    self.free[atom as usize] += count;
                }
            }
            (atom, count) => self.free[atom as usize] += count,
        }
    }
}

/// The site as a policy sees it: the partitions and the nodes free and held now.
#[derive(Debug, Clone, Copy)]
pub struct SiteView<'a> {
    pub model: &'a Site,
    pub state: &'a SiteState,
}

impl SiteView<'_> {
    /// Free nodes of partition `p` given the free count of each atom.
    #[inline]
    pub fn free_in(&self, p: u32, free: &[u32]) -> u32 {
        (self.model.partition(p).atoms.iter())
            .map(|&a| free[a as usize])
            .sum()
    }

    /// Nodes of partition `p` that running job `job` holds.
    #[inline]
    pub fn held_in(&self, p: u32, job: u32) -> u32 {
        (self.state.holdings(job).iter())
            .filter(|&&(atom, _)| self.model.contains(p, atom))
            .map(|&(_, count)| count)
            .sum()
    }
}
