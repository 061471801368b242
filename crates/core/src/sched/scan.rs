//! The queue scan and EASY backfilling, written once for every queue policy and power
//! manager: how the nodes of each start are found is a [`Placement`].
//!
//! In the order given, jobs start while they fit; the first eligible job that does not fit is
//! the top job. With EASY, the top job gets a reservation (the placement plans it) and later
//! jobs start only if they delay neither it nor an announced maintenance. A job is eligible
//! when it may run by its request before announced maintenance (`Admission`).

use crate::engine::admission::Admission;
use crate::engine::{Backfill, Decision, KnownJob, Reserve, Start, StartKind, View};
use crate::sched::easy::Reservation;

/// How a scan finds the nodes of the jobs it starts.
pub trait Placement {
    /// Nodes left to start jobs on now.
    fn free(&self) -> u32;
    /// Takes nodes for `job` (index `index`), started in order, ending by its request at
    /// `est_end`; `false` when it does not fit (it is then the top job).
    fn start(
        &mut self,
        view: &View,
        index: u32,
        job: KnownJob,
        est_end: f64,
        decision: &mut Decision,
    ) -> bool;
    /// Plans the top job's reservation: (shadow time, extra nodes), or `None` when nothing
    /// known makes room for it (then nothing is backfilled).
    fn reserve(
        &mut self,
        view: &View,
        index: u32,
        job: KnownJob,
        decision: &mut Decision,
    ) -> Option<(f64, u32)>;
    /// Takes nodes for `job` behind the reservation, if it delays neither the top job nor
    /// (by `est_end`) anything else; `false` when it may not start.
    fn backfill(
        &mut self,
        view: &View,
        index: u32,
        job: KnownJob,
        est_end: f64,
        decision: &mut Decision,
    ) -> bool;
}

/// The scan and (with `backfill` EASY) backfilling over the first `len` entries of an order
/// (`position(k)` = queue position of the k-th job). Returns the order index of the top job,
/// `None` when every eligible job started.
pub fn scan(
    view: &View,
    len: usize,
    position: impl Fn(usize) -> u32,
    backfill: Backfill,
    placement: &mut impl Placement,
    decision: &mut Decision,
) -> Option<usize> {
    let queue = view.queue;
    let mut admission = Admission::new(view);
    // (the free count kept here too, refreshed after each start: the loops below mostly skip
    // jobs wider than it, and read it from a register)
    let mut free = placement.free();
    let mut top = None;
    for k in 0..len {
        let pos = position(k);
        let index = queue[pos as usize];
        let job = view.jobs.get(index);
        let est_end = view.now + job.requested_time;
        if !admission.admits(est_end, job.nodes) {
            continue;
        }
        if job.nodes > free || !placement.start(view, index, job, est_end, decision) {
            top = Some(k);
            break;
        }
        free = placement.free();
        admission.commit(est_end, job.nodes);
        decision.starts.push(Start {
            pos,
            job: index,
            kind: StartKind::Primary,
        });
    }
    let top_k = top?;
    if backfill == Backfill::None || free == 0 {
        return top;
    }
    let head = queue[position(top_k) as usize];
    let Some((shadow_time, extra)) = placement.reserve(view, head, view.jobs.get(head), decision)
    else {
        return top;
    };
    decision.reservation = Some(Reserve {
        job: head,
        shadow_time,
        extra,
    });
    for k in top_k + 1..len {
        if free == 0 {
            break;
        }
        let pos = position(k);
        let index = queue[pos as usize];
        let nodes = view.jobs.get(index).nodes;
        if nodes > free {
            continue;
        }
        let job = view.jobs.get(index);
        let est_end = view.now + job.requested_time;
        if !admission.admits(est_end, job.nodes)
            || !placement.backfill(view, index, job, est_end, decision)
        {
            continue;
        }
        free = placement.free();
        admission.commit(est_end, job.nodes);
        decision.starts.push(Start {
            pos,
            job: index,
            kind: StartKind::Backfill,
        });
    }
    top
}

/// What EASY plans with: durations of waiting jobs and releases of running ones.
#[derive(Clone, Copy)]
pub struct Estimates<'a> {
    /// Predicted run time by job index (`None`: requested times).
    pub predicted: Option<&'a [f64]>,
    /// Running jobs' predicted releases, sorted (`None`: their requested ends).
    pub releases: Option<&'a [(f64, u32)]>,
}

impl Estimates<'_> {
    /// The user's requested times: what production EASY plans with.
    pub const REQUESTED: Estimates<'static> = Estimates {
        predicted: None,
        releases: None,
    };

    #[inline]
    fn duration(&self, view: &View, job: u32) -> f64 {
        let requested = view.jobs.get(job).requested_time;
        match self.predicted {
            Some(p) => p
                .get(job as usize)
                .copied()
                .filter(|d| !d.is_nan())
                .unwrap_or(requested),
            None => requested,
        }
    }
}

/// Anonymous nodes: a count of free nodes, and EASY's shadow time and extra nodes from the
/// running jobs' releases (on `estimates`).
pub struct Counts<'s, 'e> {
    free: u32,
    estimates: Estimates<'e>,
    /// (planned end, nodes) of the jobs started by this scan (scratch, reused).
    started: &'s mut Vec<(f64, u32)>,
    reservation: Option<Reservation>,
}

impl<'s, 'e> Counts<'s, 'e> {
    pub fn new(view: &View, estimates: Estimates<'e>, started: &'s mut Vec<(f64, u32)>) -> Self {
        started.clear();
        Counts {
            free: view.free,
            estimates,
            started,
            reservation: None,
        }
    }
}

impl Placement for Counts<'_, '_> {
    #[inline]
    fn free(&self) -> u32 {
        self.free
    }

    #[inline]
    fn start(&mut self, view: &View, index: u32, job: KnownJob, _: f64, _: &mut Decision) -> bool {
        self.free -= job.nodes;
        let planned_end = view.now + self.estimates.duration(view, index);
        self.started.push((planned_end, job.nodes));
        true
    }

    fn reserve(
        &mut self,
        view: &View,
        _: u32,
        job: KnownJob,
        _: &mut Decision,
    ) -> Option<(f64, u32)> {
        let reservation = match self.estimates.releases {
            Some(releases) => {
                Reservation::compute_from(view, releases, self.free, job.nodes, self.started)
            }
            None => Reservation::compute(view, self.free, job.nodes, self.started),
        }?;
        self.reservation = Some(reservation);
        Some((reservation.shadow_time, reservation.extra))
    }

    #[inline]
    fn backfill(
        &mut self,
        view: &View,
        index: u32,
        job: KnownJob,
        _: f64,
        _: &mut Decision,
    ) -> bool {
        let planned_end = view.now + self.estimates.duration(view, index);
        let admitted = self
            .reservation
            .as_mut()
            .is_some_and(|r| r.admits(planned_end, job.nodes));
        if admitted {
            self.free -= job.nodes;
        }
        admitted
    }
}
