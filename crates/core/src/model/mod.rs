//! Immutable inputs of a simulation: the job table, the machine and the downtime calendar.

pub mod calendar;
pub mod job;
pub mod machine;
pub mod power;
pub mod rejection;
pub mod resources;
pub mod site;

pub use calendar::{Calendar, Downtime, DowntimeKind};
pub use job::{Job, JobTable, MAX_TIME};
pub use machine::{Machine, Overrun, MAX_NODES};
pub use power::{Energy, PowerModel};
pub use rejection::{Held, Rejection};
pub use resources::{
    memory_per_node, GresRequest, Memory, NodeSet, NodeShape, Request, Resources, SharedNodes,
    Sharing,
};
pub use site::{OverLimits, Partition, PartitionSpec, PartitionState, Site};
