//! Where a job fits on shared nodes in a scan: a view of what is free, the nodes it may not
//! use (announced windows it would run into), and Slurm's placement over a set's open nodes.

use crate::model::{Request, SharedNodes};
use crate::packing::usage::open_nodes;
use crate::packing::{select, Allocation, Free, Tallies, Usage};

/// A view of what is free (over the engine's usage `base`, differing on the nodes of
/// `touched`), with its sets' tallies.
pub(super) struct Place<'a, F: Free> {
    pub(super) base: &'a Usage,
    pub(super) free: &'a F,
    pub(super) touched: [&'a [u32]; 2],
    pub(super) tallies: &'a Tallies,
    /// Nodes the job may not use (bits): those of announced windows it would run into.
    pub(super) excluded: Option<&'a [u64]>,
}

impl<F: Free> Clone for Place<'_, F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F: Free> Copy for Place<'_, F> {}

/// Scratch for the open nodes of a set.
#[derive(Debug, Clone, Default)]
pub(super) struct Scratch {
    bits: Vec<u64>,
    nodes: Vec<u32>,
}

/// Slurm's placement of `request` in set `set` of `place`, on the set's open nodes alone
/// (full nodes and nodes held whole offer nothing: they only end runs, as gaps do).
pub(super) fn place_in<F: Free>(
    model: &SharedNodes,
    place: &Place<F>,
    set: u32,
    request: &Request,
    scratch: &mut Scratch,
) -> Option<Allocation> {
    let bits = model.set_bits(set);
    open_nodes(
        place.base,
        place.free,
        bits,
        &place.touched,
        &mut scratch.bits,
        &mut scratch.nodes,
    );
    if let Some(excluded) = place.excluded {
        scratch.nodes.retain(|&n| !bit(excluded, n));
    }
    let limits = model.sets[set as usize].limits;
    select(
        &model.resources,
        place.free,
        &scratch.nodes,
        request,
        limits,
    )
}

/// The first of `sets` where `request` fits `place`, and what it takes there.
pub(super) fn fit<F: Free>(
    model: &SharedNodes,
    place: &Place<F>,
    sets: &[u32],
    request: &Request,
    scratch: &mut Scratch,
) -> Option<(u32, Allocation)> {
    sets.iter().find_map(|&p| {
        if !place.tallies.may_fit(model, p, request) {
            return None;
        }
        place_in(model, place, p, request, scratch).map(|a| (p, a))
    })
}

/// Whether bit `n` is set.
#[inline]
pub(super) fn bit(bits: &[u64], n: u32) -> bool {
    bits[n as usize / 64] >> (n % 64) & 1 == 1
}

/// The nodes a bit set may hold.
pub(super) fn nodes_of(bits: &[u64]) -> u32 {
    bits.len() as u32 * 64
}

/// [`SharedScan::exclusion`] on `announced` windows, into `excluded`.
pub(super) fn exclusion(
    announced: &[(f64, f64, Vec<u64>)],
    excluded: &mut Vec<u64>,
    from: f64,
    until: f64,
) -> bool {
    let mut any = false;
    for (start, end, bits) in announced {
        if *start < until && *end > from {
            if !any {
                excluded.clear();
                excluded.resize(bits.len(), 0);
                any = true;
            }
            for (e, b) in excluded.iter_mut().zip(bits) {
                *e |= b;
            }
        }
    }
    any
}
