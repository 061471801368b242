//! hpcsched-core: the engine of hpcsched. Internal crate: use it through the `hpcsched`
//! Python package.
//!
//! - [`model`]: immutable inputs (jobs, machine, downtime calendar);
//! - [`packing`]: resources inside nodes, and Slurm's cons_tres placement on them;
//! - [`engine`]: the event loop, the cloneable simulation state, the view policies get;
//! - [`sched`]: queue ordering (MARS Table II), EASY backfilling, SNF;
//! - [`estimate`]: run-time estimates learned from completed jobs;
//! - [`io`]: fast parsing of large trace files;
//! - [`layout`]: named nodes for schedules that count them (charts, Batsim's jobs.csv);
//! - [`advise`]: plans from a live cluster's snapshot (the production advisor);
//! - [`agent`]: decision points, observations and rewards for learning agents;
//! - [`spec`]: one run as names and numbers, and the engine and policy built from it.

pub mod advise;
pub mod agent;
pub mod engine;
pub mod error;
pub mod estimate;
pub mod io;
pub mod layout;
pub mod model;
pub mod packing;
pub mod power;
pub mod sched;
pub mod search;
pub mod spec;

pub use engine::{Belief, Engine, Inputs, RunLog, Scenario, SimState, StopFlag, View};
pub use error::{CoreError, Result};
pub use model::{
    Calendar, Downtime, DowntimeKind, Job, JobTable, Machine, Overrun, MAX_NODES, MAX_TIME,
};
pub use sched::{Backfill, Decision, Heuristic, Policy, QueuePolicy, Snf, Start, StartKind};
