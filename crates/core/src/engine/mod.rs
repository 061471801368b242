//! The discrete-event engine: state, events, the step loop and what it records.

pub mod admission;
mod belief;
mod core;
mod decision;
pub mod power;
mod queue;
mod record;
mod state;
mod stop;
mod view;

pub use self::core::{Engine, Inputs, STALLED_CALLS};
pub use belief::{Belief, Scenario};
pub use decision::{Reserve, Start, StartKind};
pub use queue::WaitQueue;
pub use record::RunLog;
pub use state::{bounded_slowdown, Metrics, Running, SimState, BSLD_TAU};
pub use stop::StopFlag;
pub use view::View;
