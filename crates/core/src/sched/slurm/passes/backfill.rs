//! The backfill scheduler's cycle on whole nodes (`backfill.c: _attempt_backfill`): each job
//! in order gets its earliest start on the node-space map, starts if that is now, and otherwise
//! reserves its nodes from then on; the cycle stops past the last job that could still start
//! now.

use super::{Entry, Passes};
use crate::engine::{Decision, Reserve, StartKind, View};
use crate::sched::slurm::clock;
use crate::sched::slurm::nodes::partition_atoms;
use crate::sched::slurm::passes::{group_end, running_end};
use crate::sched::slurm::setup::SlurmSetup;
use crate::sched::slurm::space::Fit;

/// The first job a backfill cycle tests, on one pool.
enum Top {
    None,
    StartsNow,
    Reserved(usize, f64, i64),
}

/// How many of a cycle's searches `Passes::bounds` keeps.
const BOUNDS: usize = 16;

impl Passes {
    /// The backfill scheduler's cycle.
    pub(super) fn backfill_pass(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        entries: &[Entry],
        waiting: &mut [bool],
        decision: &mut Decision,
    ) {
        let sched = &setup.scheduler;
        let now = view.now;
        let res = sched.bf_resolution;
        let origin = setup.origin;
        let latest = now + sched.bf_window;
        self.ends.clear();
        self.per_user.clear();
        self.bounds.clear();
        self.confirmed = None;
        self.space.take_inserted();
        // Only a candidate can start now: a job no larger than its partition's room now and, on
        // one atom, passing EASY's test against the first job's reservation (ending by its
        // start, or fitting beside it then: every later reservation only takes more room, so a
        // job failing this fails the cycle's own test). Without one the cycle is not run; past the
        // last one it stops (what is left would only make reservations nothing reads).
        // (A reservation cannot be left out for being far ahead: it moves later jobs' ones,
        // which may come near.)
        let all_atoms: Vec<u32> = (0..self.space_atoms(view) as u32).collect();
        let top = if all_atoms.len() == 1 && !self.exhaustive {
            match self.top_reservation(view, setup, entries, waiting, latest) {
                Top::None => return, // nothing waits that may start
                Top::StartsNow => None,
                Top::Reserved(k, shadow, extra) => Some((k, shadow, extra)),
            }
        } else {
            None
        };
        let mut smallest_after = std::mem::take(&mut self.smallest_after);
        let mut longest_after = std::mem::take(&mut self.longest_after);
        smallest_after.clear();
        smallest_after.resize(entries.len() + 1, u32::MAX);
        longest_after.clear();
        longest_after.resize(entries.len() + 1, f64::NEG_INFINITY);
        self.candidates.clear();
        let partitions = setup.partition_factors.len() as u32;
        let mut partition_room = std::mem::take(&mut self.partition_room);
        partition_room.clear();
        partition_room
            .extend((0..partitions).map(|p| (self.space).room_now(partition_atoms(view, p))));
        for (k, e) in entries.iter().enumerate().rev() {
            smallest_after[k] = smallest_after[k + 1];
            longest_after[k] = longest_after[k + 1];
            if waiting[e.job as usize] {
                let job = view.jobs.get(e.job);
                let nodes = i64::from(job.nodes);
                smallest_after[k] = smallest_after[k].min(job.nodes);
                let candidate = nodes <= partition_room[e.partition as usize]
                    && top.is_none_or(|(t, shadow, extra)| {
                        k <= t || now + job.requested_time <= shadow || nodes <= extra
                    });
                if candidate {
                    longest_after[k] = longest_after[k].max(job.requested_time);
                    self.candidates.push(k);
                }
            }
        }
        self.partition_room = partition_room;
        self.candidates.reverse(); // by entry, ascending
        if longest_after[0] == f64::NEG_INFINITY && !self.exhaustive {
            self.smallest_after = smallest_after;
            self.longest_after = longest_after;
            return; // no candidate: the cycle starts nothing
        }
        let mut tested = 0;
        for (k, e) in entries.iter().enumerate() {
            if tested >= sched.bf_max_job_test {
                break;
            }
            if !self.exhaustive
                && (i64::from(smallest_after[k]) > self.space.room_now(&all_atoms)
                    || longest_after[k] == f64::NEG_INFINITY)
            {
                break; // nothing left can start now
            }
            if !self.backfill_tests(view, setup, e, waiting) {
                continue;
            }
            tested += 1;
            let job = view.jobs.get(e.job);
            let atoms = partition_atoms(view, e.partition);
            // (a job that is no candidate cannot start now: its search begins later)
            let may_start_now = self.exhaustive || self.candidates.binary_search(&k).is_ok();
            let Some((start, to)) = self.earliest_start(
                view,
                may_start_now,
                e.partition,
                job.requested_time,
                atoms,
                job.nodes,
                latest,
                res,
            ) else {
                continue; // nothing frees enough nodes before the window's end: no reservation
            };
            if start.start <= now {
                self.start(
                    view,
                    setup,
                    e,
                    start,
                    StartKind::Backfill,
                    waiting,
                    decision,
                );
                self.confirmed = None; // (a start takes nodes now)
                continue;
            }
            // The reservation ends at its end floored to the resolution, and lasts at least
            // until the end of the resolution slot it begins in (`_add_reservation`).
            let slot_start = clock::at_or_before(start.start + origin, res) - origin; // (wall clock)
            self.takes.clear();
            self.space
                .take(start, to, atoms, job.nodes, &mut self.takes);
            // It begins at its start floored to the resolution too: from there its nodes are
            // closed to others. Of them, the ones running jobs release before its start are
            // busy anyway; the others (free from then on) are lost: each atom keeps no more room
            // in that slot than it has left at the start (`Space::hold_before`).
            if slot_start < start.start {
                self.space
                    .hold_before(slot_start.max(now), start.start, &self.takes);
            }
            if decision.reservation.is_none() {
                decision.reservation = Some(Reserve {
                    job: e.job,
                    shadow_time: start.start,
                    extra: 0,
                });
            }
            // The last candidate left after this entry may no longer fit now beside the
            // reservations made: then it is no candidate (the map only fills up in a cycle);
            // with none left the cycle stops.
            let held_from = slot_start.max(now).min(start.start);
            if !self.exhaustive
                && !self.candidate_after(view, setup, entries, waiting, k, held_from)
            {
                break;
            }
        }
        self.smallest_after = smallest_after;
        self.longest_after = longest_after;
    }

    /// Whether a candidate after entry `k` may still start now, once entry `k`'s reservation
    /// holds nodes from `held_from` on: the last ones that cannot (over a QOS limit now, or no
    /// room for their run beside the reservations) are dropped.
    fn candidate_after(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        entries: &[Entry],
        waiting: &[bool],
        k: usize,
        held_from: f64,
    ) -> bool {
        let now = view.now;
        while let Some(&c) = self.candidates.last() {
            if c <= k {
                return false;
            }
            // (found to fit now over its run since the last start, and the reservation just
            // made holds nodes only after that run: it still fits)
            if self
                .confirmed
                .is_some_and(|(j, end)| j == c && held_from > end)
            {
                return true;
            }
            let e = entries[c];
            let job = view.jobs.get(e.job);
            let atoms = partition_atoms(view, e.partition);
            if waiting[e.job as usize]
                && self.admits(setup, view, e.job)
                && (self.space)
                    .earliest_through(now, job.requested_time, atoms, job.nodes, now)
                    .is_some()
            {
                self.confirmed = Some((c, now + job.requested_time));
                return true;
            }
            self.candidates.pop();
        }
        false
    }

    /// On one pool, the first job the cycle would test: none, one that starts now, or one
    /// reserved at `k`-th entry from `shadow` with `extra` nodes left beside it then.
    fn top_reservation(
        &mut self,
        view: &View,
        setup: &SlurmSetup,
        entries: &[Entry],
        waiting: &[bool],
        latest: f64,
    ) -> Top {
        let now = view.now;
        let Some(top) = entries
            .iter()
            .position(|e| waiting[e.job as usize] && self.admits(setup, view, e.job))
        else {
            return Top::None;
        };
        let job = view.jobs.get(entries[top].job);
        let res = setup.scheduler.bf_resolution;
        let run = job.requested_time;
        match self.earliest_start(view, true, 0, run, &[0], job.nodes, latest, res) {
            Some((fit, _)) if fit.start <= now => Top::StartsNow,
            Some((fit, _)) => Top::Reserved(
                top,
                fit.start,
                self.space.room_at(fit.start, 0) - i64::from(job.nodes),
            ),
            None => Top::Reserved(top, f64::INFINITY, 0),
        }
    }

    /// The backfill's earliest start of a job on `atoms` and the end of the reservation it would
    /// make, as Slurm's TRY_LATER loop finds them (with counts of nodes for its node sets):
    /// - now, if the job fits over its whole run, a reservation beginning at its very end
    ///   included (the first attempt tests the map's slots overlapping `[now, now + limit]`);
    /// - else the first start `t` the select plugin's estimate gives (the end of the last running
    ///   job of the removal group holding the map's first fit, `_will_run_test`: those ending
    ///   within 30 s of the first end rounded up to 30 s, then windows doubling from there; or a
    ///   reservation's end) from which the map has room until the end of the reservation it
    ///   would make: `t + limit` floored to `bf_resolution`, at least the end of the slot `t` is
    ///   in (`_test_resv_overlap` tests that floored interval, not the run).
    #[allow(clippy::too_many_arguments)]
    fn earliest_start(
        &mut self,
        view: &View,
        may_start_now: bool,
        partition: u32,
        duration: f64,
        atoms: &[u32],
        nodes: u32,
        latest: f64,
        res: f64,
    ) -> Option<(Fit, f64)> {
        let now = view.now;
        // An earlier search of the cycle in the partition for no more nodes and no longer a
        // run found no start now, and its first fit at `bound` (or none): nor can this one
        // find either earlier, the map only filling up in a cycle, unless at a row begun since
        // (starts are tried at rows' beginnings): then from the first of those.
        let inserted = self.space.take_inserted();
        if inserted < f64::INFINITY {
            for b in &mut self.bounds {
                b.3 = b.3.min(inserted);
            }
        }
        let bound = (self.bounds.iter())
            .filter(|_| !self.exhaustive)
            .filter(|b| b.0 == partition && b.1 <= nodes && b.2 <= duration)
            .map(|b| b.3)
            .reduce(f64::max);
        if bound.is_none() && may_start_now {
            if let Some(fit) = (self.space).earliest_through(now, duration, atoms, nodes, now) {
                return Some((fit, now + duration));
            }
        }
        let origin = self.origin;
        let floor = move |t: f64| clock::at_or_before(t + origin, res) - origin; // (wall clock)
        let reserved_until = move |t: f64| floor(t + duration).max(floor(t) + res);
        // A later start: from the map's second row on (with one, nothing changes ahead).
        self.space.row_time(1)?;
        let from = match bound {
            Some(t) if t == f64::INFINITY => return None,
            Some(t) => self.space.row_of(t).max(1),
            None => 1,
        };
        // (its first fit bounds the searches of the cycle it covers)
        let first = (self.space).earliest_until(from, reserved_until, atoms, nodes, latest);
        if self.bounds.len() == BOUNDS {
            self.bounds.remove(0);
        }
        let at = first.map_or(f64::INFINITY, |f| f.start);
        self.bounds.push((partition, nodes, duration, at));
        let mut fit = first?;
        loop {
            let start = group_end(self.running_ends(view, partition), fit.start, origin);
            if start > latest {
                return None;
            }
            let until = reserved_until(start);
            if start == fit.start {
                return Some((fit, until));
            }
            match self.space.fits_over(start, until, atoms, nodes, fit.row) {
                Ok(at) => return Some((at, until)),
                Err(next) => {
                    fit =
                        (self.space).earliest_until(next?, reserved_until, atoms, nodes, latest)?
                }
            }
        }
    }

    /// The end times of the running jobs on `partition`'s nodes, sorted.
    fn running_ends(&mut self, view: &View, partition: u32) -> &[f64] {
        let now = view.now;
        self.ends.entry(partition).or_insert_with(|| {
            let mut ends: Vec<f64> = match view.site {
                None => view
                    .running
                    .iter()
                    .map(|r| running_end(r.requested_end, now))
                    .collect(),
                Some(site) => {
                    let mut jobs: Vec<(f64, u32)> = Vec::new();
                    for &a in site.model.partition(partition).atoms.iter() {
                        for &(end, job, _) in site.state.running_in(a) {
                            jobs.push((running_end(end, now), job));
                        }
                    }
                    jobs.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
                    jobs.dedup_by_key(|j| j.1);
                    jobs.into_iter().map(|j| j.0).collect()
                }
            };
            if !ends.is_sorted() {
                ends.sort_by(f64::total_cmp);
            }
            ends
        })
    }
}
