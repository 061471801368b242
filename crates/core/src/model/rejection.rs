//! Why the engine refused a job at submission: no candidate partition accepts it (the first
//! candidate's reason; `model::site`), or its user's jobs reach a submission limit
//! (`engine::SubmitLimits`); and why a site holds a job it queued pending for ever.

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
    /// More memory per node than its `MaxMemPerNode` (jobs sharing nodes).
    OverMaxMemPerNode = 6,
}

impl Rejection {
    /// The names, in the order of the codes.
    pub const NAMES: [&'static str; 7] = [
        "larger_than_partition",
        "over_max_nodes",
        "under_min_nodes",
        "over_max_time",
        "drained",
        "over_max_submit_jobs_per_user",
        "over_max_mem_per_node",
    ];
}

/// Why a site holds a job pending for ever (it is queued, never started): no candidate
/// partition accepts it and the site holds such jobs (`OverLimits::Hold`, Slurm's
/// `EnforcePartLimits=NO`), by the first candidate's reason; or only partitions that are down
/// accept it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Held {
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
    /// Only partitions in state DOWN accept it.
    PartitionDown = 5,
    /// More memory per node than its `MaxMemPerNode` (Slurm's `MaxMemPerLimit`).
    OverMaxMemPerNode = 6,
}

impl Held {
    /// The names, in the order of the codes.
    pub const NAMES: [&'static str; 7] = [
        "larger_than_partition",
        "over_max_nodes",
        "under_min_nodes",
        "over_max_time",
        "drained",
        "partition_down",
        "over_max_mem_per_node",
    ];

    /// The hold for a partition's refusal (`None`: not a partition's limit).
    pub fn of(reason: Rejection) -> Option<Held> {
        Some(match reason {
            Rejection::LargerThanPartition => Held::LargerThanPartition,
            Rejection::OverMaxNodes => Held::OverMaxNodes,
            Rejection::UnderMinNodes => Held::UnderMinNodes,
            Rejection::OverMaxTime => Held::OverMaxTime,
            Rejection::Drained => Held::Drained,
            Rejection::OverMaxMemPerNode => Held::OverMaxMemPerNode,
            Rejection::OverSubmitLimit => return None,
        })
    }
}
