//! The node-space map of Slurm's backfill (`node_space_map_t` in `backfill.c`): from now on, the
//! free nodes of each atom of the site (one atom: one pool) as a step function of time.
//!
//! Row `i` holds what is free from `times[i]` until `times[i + 1]` (the last row: for ever).
//! `free` counts the nodes no running or planned job holds; `down` the nodes maintenance takes
//! in that interval. A job may use `free - down` nodes of an atom (never fewer than 0), and the
//! same nodes for the whole of its run: with interchangeable nodes inside an atom, a job fits
//! from row `i` when the sum over its atoms of each atom's least room over its run reaches its
//! size.

/// The map: rows of per-atom free and down counts, by time.
#[derive(Debug, Clone, Default)]
pub struct Space {
    atoms: usize,
    times: Vec<f64>,
    /// Row-major: `free[row * atoms + atom]`.
    free: Vec<i64>,
    down: Vec<i64>,
    /// The earliest time a row was inserted at since [`Space::take_inserted`] (infinity: none).
    inserted: f64,
}

/// A run ending at `end(start)` (never earlier for a later start); `through`: a row beginning
/// at its very end counts as inside it.
#[derive(Debug, Clone, Copy)]
struct Run<E> {
    end: E,
    through: bool,
}

impl<E: Fn(f64) -> f64 + Copy> Run<E> {
    /// Whether a row beginning at `t` lies past the run begun at `start`.
    fn past(self, start: f64, t: f64) -> bool {
        self.past_end((self.end)(start), t)
    }

    /// Whether a row beginning at `t` lies past a run ending at `end`.
    fn past_end(self, end: f64, t: f64) -> bool {
        t > end || (t == end && !self.through)
    }
}

/// Where a job fits: the row its run begins at, and the nodes it takes of each atom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub row: usize,
    pub start: f64,
}

impl Space {
    /// The map at `now`: `free` nodes per atom, nothing planned, nothing down ahead.
    pub fn reset(&mut self, now: f64, free: &[u32]) {
        self.atoms = free.len();
        self.times.clear();
        self.times.push(now);
        self.free.clear();
        self.free.extend(free.iter().map(|&f| i64::from(f)));
        self.down.clear();
        self.down.resize(self.atoms, 0);
        self.inserted = f64::INFINITY;
    }

    /// Builds the releases of the running jobs at once: `releases` are (time, atom, count),
    /// in any order; each frees `count` nodes of `atom` from `time` on.
    pub fn release_all(&mut self, releases: &mut [(f64, u32, u32)]) {
        if !releases.is_sorted_by(|a, b| a.0 <= b.0) {
            // (stable: runs already in order, as each atom's releases are, are merged)
            releases.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        }
        let now = self.times[0];
        for &(time, atom, count) in releases.iter() {
            let time = time.max(now);
            let last = self.times.len() - 1;
            let row = if time > self.times[last] {
                self.times.push(time);
                self.free
                    .extend_from_within(last * self.atoms..(last + 1) * self.atoms);
                self.down
                    .extend_from_within(last * self.atoms..(last + 1) * self.atoms);
                last + 1
            } else {
                last
            };
            self.free[row * self.atoms + atom as usize] += i64::from(count);
        }
    }

    /// The row that begins at `time` (inserted, a copy of the row before, if none does).
    /// `time` must be at or after the first row's.
    fn split(&mut self, time: f64) -> usize {
        let pos = self.times.partition_point(|&t| t <= time);
        let row = pos - 1;
        if self.times[row] == time {
            return row;
        }
        let a = self.atoms;
        self.times.insert(pos, time);
        self.inserted = self.inserted.min(time);
        let copy: Vec<i64> = self.free[row * a..pos * a].to_vec();
        self.free.splice(pos * a..pos * a, copy);
        let copy: Vec<i64> = self.down[row * a..pos * a].to_vec();
        self.down.splice(pos * a..pos * a, copy);
        pos
    }

    /// Maintenance takes `count` nodes of `atom` over `[start, end)`.
    pub fn maintenance(&mut self, start: f64, end: f64, atom: u32, count: u32) {
        let start = start.max(self.times[0]);
        if end <= start {
            return;
        }
        let first = self.split(start);
        let last = self.split(end);
        for row in first..last {
            self.down[row * self.atoms + atom as usize] += i64::from(count);
        }
    }

    /// The room of `atom` in `row`.
    #[inline]
    fn room(&self, row: usize, atom: usize) -> i64 {
        let i = row * self.atoms + atom;
        (self.free[i] - self.down[i]).max(0)
    }

    /// The earliest row at or after `from` (a time) where `nodes` nodes of `atoms` are free for
    /// `duration` seconds, starting no later than `latest`; `None` if there is none.
    pub fn earliest(
        &self,
        from: f64,
        duration: f64,
        atoms: &[u32],
        nodes: u32,
        latest: f64,
    ) -> Option<Fit> {
        let run = Run {
            end: move |t| t + duration,
            through: false,
        };
        self.earliest_in(self.row_of(from), from, run, atoms, nodes, latest)
    }

    /// As [`Space::earliest`], a row beginning at the run's very end counting too (Slurm's
    /// test of a start now: the map's slots overlapping `[now, now + limit]`, ends included).
    pub fn earliest_through(
        &self,
        from: f64,
        duration: f64,
        atoms: &[u32],
        nodes: u32,
        latest: f64,
    ) -> Option<Fit> {
        let run = Run {
            end: move |t| t + duration,
            through: true,
        };
        self.earliest_in(self.row_of(from), from, run, atoms, nodes, latest)
    }

    /// As [`Space::earliest`] from row `row` on, for a run from `t` until `until(t)`, a
    /// nondecreasing function of `t` (a reservation's end floored to a resolution): one pass
    /// over the rows.
    pub fn earliest_until(
        &self,
        row: usize,
        until: impl Fn(f64) -> f64 + Copy,
        atoms: &[u32],
        nodes: u32,
        latest: f64,
    ) -> Option<Fit> {
        let run = Run {
            end: until,
            through: false,
        };
        self.earliest_in(row, self.times[row], run, atoms, nodes, latest)
    }

    /// Whether `nodes` nodes of `atoms` are free over `[start, end)`, `start` being at or after
    /// row `hint`'s time: `Ok` with the fit, or the time from which a run could next fit (after
    /// the first row without room, on one atom; the next row on several), `None` past the last
    /// row. (Rows are walked from `hint`: a start is a few rows past the fit it came from.)
    pub fn fits_over(
        &self,
        start: f64,
        end: f64,
        atoms: &[u32],
        nodes: u32,
        hint: usize,
    ) -> Result<Fit, Option<usize>> {
        let need = i64::from(nodes);
        let rows = self.times.len();
        let mut first = hint;
        while first + 1 < rows && self.times[first + 1] <= start {
            first += 1;
        }
        let span = |k: usize| k == first || (k < rows && self.times[k] < end);
        if let [atom] = atoms {
            let atom = *atom as usize;
            let mut k = first;
            while k < rows && span(k) {
                if self.room(k, atom) < need {
                    return Err((k + 1 < rows).then_some(k + 1));
                }
                k += 1;
            }
            return Ok(Fit { row: first, start });
        }
        let mut total = 0;
        for &a in atoms {
            let mut least = i64::MAX;
            let mut k = first;
            while k < rows && span(k) {
                least = least.min(self.room(k, a as usize));
                k += 1;
            }
            total += least;
        }
        if total >= need {
            Ok(Fit { row: first, start })
        } else {
            Err((first + 1 < rows).then_some(first + 1))
        }
    }

    /// The row holding time `t` (at or after the first row's).
    pub fn row_of(&self, t: f64) -> usize {
        if self.times.get(1).is_none_or(|&next| t < next) {
            return 0; // (most searches start now)
        }
        self.times.partition_point(|&x| x <= t) - 1
    }

    /// The time row `k` begins at, if there is one (row 0: now).
    pub fn row_time(&self, k: usize) -> Option<f64> {
        self.times.get(k).copied()
    }

    /// The first fit at or after `from`, in row `row` (the one holding `from`) or later.
    #[allow(clippy::too_many_arguments)]
    fn earliest_in<E: Fn(f64) -> f64 + Copy>(
        &self,
        row: usize,
        from: f64,
        run: Run<E>,
        atoms: &[u32],
        nodes: u32,
        latest: f64,
    ) -> Option<Fit> {
        let need = i64::from(nodes);
        let rows = self.times.len();
        let mut row = row;
        if let [atom] = atoms {
            let atom = *atom as usize;
            return self.first_run(row, from, run, need, latest, |k| self.room(k, atom));
        }
        loop {
            // the first run from `row` with room in every row for the total (one pass), then
            // whether each atom's least room over it adds up (else: from the next row)
            let total = |k| atoms.iter().map(|&a| self.room(k, a as usize)).sum();
            let fit = self.first_run(row, from, run, need, latest, total)?;
            let mut total = 0;
            for &a in atoms {
                let mut least = i64::MAX;
                let mut k = fit.row;
                while k < rows && (k == fit.row || !run.past(fit.start, self.times[k])) {
                    least = least.min(self.room(k, a as usize));
                    k += 1;
                }
                total += least;
            }
            if total >= need {
                return Some(fit);
            }
            row = fit.row + 1;
            if row == rows {
                return None;
            }
        }
    }

    /// The first `run` from `row`, starting no later than `latest`, with at least
    /// `need` nodes in every row it spans (with `through`, a row beginning at its end too),
    /// `room(k)` being row `k`'s: one pass over the rows, the candidate start moving past every
    /// row without room.
    fn first_run<E: Fn(f64) -> f64 + Copy>(
        &self,
        mut row: usize,
        from: f64,
        run: Run<E>,
        need: i64,
        latest: f64,
        room: impl Fn(usize) -> i64,
    ) -> Option<Fit> {
        let rows = self.times.len();
        let mut start = self.times[row].max(from);
        let mut end = (run.end)(start);
        let mut k = row;
        loop {
            if start > latest {
                return None;
            }
            if k == rows || (k > row && run.past_end(end, self.times[k])) {
                return Some(Fit { row, start });
            }
            if room(k) < need {
                row = k + 1;
                if row == rows {
                    return None;
                }
                start = self.times[row];
                end = (run.end)(start);
            }
            k += 1;
        }
    }

    /// Takes `nodes` nodes over `[fit.start, end)` from `atoms`, lowest atoms first (Slurm's
    /// node order), after [`Space::earliest`] found `fit` for them; pushes the (atom, count)
    /// pairs taken onto `takes`.
    pub fn take(
        &mut self,
        fit: Fit,
        end: f64,
        atoms: &[u32],
        nodes: u32,
        takes: &mut Vec<(u32, u32)>,
    ) {
        let first = self.split(fit.start);
        let last = if end.is_finite() {
            // a job of no length still holds its nodes at its start (until its end is
            // processed, after this call)
            self.split(end).max(first + 1)
        } else {
            self.times.len()
        };
        let mut left = i64::from(nodes);
        let mut sorted: Vec<u32> = atoms.to_vec();
        sorted.sort_unstable();
        for a in sorted {
            if left == 0 {
                break;
            }
            let least = (first..last)
                .map(|row| self.room(row, a as usize))
                .min()
                .unwrap_or(0);
            let count = least.min(left);
            if count > 0 {
                for row in first..last {
                    self.free[row * self.atoms + a as usize] -= count;
                }
                takes.push((a, count as u32));
                left -= count;
            }
        }
        debug_assert_eq!(left, 0, "take after a fit");
    }

    /// A reservation of the (atom, count) `takes` beginning at `start` holds its nodes from
    /// `from` on: in the rows from `from` to `start`, each atom taken from keeps at most the
    /// room it has left at `start` (its nodes released in between are the reservation's,
    /// first; the rest were free and are now held).
    pub fn hold_before(&mut self, from: f64, start: f64, takes: &[(u32, u32)]) {
        if from >= start {
            return;
        }
        let first = self.split(from);
        let at = self.split(start);
        for &(atom, _) in takes {
            let a = atom as usize;
            let cap = self.free[at * self.atoms + a] - self.down[at * self.atoms + a];
            for row in first..at {
                let i = row * self.atoms + a;
                let room = self.free[i] - self.down[i];
                if room > cap {
                    self.free[i] -= room - cap.max(0);
                }
            }
        }
    }

    /// The earliest time a row was inserted at since the last call (infinity: none): a start
    /// that a search could not try then (starts are tried at rows' beginnings).
    pub fn take_inserted(&mut self) -> f64 {
        std::mem::replace(&mut self.inserted, f64::INFINITY)
    }

    /// The room of each of `atoms` now (the first row), summed.
    pub fn room_now(&self, atoms: &[u32]) -> i64 {
        atoms.iter().map(|&a| self.room(0, a as usize)).sum()
    }

    /// The room of `atom` at time `t` (at or after the first row).
    pub fn room_at(&self, t: f64, atom: u32) -> i64 {
        let row = self.times.partition_point(|&x| x <= t).max(1) - 1;
        self.room(row, atom as usize)
    }

    /// Rows in the map (for tests).
    pub fn rows(&self) -> usize {
        self.times.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_pool(now: f64, free: u32, releases: &[(f64, u32)]) -> Space {
        let mut space = Space::default();
        space.reset(now, &[free]);
        let mut r: Vec<(f64, u32, u32)> = releases.iter().map(|&(t, n)| (t, 0, n)).collect();
        space.release_all(&mut r);
        space
    }

    #[test]
    fn a_job_fits_once_enough_nodes_are_released_for_its_whole_run() {
        // 2 free now, 3 more at 100, 5 more at 300
        let space = one_pool(0.0, 2, &[(100.0, 3), (300.0, 5)]);
        assert_eq!(
            space
                .earliest(0.0, 50.0, &[0], 2, f64::INFINITY)
                .unwrap()
                .start,
            0.0
        );
        assert_eq!(
            space
                .earliest(0.0, 50.0, &[0], 4, f64::INFINITY)
                .unwrap()
                .start,
            100.0
        );
        assert_eq!(
            space
                .earliest(0.0, 50.0, &[0], 10, f64::INFINITY)
                .unwrap()
                .start,
            300.0
        );
        assert!(space.earliest(0.0, 50.0, &[0], 11, f64::INFINITY).is_none());
        // not before `latest`
        assert!(space.earliest(0.0, 50.0, &[0], 10, 299.0).is_none());
    }

    #[test]
    fn a_reservation_blocks_a_later_job_that_would_overlap_it() {
        let mut space = one_pool(0.0, 2, &[(100.0, 3)]);
        let fit = space.earliest(0.0, 200.0, &[0], 5, f64::INFINITY).unwrap();
        assert_eq!(fit.start, 100.0);
        let mut takes = Vec::new();
        space.take(fit, 300.0, &[0], 5, &mut takes);
        assert_eq!(takes, vec![(0, 5)]);
        // 2 nodes for 100 s fit now; for 101 s they would run into the reservation
        assert_eq!(
            space
                .earliest(0.0, 100.0, &[0], 2, f64::INFINITY)
                .unwrap()
                .start,
            0.0
        );
        assert_eq!(
            space
                .earliest(0.0, 101.0, &[0], 2, f64::INFINITY)
                .unwrap()
                .start,
            300.0
        );
    }

    #[test]
    fn a_run_to_a_floored_end_fits_where_the_whole_run_would_not() {
        // 2 free now; a 4-node reservation from 120 on (taken below). A 2-node run of 90 s
        // from row 1 (at 50) would reach 140; to its end floored to the minute, 120, it fits.
        let mut space = one_pool(0.0, 2, &[(50.0, 2), (120.0, 0)]);
        let fit = space.earliest(120.0, 60.0, &[0], 4, f64::INFINITY).unwrap();
        let mut takes = Vec::new();
        space.take(fit, 180.0, &[0], 4, &mut takes);
        let floored = |t: f64| ((t + 90.0) / 60.0).floor() * 60.0;
        assert_eq!(
            space
                .earliest(50.0, 90.0, &[0], 3, f64::INFINITY)
                .unwrap()
                .start,
            180.0
        );
        let fit = space
            .earliest_until(1, floored, &[0], 3, f64::INFINITY)
            .unwrap();
        assert_eq!((fit.row, fit.start), (1, 50.0));
        // over [50, 140) the row at 120 has no room: the next try is from the row after it
        assert_eq!(space.fits_over(50.0, 140.0, &[0], 3, 0), Err(Some(3)));
        assert_eq!(space.row_time(3), Some(180.0));
        assert_eq!(
            space.fits_over(60.0, 120.0, &[0], 3, 0).map(|f| f.row),
            Ok(1)
        );
        // a run ending exactly when the reservation begins: inside it only when ends count
        assert!(space.earliest(0.0, 120.0, &[0], 2, 0.0).is_some());
        assert!(space.earliest_through(0.0, 120.0, &[0], 2, 0.0).is_none());
    }

    #[test]
    fn maintenance_takes_its_nodes_and_a_job_must_end_before_it_or_start_after() {
        let mut space = one_pool(0.0, 4, &[]);
        space.maintenance(100.0, 200.0, 0, 3);
        assert_eq!(
            space
                .earliest(0.0, 100.0, &[0], 4, f64::INFINITY)
                .unwrap()
                .start,
            0.0
        );
        assert_eq!(
            space
                .earliest(0.0, 101.0, &[0], 4, f64::INFINITY)
                .unwrap()
                .start,
            200.0
        );
        assert_eq!(
            space
                .earliest(0.0, 500.0, &[0], 1, f64::INFINITY)
                .unwrap()
                .start,
            0.0
        );
        assert_eq!(
            space
                .earliest(0.0, 500.0, &[0], 2, f64::INFINITY)
                .unwrap()
                .start,
            200.0
        );
    }

    #[test]
    fn a_reservation_floored_to_its_slot_holds_the_nodes_free_before_its_start() {
        // 2 free now (at 30), 2 more released at 100; a 3-node reservation from 100 floored
        // to 60 holds, from 60, the free nodes it will use: 1 of the 2 (the 2 released are its
        // other ones)
        let mut space = one_pool(30.0, 2, &[(100.0, 2)]);
        let fit = space.earliest(30.0, 200.0, &[0], 3, f64::INFINITY).unwrap();
        assert_eq!(fit.start, 100.0);
        let mut takes = Vec::new();
        space.take(fit, 300.0, &[0], 3, &mut takes);
        space.hold_before(60.0, 100.0, &takes);
        assert_eq!(space.room_at(30.0, 0), 2);
        assert_eq!(space.room_at(60.0, 0), 1);
        assert_eq!(space.room_at(100.0, 0), 1);
        // a 2-node job fits now only if it ends by 60, where the hold begins
        assert_eq!(
            space.earliest(30.0, 30.0, &[0], 2, 30.0).map(|f| f.start),
            Some(30.0)
        );
        assert!(space.earliest(30.0, 31.0, &[0], 2, 30.0).is_none());
    }

    #[test]
    fn a_job_needs_the_same_nodes_for_its_whole_run_across_atoms() {
        // atom 0: 2 free until 100 then 0 (maintenance); atom 1: 0 until 100 then 2.
        let mut space = Space::default();
        space.reset(0.0, &[2, 0]);
        space.release_all(&mut [(100.0, 1, 2)]);
        space.maintenance(100.0, 1000.0, 0, 2);
        // 2 nodes for 200 s: every row offers 2, but no atom offers them for the whole run
        let fit = space
            .earliest(0.0, 200.0, &[0, 1], 2, f64::INFINITY)
            .unwrap();
        assert_eq!(fit.start, 100.0);
        let mut takes = Vec::new();
        space.take(fit, 300.0, &[1, 0], 2, &mut takes);
        assert_eq!(takes, vec![(1, 2)]);
    }
}
