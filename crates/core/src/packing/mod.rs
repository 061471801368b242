//! Jobs sharing nodes by CPUs, memory and generic resources (DESIGN.md §3.8): each node's free
//! resources ([`Usage`]) and Slurm's `select/cons_tres` rule that places a job on them
//! ([`select`]).

pub mod select;
pub mod usage;

pub use select::{select, NodeLimits};
pub use usage::{Allocation, Usage};
