//! Stopping a run from another thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A flag another thread raises to stop a run at once (Ctrl-C): the engine's loop stops
/// between two event times, and a search that sees it raised returns what it has. Not part of a configuration's identity: any two
/// flags compare equal.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Option<Arc<AtomicBool>>);

impl StopFlag {
    pub fn new(flag: Arc<AtomicBool>) -> Self {
        StopFlag(Some(flag))
    }

    /// Whether a stop was asked for (a relaxed load: cheap enough for every iteration).
    #[inline]
    pub fn raised(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

impl PartialEq for StopFlag {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
