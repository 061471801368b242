//! Downtime windows: scheduled maintenance (announced ahead) and unscheduled outages.

use crate::error::{CoreError, Result};
use crate::model::job::{Time, MAX_TIME};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DowntimeKind {
    /// Planned maintenance, known from `start - announce_lead` on.
    Scheduled,
    /// An outage nobody saw coming.
    Unscheduled,
}

/// One window during which `nodes` nodes (the whole machine when `None`) are unavailable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Downtime {
    pub start: Time,
    pub end: Time,
    pub kind: DowntimeKind,
    pub nodes: Option<u32>,
    /// With node power states: the nodes come back asleep (else idle and awake).
    pub back_asleep: bool,
    /// On a platform with partitions: the partition whose nodes the window takes down
    /// (`nodes` is then its size); `None` with `nodes` `None`: the whole machine.
    pub partition: Option<u32>,
    /// On a platform with partitions: the half-open range of node indices `[first, end)` the
    /// window takes down, whatever their partitions (`nodes` is then its length; `partition`
    /// is `None`).
    pub range: Option<(u32, u32)>,
}

impl Downtime {
    /// Nodes this window takes away from a machine of `machine_nodes`.
    #[inline]
    pub fn nodes_down(&self, machine_nodes: u32) -> u32 {
        self.nodes.map_or(machine_nodes, |n| n.min(machine_nodes))
    }
}

/// All downtime windows of a run, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct Calendar {
    windows: Vec<Downtime>,
    announce_lead: f64,
}

impl Calendar {
    pub fn new(mut windows: Vec<Downtime>, announce_lead: f64) -> Result<Self> {
        // Any lead is harmless (a window is then known from the start); only the windows'
        // own bounds must stay within the engine's range.
        if !(announce_lead.is_finite() && announce_lead >= 0.0) {
            return Err(CoreError::input("announce lead must be finite and >= 0"));
        }
        for w in &windows {
            let within = |t: f64| t.is_finite() && t.abs() <= MAX_TIME;
            if !(within(w.start) && within(w.end) && w.end > w.start) {
                return Err(CoreError::input(format!(
                    "downtime window [{:e}, {:e}) must have bounds within +-1e11 s and end after its start",
                    w.start, w.end
                )));
            }
            if w.nodes == Some(0) {
                return Err(CoreError::input("downtime window takes 0 nodes"));
            }
            if let Some((first, end)) = w.range {
                if first >= end || w.partition.is_some() {
                    return Err(CoreError::input(format!(
                        "downtime window over nodes {first}..{end}: a range must be non-empty, \
                         and a window takes a range or a partition down, not both"
                    )));
                }
            }
        }
        for w in &mut windows {
            if let Some((first, end)) = w.range {
                w.nodes = Some(end - first); // what the window takes, counted
            }
        }
        windows.sort_by(|a, b| a.start.total_cmp(&b.start).then(a.end.total_cmp(&b.end)));
        Ok(Calendar {
            windows,
            announce_lead,
        })
    }

    pub fn empty() -> Self {
        Calendar {
            windows: Vec::new(),
            announce_lead: 0.0,
        }
    }

    pub fn windows(&self) -> &[Downtime] {
        &self.windows
    }

    pub fn announce_lead(&self) -> f64 {
        self.announce_lead
    }

    /// When the scheduler learns about window `w`.
    pub fn announced_at(&self, w: &Downtime) -> Time {
        match w.kind {
            DowntimeKind::Scheduled => w.start - self.announce_lead,
            DowntimeKind::Unscheduled => w.start,
        }
    }
}
