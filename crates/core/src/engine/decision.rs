//! What the engine records of a decision: each start and why, and the reservation held (the
//! decision itself and the policy contract: `policy.rs`).

/// How a job came to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum StartKind {
    /// Started by the queue scan, in priority order.
    #[default]
    Primary = 0,
    /// Started by EASY backfilling, behind a blocked top job.
    Backfill = 1,
    /// Started after a deliberate drain (MARS).
    Drain = 2,
}

impl StartKind {
    pub fn name(self) -> &'static str {
        match self {
            StartKind::Primary => "primary",
            StartKind::Backfill => "backfill",
            StartKind::Drain => "drain",
        }
    }
}

/// One job to start now: its queue position in the view, its index, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub pos: u32,
    pub job: u32,
    pub kind: StartKind,
}

/// The reservation a policy holds for its top job (recorded, for explanation and checks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reserve {
    pub job: u32,
    pub shadow_time: f64,
    pub extra: u32,
}
