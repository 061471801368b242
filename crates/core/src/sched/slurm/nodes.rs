//! The nodes as Slurm's schedulers see them at one invocation: the node-space map from now on
//! (what runs, until its time limit; what is down, until it comes back; maintenance announced
//! ahead), over the site's atoms or one pool's single atom.

use crate::engine::View;
use crate::sched::slurm::space::Space;

/// Each partition's atoms (one pool: one partition of one atom).
pub fn partition_atoms<'a>(view: &View<'a>, partition: u32) -> &'a [u32] {
    match view.site {
        Some(site) => &site.model.partition(partition).atoms,
        None => &[0],
    }
}

/// Builds `space` for `view`: free nodes now, the releases of running jobs at their time
/// limits (`round` applied to each release time), nodes down until they come back, and
/// announced maintenance. `releases` is scratch.
pub fn build(
    view: &View,
    space: &mut Space,
    releases: &mut Vec<(f64, u32, u32)>,
    round: impl Fn(f64) -> f64,
) {
    releases.clear();
    let now = view.now;
    match view.site {
        None => {
            space.reset(now, &[view.free]);
            for r in view.running {
                releases.push((round(view.estimated_end(r)), 0, r.nodes));
            }
            for &(end, nodes) in view.down_windows {
                releases.push((end, 0, nodes));
            }
            space.release_all(releases);
            for w in view.announced.iter().filter(|w| w.start > now) {
                space.maintenance(w.start, w.end, 0, w.nodes_down(view.machine_nodes));
            }
        }
        Some(site) => {
            let (model, state) = (site.model, site.state);
            space.reset(now, state.free());
            for atom in 0..model.atoms() as u32 {
                for &(end, _, count) in state.running_in(atom) {
                    releases.push((round(end.max(now)), atom, count));
                }
                if let Some(back) = state.down(atom) {
                    releases.push((back, atom, model.atom_sizes()[atom as usize]));
                }
            }
            space.release_all(releases);
            for w in view.announced.iter().filter(|w| w.start > now) {
                for atom in model.window_atoms(w) {
                    let size = model.atom_sizes()[atom as usize];
                    space.maintenance(w.start, w.end, atom, size);
                }
            }
        }
    }
}
