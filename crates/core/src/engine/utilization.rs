//! Utilization: the one definition of busy and available node-seconds.
//!
//! The engine integrates both online as it runs (`Metrics`: busy, up and down node-seconds,
//! what MARS's rewards and the energy totals read); a finished run's summary integrates them
//! again, after the fact, over many intervals (the whole run, each uptime period, the 48 h
//! before each scheduled maintenance). Both count a node-second the same way
//! ([`node_seconds`]) and take nodes down the same way ([`nodes_down`]).
//!
//! Utilization counts every node-second an attempt held nodes, including attempts later killed
//! by downtime (the nodes were busy), against the node-seconds the machine was up: its nodes
//! minus those taken by the windows in progress (never below 0: overlapping windows never take
//! more than the whole machine at any instant).
//!
//! The after-the-fact integrals are step functions with prefix sums, so that an interval costs
//! a binary search. Their arithmetic is, operation for operation, the one `hpcsched.metrics`
//! did with numpy before it moved here (a stable sort of the change points, running sums of
//! the changes, `[0, cumsum(diff(times) * values[:-1])]`), so summaries stay bit for bit.

use std::cmp::Ordering;

use crate::engine::sort::{ascending, order_key};
use crate::model::{Downtime, DowntimeKind};

/// Length of the window before each scheduled maintenance whose utilization is reported (s).
pub const PRE_MAINTENANCE: f64 = 48.0 * 3600.0;

/// Node-seconds of `nodes` nodes over `seconds`: one piece of a busy, up or down integral.
#[inline]
pub fn node_seconds(seconds: f64, nodes: f64) -> f64 {
    seconds * nodes
}

/// Nodes down on a machine of `machine` nodes while windows taking `taken` nodes in all are in
/// progress (each window's own count is [`Downtime::nodes_down`]).
#[inline]
pub fn nodes_down(machine: u32, taken: u64) -> u32 {
    // at most `machine`, so it fits
    taken.min(u64::from(machine)) as u32
}

/// A step function of time with its prefix integrals: `values[k]` on
/// `[times[k], times[k + 1])`, `before` before `times[0]`, the last value after it.
#[derive(Debug, Clone, Default)]
pub struct StepIntegral {
    times: Vec<f64>,
    values: Vec<f64>,
    before: f64,
    /// The integral from `times[0]` to `times[k]`.
    cumulative: Vec<f64>,
}

/// Sorts change points `(time, change)` by time (stable: ties keep their order), and keeps,
/// for each distinct time, the first time of its run and the running sum of the changes
/// through its last point.
fn steps<T: Copy>(
    mut points: Vec<(f64, T)>,
    zero: T,
    add: impl Fn(T, T) -> T,
) -> (Vec<f64>, Vec<T>) {
    sort_by_time(&mut points);
    let mut times: Vec<f64> = Vec::new();
    let mut values: Vec<T> = Vec::new();
    let mut sum = zero;
    for (i, &(t, change)) in points.iter().enumerate() {
        // numpy's running sum starts at the first change, not at 0 + it (a signed zero)
        sum = if i == 0 { change } else { add(sum, change) };
        if i == 0 || t != points[i - 1].0 {
            times.push(t);
            values.push(sum);
        } else if let Some(last) = values.last_mut() {
            *last = sum;
        }
    }
    (times, values)
}

/// Sorts `points` by time, stably (ties keep their order) as numpy's stable argsort does (a
/// year-long trace has about half a million points; comparison sorts took most of the
/// summary's time: [`ascending`] is a radix sort).
fn sort_by_time<T: Copy>(points: &mut Vec<(f64, T)>) {
    if points.len() < 1024 {
        points.sort_by_key(|p| order_key(p.0));
        return;
    }
    let times: Vec<f64> = points.iter().map(|p| p.0).collect();
    let sorted = ascending(&times)
        .iter()
        .map(|&i| points[i as usize])
        .collect();
    *points = sorted;
}

impl StepIntegral {
    fn new(times: Vec<f64>, values: Vec<f64>, before: f64) -> Self {
        let mut cumulative = Vec::with_capacity(times.len());
        cumulative.push(0.0);
        let mut sum = 0.0;
        for k in 1..times.len() {
            let piece = node_seconds(times[k] - times[k - 1], values[k - 1]);
            // numpy's running sum starts at the first piece, not at 0 + it (a signed zero)
            sum = if k == 1 { piece } else { sum + piece };
            cumulative.push(sum);
        }
        cumulative.truncate(times.len());
        StepIntegral {
            times,
            values,
            before,
            cumulative,
        }
    }

    /// The integral from `times[0]` to `t` (negative before it; from 0 without change points).
    pub fn integral_to(&self, t: f64) -> f64 {
        let Some(&first) = self.times.first() else {
            return self.before * t;
        };
        let after = self.times.partition_point(|&x| x <= t);
        if after == 0 {
            return self.before * (t - first);
        }
        let k = after - 1;
        self.cumulative[k] + node_seconds(t - self.times[k], self.values[k])
    }

    /// The integral over `[a, b)`.
    pub fn over(&self, a: f64, b: f64) -> f64 {
        self.integral_to(b) - self.integral_to(a)
    }
}

/// Busy and available node-seconds of a run over any interval.
#[derive(Debug, Clone, Default)]
pub struct Utilization {
    /// Nodes held by attempts.
    pub busy: StepIntegral,
    /// Nodes up: the machine minus the nodes down.
    pub available: StepIntegral,
}

impl Utilization {
    /// From a run's attempts `(start, end, nodes)` (jobs and attempts killed by downtime; those
    /// with a NaN start or end never started and are left out), on a machine of `machine`
    /// nodes under the downtime `windows`.
    pub fn new<I>(attempts: I, machine: u32, windows: &[Downtime]) -> Self
    where
        I: IntoIterator<Item = (f64, f64, f64)>,
        I::IntoIter: Clone,
    {
        let attempts = attempts.into_iter();
        let held = |&(start, end, _): &(f64, f64, f64)| !(start.is_nan() || end.is_nan());
        // every start, then every end: ties between them resolve as numpy's did
        let points = attempts
            .clone()
            .filter(held)
            .map(|(start, _, nodes)| (start, nodes))
            .chain(attempts.filter(held).map(|(_, end, nodes)| (end, -nodes)))
            .collect();
        let (times, values) = steps(points, 0.0, |a, b| a + b);
        let busy = StepIntegral::new(times, values, 0.0);
        let available = available_nodes(machine, windows);
        Utilization { busy, available }
    }

    /// Busy over available node-seconds over `[a, b)`; `None` when nothing was available.
    pub fn ratio(&self, a: f64, b: f64) -> Option<f64> {
        let available = self.available.over(a, b);
        (available > 0.0).then(|| self.busy.over(a, b) / available)
    }

    /// Utilization over uptime within `[a, b)` (the whole run, each uptime period), and in the
    /// [`PRE_MAINTENANCE`] seconds before each scheduled maintenance starting in `(a, b]`.
    pub fn report(&self, machine: u32, windows: &[Downtime], a: f64, b: f64) -> Report {
        let uptime_periods = uptime_periods(a, b, machine, windows)
            .into_iter()
            .map(|(from, to)| Period {
                from,
                to,
                utilization: self.ratio(from, to),
            })
            .collect();
        let before_maintenance = windows
            .iter()
            .enumerate()
            .filter(|(_, w)| w.kind == DowntimeKind::Scheduled && a < w.start && w.start <= b)
            .map(|(window, w)| {
                let from = later(a, w.start - PRE_MAINTENANCE);
                BeforeMaintenance {
                    window,
                    from,
                    utilization: self.ratio(from, w.start),
                }
            })
            .collect();
        Report {
            overall_uptime: if b > a { self.ratio(a, b) } else { None },
            uptime_periods,
            before_maintenance,
        }
    }
}

/// Nodes up over time: the machine minus the nodes the windows in progress take.
fn available_nodes(machine: u32, windows: &[Downtime]) -> StepIntegral {
    let points = windows
        .iter()
        .map(|w| (w.start, i64::from(w.nodes_down(machine))))
        .chain(
            windows
                .iter()
                .map(|w| (w.end, -i64::from(w.nodes_down(machine)))),
        )
        .collect();
    let (times, taken) = steps(points, 0_i64, |a, b| a + b);
    let up = taken
        .iter()
        .map(|&t| {
            // each window ends after it starts: never negative once a time's changes are in
            let down = nodes_down(machine, u64::try_from(t).unwrap_or(0));
            f64::from(machine - down)
        })
        .collect();
    StepIntegral::new(times, up, f64::from(machine))
}

/// Utilization over uptime within `[a, b)` alone, by attempt rather than by instant: each
/// attempt's node-seconds inside `[a, b)` summed, over the node-seconds up. The same quantity
/// as [`Report::overall_uptime`] (equal up to the order of the additions), in one pass
/// without sorting: what comparing a run with another schedule needs.
pub fn overall_utilization<I>(
    attempts: I,
    machine: u32,
    windows: &[Downtime],
    a: f64,
    b: f64,
) -> Option<f64>
where
    I: IntoIterator<Item = (f64, f64, f64)>,
{
    if b <= a {
        return None;
    }
    let busy: f64 = attempts
        .into_iter()
        .filter(|&(start, end, _)| !(start.is_nan() || end.is_nan()))
        .map(|(start, end, nodes)| {
            node_seconds((earlier(end, b) - later(start, a)).max(0.0), nodes)
        })
        .sum();
    let available = available_nodes(machine, windows).over(a, b);
    (available > 0.0).then(|| busy / available)
}

/// One uptime period and its utilization.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Period {
    pub from: f64,
    pub to: f64,
    pub utilization: Option<f64>,
}

/// The utilization from `from` to the start of scheduled window `window` (its index).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BeforeMaintenance {
    pub window: usize,
    pub from: f64,
    pub utilization: Option<f64>,
}

/// Utilization over uptime and before maintenance (see [`Utilization::report`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub overall_uptime: Option<f64>,
    pub uptime_periods: Vec<Period>,
    pub before_maintenance: Vec<BeforeMaintenance>,
}

/// `a` unless `b` is larger (Python's `max(a, b)`: the first of equals).
#[inline]
fn later(a: f64, b: f64) -> f64 {
    if b > a {
        b
    } else {
        a
    }
}

/// `a` unless `b` is smaller (Python's `min(a, b)`: the first of equals).
#[inline]
fn earlier(a: f64, b: f64) -> f64 {
    if b < a {
        b
    } else {
        a
    }
}

/// The periods of `[a, b)` outside whole-machine downtime windows (windows taking at least
/// `machine` nodes).
pub fn uptime_periods(a: f64, b: f64, machine: u32, windows: &[Downtime]) -> Vec<(f64, f64)> {
    let mut whole: Vec<(f64, f64)> = windows
        .iter()
        .filter(|w| w.nodes.is_none_or(|n| n >= machine))
        .map(|w| (w.start, w.end))
        .collect();
    whole.sort_by(|x, y| {
        x.0.partial_cmp(&y.0)
            .unwrap_or(Ordering::Equal)
            .then(x.1.partial_cmp(&y.1).unwrap_or(Ordering::Equal))
    });
    let mut periods = Vec::new();
    let mut cursor = a;
    for (start, end) in whole {
        if start > cursor {
            periods.push((cursor, earlier(start, b)));
        }
        cursor = later(cursor, end);
        if cursor >= b {
            break;
        }
    }
    if cursor < b {
        periods.push((cursor, b));
    }
    periods.retain(|&(lo, hi)| hi > lo);
    periods
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start: f64, end: f64, kind: DowntimeKind, nodes: Option<u32>) -> Downtime {
        Downtime {
            start,
            end,
            kind,
            nodes,
            back_asleep: false,
            partition: None,
            range: None,
        }
    }

    #[test]
    fn the_overall_utilization_by_attempt_is_the_one_by_instant() {
        // 4 nodes: 2 held over [0, 10), 3 over [5, 20), 1 over [40, 45); 1 down over [8, 12),
        // all over [30, 40). Over [2, 42): busy 16 + 45 + 2 = 63 node-seconds; up 160 - 4 - 40
        let windows = [
            window(8.0, 12.0, DowntimeKind::Unscheduled, Some(1)),
            window(30.0, 40.0, DowntimeKind::Scheduled, None),
        ];
        let attempts = [
            (0.0, 10.0, 2.0),
            (5.0, 20.0, 3.0),
            (40.0, 45.0, 1.0),
            (f64::NAN, f64::NAN, 9.0),
        ];
        let by_attempt = overall_utilization(attempts, 4, &windows, 2.0, 42.0).unwrap();
        assert_eq!(by_attempt, 63.0 / 116.0);
        let by_instant = Utilization::new(attempts, 4, &windows).report(4, &windows, 2.0, 42.0);
        assert_eq!(by_instant.overall_uptime, Some(by_attempt));
        assert_eq!(overall_utilization(attempts, 4, &windows, 5.0, 5.0), None);
        assert_eq!(overall_utilization(attempts, 4, &windows, 30.0, 40.0), None);
        // all down
    }

    #[test]
    fn integrals_are_the_step_functions_areas() {
        // 4 nodes: 2 held over [0, 10), 3 over [5, 20); 1 down over [8, 12), all over [30, 40)
        let windows = [
            window(8.0, 12.0, DowntimeKind::Unscheduled, Some(1)),
            window(30.0, 40.0, DowntimeKind::Scheduled, None),
        ];
        let u = Utilization::new(
            [
                (0.0, 10.0, 2.0),
                (5.0, 20.0, 3.0),
                (f64::NAN, f64::NAN, 9.0),
            ],
            4,
            &windows,
        );
        assert_eq!(u.busy.over(0.0, 50.0), 20.0 + 45.0);
        assert_eq!(u.busy.over(6.0, 9.0), 15.0);
        assert_eq!(u.available.over(0.0, 50.0), 4.0 * 50.0 - 4.0 - 40.0);
        assert_eq!(u.available.over(-10.0, 0.0), 40.0);
        assert_eq!(u.ratio(30.0, 40.0), None);
        assert_eq!(
            uptime_periods(0.0, 50.0, 4, &windows),
            vec![(0.0, 30.0), (40.0, 50.0)]
        );
        let report = u.report(4, &windows, 0.0, 50.0);
        assert_eq!(report.overall_uptime, Some(65.0 / 156.0));
        assert_eq!(
            report.before_maintenance,
            vec![BeforeMaintenance {
                window: 1,
                from: 0.0,
                utilization: Some(65.0 / 116.0),
            }]
        );
    }

    #[test]
    fn the_radix_sort_is_the_stable_sort() {
        let mut x: u64 = 7;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        // ties, signed zeros, negatives, infinities, wide and narrow ranges
        let specials = [
            0.0,
            -0.0,
            -1.5,
            1e300,
            -1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let points: Vec<(f64, usize)> = (0..5000)
            .map(|i| {
                let r = next();
                let t = match r % 4 {
                    0 => specials[(r >> 8) as usize % specials.len()],
                    1 => ((r >> 8) % 50) as f64,
                    2 => (r >> 11) as f64 * 1e-3 - 4e12,
                    _ => f64::from_bits(r >> 2),
                };
                (t, i)
            })
            .collect();
        let mut radix = points.clone();
        sort_by_time(&mut radix);
        let mut stable = points;
        stable.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        let bits = |v: &[(f64, usize)]| v.iter().map(|p| (p.0.to_bits(), p.1)).collect::<Vec<_>>();
        assert_eq!(bits(&radix), bits(&stable));
    }

    #[test]
    fn overlapping_windows_never_take_more_than_the_machine() {
        let windows = [
            window(0.0, 10.0, DowntimeKind::Unscheduled, Some(3)),
            window(5.0, 15.0, DowntimeKind::Unscheduled, Some(7)),
        ];
        let u = Utilization::new([], 4, &windows);
        // 1 up over [0, 5), none over [5, 15)
        assert_eq!(u.available.over(0.0, 20.0), 5.0 + 5.0 * 4.0);
        assert_eq!(
            uptime_periods(0.0, 20.0, 4, &windows),
            vec![(0.0, 5.0), (15.0, 20.0)]
        );
    }
}
