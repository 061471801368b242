//! The discrete-event engine: state, events, the step loop and what it records.

pub mod admission;
mod belief;
mod core;
mod decision;
mod inputs;
mod layer;
mod log;
mod policy;
pub mod power;
mod queue;
pub mod ranks;
mod record;
pub mod shared;
pub mod site;
mod sort;
mod state;
mod stop;
mod submit_limit;
pub mod utilization;
mod view;

pub use self::core::{DecisionPoint, Engine, STALLED_CALLS};
pub use belief::{Belief, Scenario};
pub use decision::{Reserve, Start, StartKind};
pub use inputs::Inputs;
pub use layer::{LayerActions, LayerSpec, PowerLayer};
pub use log::{Column, LogTable};
pub use policy::{Backfill, Decision, Policy, QueueService};
pub use queue::WaitQueue;
pub use record::RunLog;
pub use shared::{SharedState, SharedView};
pub use site::{SiteState, SiteView};
pub use state::{bounded_slowdown, Metrics, Running, SimState, BSLD_TAU};
pub use stop::StopFlag;
pub use submit_limit::SubmitLimits;
pub use view::{KnownJob, KnownJobs, View};
