//! Slurm's own scheduler (`--policy slurm`): multifactor priority with fair-share over an
//! association tree and QOS, the main scheduler and the backfill scheduler, as Slurm 22.05 does
//! them (docs/semantics.md, "Slurm's scheduler").

pub mod clock;
pub mod config;
pub mod fairshare;
pub mod limits;
pub mod node_map;
pub mod nodes;
pub mod passes;
pub mod policy;
pub mod priority;
pub mod setup;
pub mod space;

pub use config::{FairShare, PrioritySettings, SchedulerSettings};
pub use limits::{Qos, Scope, TresLimit};
pub use policy::SlurmPolicy;
pub use setup::{Association, SlurmJobs, SlurmSetup};
