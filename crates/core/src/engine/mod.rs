//! The discrete-event engine: state, events, the step loop and what it records.

mod core;
mod queue;
mod record;
mod state;
mod view;

pub use self::core::{Engine, Inputs};
pub use queue::WaitQueue;
pub use record::RunLog;
pub use state::{Running, SimState};
pub use view::View;
