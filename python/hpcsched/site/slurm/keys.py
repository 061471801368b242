"""The keys of Slurm 22.05's slurm.conf, by the kind of line they are on, and what a simulation
does with each: followed, read and not simulated (said once), or unknown (said, with the
nearest real key: ``MaxTim`` -> ``did you mean MaxTime?``).

The lists are slurm.conf(5) of Slurm 22.05 (tag ``slurm-22-05-9-1``,
``doc/man/man5/slurm.conf.5``), with the spellings its parser also takes
(``src/common/read_config.c``: ``Feature`` beside ``Features``, ``TRESWeights``, the partition's
``Priority``). slurmctld refuses to start on a key it does not know; hpcsched reads on and says
so, since a site's file may come from a newer Slurm (docs/semantics.md, "Hostile slurm.conf
and platform files").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hpcsched.exceptions import close_names, did_you_mean


def _words(text: str) -> list[str]:
    return text.split()


#: The top-level keys (slurm.conf(5), "PARAMETERS"), with the line kinds.
TOP_LEVEL_KEYS = _words(
    """
    AccountingStorageBackupHost AccountingStorageEnforce AccountingStorageExternalHost
    AccountingStorageHost AccountingStorageParameters AccountingStoragePass
    AccountingStoragePort AccountingStorageTRES AccountingStorageType AccountingStorageUser
    AccountingStoreFlags AcctGatherEnergyType AcctGatherFilesystemType
    AcctGatherInterconnectType AcctGatherNodeFreq AcctGatherProfileType
    AllowSpecResourcesUsage AuthAltParameters AuthAltTypes AuthInfo AuthType BackupAddr
    BackupController BatchStartTimeout BcastExclude BcastParameters BurstBufferType
    CliFilterPlugins ClusterName CommunicationParameters CompleteWait ControlAddr
    ControlMachine CoreSpecPlugin CpuFreqDef CpuFreqGovernors CredType DebugFlags
    DefCpuPerGPU DefMemPerCPU DefMemPerGPU DefMemPerNode DependencyParameters
    DisableRootJobs EioTimeout EnforcePartLimits Epilog EpilogMsgTime EpilogSlurmctld
    ExtSensorsFreq ExtSensorsType FairShareDampeningFactor FederationParameters FirstJobId
    GetEnvTimeout GpuFreqDef GresTypes GroupUpdateForce GroupUpdateTime HealthCheckInterval
    HealthCheckNodeState HealthCheckProgram InactiveLimit InteractiveStepOptions
    JobAcctGatherFrequency JobAcctGatherParams JobAcctGatherType JobCompHost JobCompLoc
    JobCompParams JobCompPass JobCompPort JobCompType JobCompUser JobContainerType
    JobFileAppend JobRequeue JobSubmitPlugins KeepAliveTime KillOnBadExit KillWait
    LaunchParameters LaunchType Licenses LogTimeFormat MCSParameters MCSPlugin MailDomain
    MailProg MaxArraySize MaxDBDMsgs MaxJobCount MaxJobId MaxMemPerCPU MaxMemPerNode
    MaxNodeCount MaxStepCount MaxTasksPerNode MessageTimeout MinJobAge MpiDefault MpiParams
    NodeFeaturesPlugins OverTimeLimit PluginDir PlugStackConfig PowerParameters PowerPlugin
    PreemptExemptTime PreemptMode PreemptType PrEpParameters PrEpPlugins PriorityCalcPeriod
    PriorityDecayHalfLife PriorityFavorSmall PriorityFlags PriorityMaxAge PriorityParameters
    PrioritySiteFactorParameters PrioritySiteFactorPlugin PriorityType
    PriorityUsageResetPeriod PriorityWeightAge PriorityWeightAssoc PriorityWeightFairshare
    PriorityWeightJobSize PriorityWeightPartition PriorityWeightQOS PriorityWeightTRES
    PrivateData ProctrackType Prolog PrologEpilogTimeout PrologFlags PrologSlurmctld
    PropagatePrioProcess PropagateResourceLimits PropagateResourceLimitsExcept RebootProgram
    ReconfigFlags RequeueExit RequeueExitHold ResumeFailProgram ResumeProgram ResumeRate
    ResumeTimeout ResvEpilog ResvOverRun ResvProlog ReturnToService RoutePlugin
    SchedulerParameters SchedulerTimeSlice SchedulerType ScronParameters SelectType
    SelectTypeParameters SlurmSchedLogFile SlurmSchedLogLevel SlurmUser SlurmctldAddr
    SlurmctldDebug SlurmctldHost SlurmctldLogFile SlurmctldParameters SlurmctldPidFile
    SlurmctldPlugstack SlurmctldPort SlurmctldPrimaryOffProg SlurmctldPrimaryOnProg
    SlurmctldSyslogDebug SlurmctldTimeout SlurmdDebug SlurmdLogFile SlurmdParameters
    SlurmdPidFile SlurmdPort SlurmdSpoolDir SlurmdSyslogDebug SlurmdTimeout SlurmdUser
    SrunEpilog SrunPortRange SrunProlog StateSaveLocation SuspendExcNodes SuspendExcParts
    SuspendProgram SuspendRate SuspendTime SuspendTimeout SwitchParameters SwitchType
    TCPTimeout TaskEpilog TaskPlugin TaskPluginParam TaskProlog TmpFS TopologyParam
    TopologyPlugin TrackWCKey TreeWidth UnkillableStepProgram UnkillableStepTimeout UsePAM
    VSizeFactor WaitTime X11Parameters DownNodes FrontendName NodeName PartitionName NodeSet
"""
)
#: The top-level keys the simulation follows (the ``Priority*`` ones it does not are said by
#: ``settings``, the line kinds have lists of their own).
TOP_LEVEL_FOLLOWED = _words(
    """
    ClusterName EnforcePartLimits SchedulerType SchedulerParameters AccountingStorageType
    AccountingStorageEnforce FairShareDampeningFactor PriorityType PriorityWeightAge
    PriorityWeightAssoc PriorityWeightFairshare PriorityWeightJobSize
    PriorityWeightPartition PriorityWeightQOS PriorityWeightTRES PriorityMaxAge
    PriorityDecayHalfLife PriorityCalcPeriod PriorityFavorSmall PriorityFlags
    PriorityUsageResetPeriod NodeName PartitionName NodeSet SelectType
"""
)

#: The keys of a ``NodeName`` line, and those followed (CPUs, memory, Gres and features shape
#: the node groups; ``State`` is followed for UNKNOWN and IDLE: nodes start up).
NODE_KEYS = _words(
    """
    NodeName NodeHostname NodeAddr BcastAddr Boards CoreSpecCount CoresPerSocket CpuBind
    CPUs CpuSpecList Feature Features Gres MemSpecLimit Port Procs RealMemory Reason Sockets
    SocketsPerBoard State ThreadsPerCore TmpDisk TRESWeights Weight
"""
)
NODE_FOLLOWED = _words(
    """
    NodeName Boards CoresPerSocket CPUs Feature Features Gres Procs RealMemory Sockets
    SocketsPerBoard State ThreadsPerCore
"""
)
#: The keys of a ``PartitionName`` line, and those followed.
PARTITION_KEYS = _words(
    """
    PartitionName AllocNodes AllowAccounts AllowGroups AllowQos Alternate CpuBind Default
    DefaultTime DefCpuPerGPU DefMemPerCPU DefMemPerGPU DefMemPerNode DenyAccounts DenyQos
    DisableRootJobs ExclusiveUser GraceTime Hidden LLN MaxCPUsPerNode MaxMemPerCPU
    MaxMemPerNode MaxNodes MaxTime MinNodes Nodes OverSubscribe OverTimeLimit PreemptMode
    Priority PriorityJobFactor PriorityTier QOS ReqResv ResumeTimeout RootOnly
    SelectTypeParameters Shared State SuspendTime SuspendTimeout TRESBillingWeights
"""
)
PARTITION_FOLLOWED = _words(
    """
    PartitionName Default MaxNodes MaxTime MinNodes Nodes Priority PriorityJobFactor
    PriorityTier State TRESBillingWeights
"""
)
#: The keys of a ``NodeSet`` line (all followed).
NODESET_KEYS = ["NodeSet", "Feature", "Nodes"]
#: The keys followed besides where jobs share nodes (``SelectType=select/cons_tres`` or
#: ``cons_res``: docs/formats.md, "slurm.conf"), by kind of line ("" for the top level).
#: ``MaxMemPerNode`` is read into the partitions, whose runs say it is not simulated yet.
SHARED_FOLLOWED = {
    "": _words("SelectTypeParameters GresTypes DefMemPerCPU DefMemPerNode MaxMemPerNode"),
    "NodeName": _words("CoreSpecCount CpuSpecList MemSpecLimit Weight"),
    "PartitionName": _words("DefMemPerCPU DefMemPerNode MaxMemPerNode OverSubscribe Shared"),
}

#: ``SchedulerParameters`` of Slurm 22.05 (slurm.conf(5)).
SCHEDULER_PARAMETERS = _words(
    """
    allow_zero_lic assoc_limit_stop batch_sched_delay bb_array_stage_cnt bf_busy_nodes
    bf_continue bf_hetjob_immediate bf_hetjob_prio bf_interval bf_job_part_count_reserve
    bf_licenses bf_max_job_array_resv bf_max_job_assoc bf_max_job_part bf_max_job_start
    bf_max_job_test bf_max_job_user bf_max_job_user_part bf_max_time bf_min_age_reserve
    bf_min_prio_reserve bf_node_space_size bf_one_resv_per_job bf_resolution
    bf_running_job_reserve bf_window bf_window_linear bf_yield_interval bf_yield_sleep
    build_queue_timeout correspond_after_task_cnt default_queue_depth defer delay_boot
    disable_job_shrink disable_hetjob_steps enable_hetjob_steps enable_user_top Ignore_NUMA
    ignore_prefer_validation max_array_tasks max_rpc_cnt max_sched_time max_script_size
    max_switch_wait no_backup_scheduling no_env_cache nohold_on_prolog_fail
    pack_serial_at_end partition_job_depth preempt_reorder_count preempt_strict_order
    preempt_youngest_first reduce_completing_frag requeue_setup_env_fail salloc_wait_nodes
    sbatch_wait_nodes sched_interval sched_max_job_start sched_min_interval spec_cores_first
    step_retry_count step_retry_time whole_hetjob
"""
)
#: ``PriorityFlags`` of Slurm 22.05 (slurm.conf(5); ``ACCRUE_ALWAYS`` from its parser,
#: ``FAIR_TREE`` as older releases wrote Fair Tree, now the default).
PRIORITY_FLAGS = _words(
    """
    ACCRUE_ALWAYS CALCULATE_RUNNING DEPTH_OBLIVIOUS FAIR_TREE INCR_ONLY MAX_TRES
    NO_FAIR_TREE NO_NORMAL_ALL NO_NORMAL_ASSOC NO_NORMAL_PART NO_NORMAL_QOS NO_NORMAL_TRES
    SMALL_RELATIVE_TO_TIME
"""
)

#: Each line kind's keys and those followed, by the kind's lower-case key.
LINE_KINDS = {
    "nodename": ("NodeName", NODE_KEYS, NODE_FOLLOWED),
    "partitionname": ("PartitionName", PARTITION_KEYS, PARTITION_FOLLOWED),
    "nodeset": ("NodeSet", NODESET_KEYS, NODESET_KEYS),
}
#: Each top-level key by its lower-case form, as Slurm's documentation writes it.
CANONICAL = {k.lower(): k for k in TOP_LEVEL_KEYS}


def unknown_key(key: str, kind: str, known: list[str]) -> str:
    """``MaxTim is not a PartitionName key of Slurm 22.05 (ignored); did you mean
    MaxTime?``"""
    close = did_you_mean(close_names(key, known)[:1])  # (the nearest only)
    return f"{key} is not {kind} of Slurm 22.05 (ignored)" + (f"; {close}" if close else "")


#: Unknown keys said one by one, with the nearest real key; past them a file's other unknown
#: keys are counted in one note (a hostile file may hold a million).
UNKNOWN_SAID = 20


def unknown_notes(head: str, names: list[str], kind: str, known: list[str]) -> list[str]:
    """Notes on the unknown ``names`` of one setting (``head``: where, and the setting), each
    once: the first ``UNKNOWN_SAID`` with the nearest real name, then how many more."""
    distinct = list(dict.fromkeys(names))
    notes = [f"{head} {unknown_key(name, kind, known)}" for name in distinct[:UNKNOWN_SAID]]
    if len(distinct) > UNKNOWN_SAID:
        more = len(distinct) - UNKNOWN_SAID
        notes.append(f"{head}: and {more:,} more names Slurm 22.05 does not know (ignored)")
    return notes


@dataclass
class KeyNotes:
    """What a file's keys say, each once: the unknown keys (with the nearest real one) and the
    known keys not simulated, each where it first appears (a file and a line)."""

    #: (line kind, key lower case) -> (key as written, what it is not, the kind's keys, file,
    #: line); the message is made only for the keys said (the nearest key costs a comparison
    #: with every real one)
    unknown: dict[tuple[str, str], tuple[str, str, list[str], str, int]] = field(
        default_factory=dict
    )
    unused: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)

    def line(self, kind: str, pairs: list[tuple[str, str]], path: str, number: int) -> None:
        """The keys of a ``NodeName``, ``PartitionName`` or ``NodeSet`` line (``kind``: its
        first key, lower case)."""
        name, keys, followed = LINE_KINDS[kind]
        by_lower = {k.lower(): k for k in keys}
        done = {k.lower() for k in followed}
        for key, value in pairs[1:]:
            lower = key.lower()
            if lower not in by_lower:
                self.unknown.setdefault((name, lower), (key, f"a {name} key", keys, path, number))
            elif lower not in done:
                self.unused.setdefault((name, by_lower[lower]), (path, number))
            elif (kind, lower) == ("nodename", "state") and value.upper() not in _UP:
                self.unused.setdefault((name, f"State={value.upper()}"), (path, number))

    def top(self, key: str, path: str, number: int) -> None:
        """A top-level key."""
        lower = key.lower()
        if lower not in CANONICAL:
            what = "a slurm.conf setting"
            self.unknown.setdefault(("", lower), (key, what, TOP_LEVEL_KEYS, path, number))
        elif CANONICAL[lower] not in TOP_LEVEL_FOLLOWED:
            self.unused.setdefault(("", CANONICAL[lower]), (path, number))

    def notes(self, shared: bool = False) -> list[str]:
        """One note per unknown key (its file and line; past the first ``UNKNOWN_SAID``, one note
        counts the rest), and one per line kind listing the keys read and not simulated (each
        with its first line); ``shared``: jobs share nodes, and ``SHARED_FOLLOWED`` are
        followed too."""
        unknown = list(self.unknown.values())
        out = [
            f"{path}, line {number}: {unknown_key(key, what, keys)}"
            for key, what, keys, path, number in unknown[:UNKNOWN_SAID]
        ]
        if len(unknown) > UNKNOWN_SAID:
            _, _, _, path, number = unknown[UNKNOWN_SAID]
            out.append(
                f"{path}, line {number}: and {len(unknown) - UNKNOWN_SAID:,} more keys Slurm "
                "22.05 does not know (ignored)"
            )
        for kind in ("", "NodeName", "PartitionName"):
            followed = SHARED_FOLLOWED[kind] if shared else []
            found = [
                (key, where)
                for (k, key), where in self.unused.items()
                if k == kind and key not in followed
            ]
            if not found:
                continue
            files = {path for _, (path, _) in found}
            listed = ", ".join(
                f"{key} (line {number}{'' if len(files) == 1 else f' of {path}'})"
                for key, (path, number) in found
            )
            head = f"{found[0][1][0]}: " if len(files) == 1 else ""
            what = "settings" if not kind else f"{kind} keys"
            out.append(f"{head}{what} read and not simulated (ignored): {listed}")
        return out


#: Node states a simulation starts its nodes in (up).
_UP = ("UNKNOWN", "IDLE")
