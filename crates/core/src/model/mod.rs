//! Immutable inputs of a simulation: the job table, the machine and the downtime calendar.

pub mod calendar;
pub mod job;
pub mod machine;
pub mod power;

pub use calendar::{Calendar, Downtime, DowntimeKind};
pub use job::{Job, JobTable};
pub use machine::{Machine, Overrun};
pub use power::{Energy, PowerModel};
