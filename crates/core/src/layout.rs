//! Named nodes for a schedule that counts them: where the engine only counts a job's nodes
//! (whole nodes, in one pool or per atom of a site), a chart or a Batsim `jobs.csv` still
//! needs each job on named nodes. Any naming that keeps each pool's count at every instant is
//! the same schedule; this one gives each job the lowest-numbered nodes free in its pool at its
//! start, and states that are no job (down, asleep) the highest, so that jobs stay in one
//! block where they can.

use std::collections::BTreeSet;

use crate::engine::RunLog;
use crate::error::{CoreError, Result};
use crate::model::{Downtime, Site};

/// Something holding `count` nodes of pool `pool` over `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hold {
    pub start: f64,
    pub end: f64,
    pub pool: u32,
    pub count: u32,
    /// Take the highest-numbered free nodes (states that are no job), not the lowest.
    pub from_top: bool,
}

/// The nodes of each hold (indices inside its pool, ascending), for pools of `sizes` nodes.
///
/// At an instant, every hold ending then gives its nodes back before any hold starting then
/// takes some; holds of no length (a job that ends as it starts, which the engine started and
/// ended before the next scan of that instant) take first and give their nodes back at once;
/// the others take in their order in `holds`. Fails when a pool has fewer nodes free
/// than a hold takes: the holds were no schedule of these pools.
pub fn lay_out(sizes: &[u32], holds: &[Hold]) -> Result<Vec<Vec<u32>>> {
    let mut free: Vec<BTreeSet<u32>> = sizes.iter().map(|&n| (0..n).collect()).collect();
    let mut takes: Vec<usize> = (0..holds.len()).collect();
    let lasting = |h: usize| holds[h].end > holds[h].start;
    takes.sort_by(|&a, &b| {
        (holds[a].start.total_cmp(&holds[b].start))
            .then(lasting(a).cmp(&lasting(b)))
            .then(a.cmp(&b))
    });
    let mut releases: Vec<usize> = (0..holds.len()).filter(|&h| lasting(h)).collect();
    releases.sort_by(|&a, &b| holds[a].end.total_cmp(&holds[b].end).then(a.cmp(&b)));
    let mut nodes: Vec<Vec<u32>> = vec![Vec::new(); holds.len()];
    let mut next_release = 0;
    for &h in &takes {
        let hold = holds[h];
        while let Some(&r) = releases.get(next_release) {
            if holds[r].end > hold.start {
                break;
            }
            let pool = &mut free[holds[r].pool as usize];
            pool.extend(nodes[r].iter().copied());
            next_release += 1;
        }
        let pool = free.get_mut(hold.pool as usize).ok_or_else(|| {
            CoreError::input(format!(
                "hold {h}: no pool {} of {}",
                hold.pool,
                sizes.len()
            ))
        })?;
        if (pool.len() as u64) < u64::from(hold.count) {
            return Err(CoreError::input(format!(
                "hold {h} takes {} nodes of pool {} at {} but {} are free",
                hold.count,
                hold.pool,
                hold.start,
                pool.len()
            )));
        }
        let mut taken: Vec<u32> = (0..hold.count)
            .filter_map(|_| {
                if hold.from_top {
                    pool.pop_last()
                } else {
                    pool.pop_first()
                }
            })
            .collect();
        taken.sort_unstable();
        if !lasting(h) {
            pool.extend(taken.iter().copied());
        }
        nodes[h] = taken;
    }
    Ok(nodes)
}

/// The nodes of each start on a site of whole nodes, as ranges (`0-3,7`): per job its last
/// start's (empty: it never started), and per killed attempt of `log.lost_attempts` its own.
/// The engine counts the nodes each start takes in each atom (`log.site_takes`); here they are
/// named inside their atoms, while every atom a downtime window takes down is held whole over
/// the window (overlapping windows as one).
pub fn site_nodes(
    site: &Site,
    windows: &[Downtime],
    log: &RunLog,
) -> Result<(Vec<String>, Vec<String>)> {
    let atoms = site.atoms();
    let mut down: Vec<Vec<(f64, f64)>> = vec![Vec::new(); atoms];
    for w in windows {
        for a in site.window_atoms(w) {
            down[a as usize].push((w.start, w.end));
        }
    }
    let mut holds = Vec::new();
    for (atom, spans) in down.iter_mut().enumerate() {
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64)> = Vec::new();
        for &(start, end) in spans.iter() {
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        holds.extend(merged.into_iter().map(|(start, end)| Hold {
            start,
            end,
            pool: atom as u32,
            count: site.atom_sizes()[atom],
            from_top: true,
        }));
    }
    let windows_held = holds.len();
    let lost: std::collections::HashMap<(u32, u64), (usize, f64)> = (log.lost_attempts.iter())
        .enumerate()
        .map(|(i, &(job, start, end))| ((job, start.to_bits()), (i, end)))
        .collect();
    // (job, attempt: the killed attempt's index, or None for the last start) of each take
    let mut owners = Vec::new();
    for (job, start, takes) in &log.site_takes {
        let (attempt, end) = match lost.get(&(*job, start.to_bits())) {
            Some(&(i, end)) => (Some(i), end),
            None => (None, log.end[*job as usize]),
        };
        for &(atom, count) in takes.iter() {
            holds.push(Hold {
                start: *start,
                end,
                pool: atom,
                count,
                from_top: false,
            });
            owners.push((*job, attempt));
        }
    }
    let sizes = site.atom_sizes();
    let named = lay_out(sizes, &holds)?;
    let atom_nodes: Vec<Vec<u32>> = (0..atoms as u32).map(|a| site.atom_nodes(a)).collect();
    let mut last: Vec<Vec<u32>> = vec![Vec::new(); log.start.len()];
    let mut killed: Vec<Vec<u32>> = vec![Vec::new(); log.lost_attempts.len()];
    for ((job, attempt), (hold, local)) in owners
        .iter()
        .zip(holds[windows_held..].iter().zip(&named[windows_held..]))
    {
        let into = match attempt {
            Some(i) => &mut killed[*i],
            None => &mut last[*job as usize],
        };
        let nodes = &atom_nodes[hold.pool as usize];
        into.extend(local.iter().map(|&i| nodes[i as usize]));
    }
    let ranges = |mut nodes: Vec<u32>| {
        nodes.sort_unstable();
        index_ranges(&nodes)
    };
    Ok((
        last.into_iter().map(ranges).collect(),
        killed.into_iter().map(ranges).collect(),
    ))
}

/// Ascending node indices as ranges: `0-3,7` (empty: none).
pub fn index_ranges(nodes: &[u32]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < nodes.len() {
        let mut j = i;
        while j + 1 < nodes.len() && nodes[j + 1] == nodes[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        if j > i {
            out.push_str(&format!("{}-{}", nodes[i], nodes[j]));
        } else {
            out.push_str(&nodes[i].to_string());
        }
        i = j + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(start: f64, end: f64, count: u32) -> Hold {
        Hold {
            start,
            end,
            pool: 0,
            count,
            from_top: false,
        }
    }

    #[test]
    fn jobs_take_the_lowest_free_nodes_and_states_the_highest() {
        // 6 nodes: a down window of 2 from 0 to 10, A (3 nodes, 0-5), B (1 node, 2-8),
        // C (2 nodes, 5-9) takes A's freed nodes 0 and 1, D (3 nodes, 10-12) after the window.
        let down = Hold {
            from_top: true,
            ..job(0.0, 10.0, 2)
        };
        let holds = [
            down,
            job(0.0, 5.0, 3),
            job(2.0, 8.0, 1),
            job(5.0, 9.0, 2),
            job(10.0, 12.0, 3),
        ];
        let nodes = lay_out(&[6], &holds).unwrap();
        assert_eq!(
            nodes,
            vec![
                vec![4, 5],
                vec![0, 1, 2],
                vec![3],
                vec![0, 1],
                vec![0, 1, 2]
            ]
        );
    }

    #[test]
    fn ends_give_nodes_back_before_starts_of_the_same_instant_take_them() {
        // 2 nodes: B and D start at 4 as A ends at 4; C of no length at 4 takes first and
        // gives back at once (listed after B, it still finds a node).
        let holds = [
            job(0.0, 4.0, 2),
            job(4.0, 6.0, 1),
            job(4.0, 4.0, 1),
            job(4.0, 7.0, 1),
        ];
        let nodes = lay_out(&[2], &holds).unwrap();
        assert_eq!(nodes, vec![vec![0, 1], vec![0], vec![0], vec![1]]);
        let full = [job(0.0, 4.0, 2), job(4.0, 6.0, 2), job(4.0, 4.0, 1)];
        assert_eq!(lay_out(&[2], &full).unwrap()[2], vec![0]);
    }

    #[test]
    fn each_pool_names_its_own_nodes() {
        let mut other = job(0.0, 3.0, 2);
        other.pool = 1;
        let nodes = lay_out(&[1, 2], &[job(0.0, 3.0, 1), other]).unwrap();
        assert_eq!(nodes, vec![vec![0], vec![0, 1]]);
    }

    #[test]
    fn more_nodes_held_than_a_pool_has_is_no_schedule() {
        let err = lay_out(&[3], &[job(0.0, 5.0, 2), job(4.0, 6.0, 2)]).unwrap_err();
        assert!(err
            .to_string()
            .contains("takes 2 nodes of pool 0 at 4 but 1 are free"));
        assert!(lay_out(&[3], &[job(0.0, 5.0, 2), job(5.0, 6.0, 3)]).is_ok());
        let mut stray = job(0.0, 1.0, 1);
        stray.pool = 2;
        assert!(lay_out(&[3], &[stray])
            .unwrap_err()
            .to_string()
            .contains("no pool 2"));
    }

    #[test]
    fn node_lists_print_as_ranges() {
        assert_eq!(index_ranges(&[0, 1, 2, 3, 7, 9, 10]), "0-3,7,9-10");
        assert_eq!(index_ranges(&[5]), "5");
        assert_eq!(index_ranges(&[]), "");
    }
}
