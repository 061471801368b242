//! Why the engine refused a job at submission: no candidate partition accepts it (the first
//! candidate's reason; `model::site`), or its user's jobs reach a submission limit
//! (`engine::SubmitLimits`).

/// Why a job was refused at submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Rejection {
    /// More nodes than the partition has.
    LargerThanPartition = 0,
    /// More nodes than its MaxNodes.
    OverMaxNodes = 1,
    /// Fewer nodes than its MinNodes.
    UnderMinNodes = 2,
    /// A requested time over its MaxTime.
    OverMaxTime = 3,
    /// The partition is drained.
    Drained = 4,
    /// Its user already has as many jobs pending or running in its QOS as
    /// `MaxSubmitJobsPerUser` allows (Slurm's `QOSMaxSubmitJobPerUserLimit`).
    OverSubmitLimit = 5,
}

impl Rejection {
    /// The names, in the order of the codes.
    pub const NAMES: [&'static str; 6] = [
        "larger_than_partition",
        "over_max_nodes",
        "under_min_nodes",
        "over_max_time",
        "drained",
        "over_max_submit_jobs_per_user",
    ];
}
