//! The backfill's node-space map when jobs share nodes (`node_space_map_t` in Slurm 22.05's
//! `backfill.c`): from now to the end of the backfill window, time slots each with the nodes
//! a reservation made in this cycle holds. It knows nodes only: a reserved job holds its nodes
//! whole for its slots, whatever part of them it needs (the running jobs are not in it: the
//! select plugin's will-run test knows them resource by resource).

/// Bits of nodes: bit `n` of word `n / 64` for node `n`.
pub type Bits = [u64];

/// One slot: `[begin, end)` and the nodes reserved in it.
#[derive(Debug, Clone, PartialEq)]
struct Slot {
    begin: f64,
    end: f64,
    reserved: Vec<u64>,
}

/// The map: slots in time order, covering `[now, window end)` without gaps.
#[derive(Debug, Clone, Default)]
pub struct NodeMap {
    words: usize,
    slots: Vec<Slot>,
    /// Spare bit vectors of slots dropped (kept to avoid allocating again).
    spare: Vec<Vec<u64>>,
}

impl NodeMap {
    /// The map of a cycle at `now`: nothing reserved until `window_end` (at least `now`), for
    /// `nodes` nodes.
    pub fn reset(&mut self, now: f64, window_end: f64, nodes: usize) {
        let words = nodes.div_ceil(64);
        self.words = words;
        for slot in self.slots.drain(..) {
            self.spare.push(slot.reserved);
        }
        let mut reserved = self.spare.pop().unwrap_or_default();
        reserved.clear();
        reserved.resize(words, 0);
        self.slots.push(Slot {
            begin: now,
            end: window_end.max(now),
            reserved,
        });
    }

    fn now(&self) -> f64 {
        self.slots[0].begin
    }

    /// The nodes of `usable` free of every reservation over `[start, end]` (a slot beginning
    /// at `end` included, as Slurm tests them), into `avail`; returns Slurm's `later_start`: the
    /// end of the first slot reaching past `start` after which a node of `usable` is free that
    /// was not free so far (where trying again may give an earlier start), if there is one.
    pub fn avail(&self, usable: &Bits, start: f64, end: f64, avail: &mut Vec<u64>) -> Option<f64> {
        avail.clear();
        avail.extend_from_slice(usable);
        let mut later = None;
        for (j, slot) in self.slots.iter().enumerate() {
            if slot.end > start && later.is_none() {
                if let Some(next) = self.slots.get(j + 1) {
                    // a node usable and free next that is not free so far nor in this slot
                    let gains = (usable.iter().zip(&next.reserved))
                        .zip(avail.iter().zip(&slot.reserved))
                        .any(|((u, n), (a, r))| u & !n & !(a & !r) != 0);
                    if gains {
                        later = Some(slot.end);
                    }
                }
            }
            if slot.end <= start {
                continue;
            }
            if slot.begin > end {
                break;
            }
            for (a, r) in avail.iter_mut().zip(&slot.reserved) {
                *a &= !r;
            }
        }
        later
    }

    /// Whether a reservation over `[start, end)` overlaps one of `nodes` (Slurm's
    /// `_test_resv_overlap`).
    pub fn overlaps(&self, nodes: &[u32], start: f64, end: f64) -> bool {
        (self.slots.iter())
            .filter(|s| s.end > start && s.begin < end)
            .any(|s| nodes.iter().any(|&n| bit(&s.reserved, n)))
    }

    /// Reserves `nodes` whole over `[start, end)`: `start` no earlier than the map's, and the
    /// reservation at least `resolution` long (`_add_reservation`); what lies past the window
    /// is not kept.
    pub fn reserve(&mut self, nodes: &[u32], start: f64, end: f64, resolution: f64) {
        let start = start.max(self.now());
        let end = end.max(start + resolution);
        let Some(first) = self.split(start) else {
            return; // past the window
        };
        let last = self.split(end).unwrap_or(self.slots.len());
        for slot in &mut self.slots[first..last] {
            for &n in nodes {
                slot.reserved[n as usize / 64] |= 1 << (n % 64);
            }
        }
    }

    /// The slot beginning at `t` (a slot split in two there if one spans it); `None` at or
    /// past the window's end.
    fn split(&mut self, t: f64) -> Option<usize> {
        let j = self.slots.iter().position(|s| s.end > t)?;
        if self.slots[j].begin == t {
            return Some(j);
        }
        let mut reserved = self.spare.pop().unwrap_or_default();
        reserved.clear();
        reserved.extend_from_slice(&self.slots[j].reserved);
        let end = std::mem::replace(&mut self.slots[j].end, t);
        self.slots.insert(
            j + 1,
            Slot {
                begin: t,
                end,
                reserved,
            },
        );
        Some(j + 1)
    }
}

/// Whether node `n` is set in `bits`.
#[inline]
pub fn bit(bits: &Bits, n: u32) -> bool {
    bits[n as usize / 64] & (1 << (n % 64)) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(bits: &[u64], n: u32) -> Vec<u32> {
        (0..n).filter(|&k| bit(bits, k)).collect()
    }

    #[test]
    fn a_reservation_closes_its_nodes_over_its_slots_only() {
        let mut map = NodeMap::default();
        map.reset(0.0, 1000.0, 4);
        let all = [0b1111u64];
        map.reserve(&[1, 2], 100.0, 200.0, 60.0);
        let mut avail = Vec::new();
        // before it: every node; Slurm's later start is still its end (the first slot after
        // which a node comes back that the slots so far lack, looked at before the loop stops)
        assert_eq!(map.avail(&all, 0.0, 50.0, &mut avail), Some(200.0));
        assert_eq!(nodes(&avail, 4), [0, 1, 2, 3]);
        // a run ending exactly at its start counts as overlapping it (a slot beginning at the
        // run's end is tested)
        map.avail(&all, 0.0, 100.0, &mut avail);
        assert_eq!(nodes(&avail, 4), [0, 3]);
        // over it: closed; later start at its end, where they come back
        assert_eq!(map.avail(&all, 150.0, 160.0, &mut avail), Some(200.0));
        assert_eq!(nodes(&avail, 4), [0, 3]);
        // from its end: every node again
        assert_eq!(map.avail(&all, 200.0, 300.0, &mut avail), None);
        assert_eq!(nodes(&avail, 4), [0, 1, 2, 3]);
        // a start before it: the first slot reaching past the start ends at 100, where nodes
        // are lost, not gained; the one ending at 200 gains them back
        assert_eq!(map.avail(&all, 0.0, 150.0, &mut avail), Some(200.0));
    }

    #[test]
    fn only_nodes_usable_by_the_job_make_a_later_start() {
        let mut map = NodeMap::default();
        map.reset(0.0, 1000.0, 4);
        map.reserve(&[2], 0.0, 300.0, 60.0);
        let mut avail = Vec::new();
        // a job usable on nodes 0 and 1 only gains nothing when node 2 comes back
        assert_eq!(map.avail(&[0b0011], 0.0, 100.0, &mut avail), None);
        assert_eq!(map.avail(&[0b0111], 0.0, 100.0, &mut avail), Some(300.0));
        assert_eq!(nodes(&avail, 4), [0, 1]);
    }

    #[test]
    fn overlap_and_the_shortest_reservation() {
        let mut map = NodeMap::default();
        map.reset(10.0, 1000.0, 4);
        // begins before now: from now; shorter than the resolution: one resolution long
        map.reserve(&[3], 0.0, 20.0, 60.0);
        assert!(map.overlaps(&[3], 60.0, 120.0));
        assert!(map.overlaps(&[3], 65.0, 120.0)); // (it ends at 70, 10 + 60)
        assert!(!map.overlaps(&[3], 70.0, 120.0));
        assert!(!map.overlaps(&[0, 1, 2], 0.0, 1000.0));
        // past the window: nothing kept
        map.reserve(&[0], 1000.0, 2000.0, 60.0);
        assert!(!map.overlaps(&[0], 0.0, 5000.0));
        // across the window's end: kept up to it
        map.reserve(&[1], 900.0, 2000.0, 60.0);
        assert!(map.overlaps(&[1], 950.0, 960.0));
        let mut avail = Vec::new();
        map.avail(&[0b1111], 900.0, 5000.0, &mut avail);
        assert_eq!(nodes(&avail, 4), [0, 2, 3]);
        // a reservation beginning where an interval ends does not overlap it
        map.reserve(&[2], 300.0, 400.0, 60.0);
        assert!(!map.overlaps(&[2], 200.0, 300.0));
        assert!(map.overlaps(&[2], 200.0, 301.0));
    }
}
