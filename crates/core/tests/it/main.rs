//! Integration tests of the engine: one binary, one module per area.

mod advise;
mod common;
mod downtime;
mod easy;
mod external;
mod heuristics;
mod jobs;
mod packing;
mod partitions;
mod power_classes;
mod progress;
mod shared;
mod shared_downtime;
mod shared_external;
mod shared_search;
mod slurm;
mod slurm_limits;
mod slurm_shared;
