//! Energy-aware power management: the IPM baselines and SNF-ICON (SNF-ICON paper §III-V).
//!
//! - [`screen`]: the Markovianity screen;
//! - [`predict`]: the log-normal runtime predictor;
//! - [`plan`]: the sequential future plan with the energy-aware node choice;
//! - [`spare`]: the warm-spare target optimisation;
//! - [`policy`]: the policies `fcfs-b+ipm`, `snf+ipm`, `snf-icon` and its variants.

pub mod plan;
pub mod policy;
pub mod predict;
pub mod screen;
pub mod spare;
