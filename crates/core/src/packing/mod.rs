//! Jobs sharing nodes by CPUs, memory and generic resources (DESIGN.md §3.8): each node's free
//! resources ([`Usage`]) and Slurm's `select/cons_tres` rule that places a job on them
//! ([`select`]).

pub mod free;
pub mod select;
pub mod tally;
pub mod usage;

pub use free::{Free, Layered, Least, NodeFree, Sparse};
pub use select::{select, NodeLimits};
pub use tally::{Tallies, Tally};
pub use usage::{Allocation, Usage};
