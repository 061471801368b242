//! Run-time estimates learned from completed jobs (honest: nothing a scheduler could not know).

pub mod history;

pub use history::{Completed, RuntimeHistory};
