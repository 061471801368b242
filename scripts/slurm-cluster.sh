#!/usr/bin/env bash
# A real Slurm 22.05 cluster on this one machine, for tests: a private munged, one slurmctld and four
# slurmd (nodes c[1-4] x 4 CPUs), all on loopback, all state under one base folder. /etc/slurm and
# /etc/munge are never touched. Background and quirks: /work/shared/notes/slurm-local-cluster.md.
# Two overlapping partitions with different tiers and limits: debug = c[1-4], the default,
# PriorityTier=1, no MaxTime or MaxNodes; batch = c[3-4], PriorityTier=2 (Slurm schedules its
# jobs first on the nodes both share), MaxNodes=2, MaxTime=60 (minutes). Both DefaultTime=10.
#
# With --accounting the cluster also keeps accounts (sacct, fair-share): a private MariaDB and a
# slurmdbd under BASE, the cluster `ci` with accounts acct_a (users u1, u2) and acct_b (user u3),
# Unix users created with `useradd -M` when missing, and multifactor priority with age and
# fair-share weights (see write_conf). It uses its own ports, so it can run beside a plain
# cluster. Recipe and pitfalls: /work/shared/notes/slurm-accounting.md.
#
# With --tres (only beside --accounting) the nodes are shared by cores, memory and GPUs as
# Slurm's select/cons_tres shares them: SelectTypeParameters=CR_Core_Memory, GresTypes=gpu, nodes
# c[1-4] of 8 CPUs, 8000 MB and 2 GPUs each (SlurmdParameters=config_overrides lets them claim
# more than the machine has), and a gres.conf beside slurm.conf naming fake GPU device files
# (character devices with /dev/null's numbers, made with mknod under BASE/dev: a gres.conf
# without File= leaves the nodes INVAL). sacct records each job's GPUs (AccountingStorageTRES=
# gres/gpu) beside its cores and memory. Accounts, users and the priority weights are the
# accounting cluster's; its ports are its own again, so it runs beside both other kinds.
# Recipe: /work/shared/notes/slurm-tres-cluster.md.
#
#   scripts/slurm-cluster.sh install        # apt-get the Debian packages if slurmctld is missing
#   scripts/slurm-cluster.sh install-accounting  # also mariadb-server and slurmdbd, if missing
#   scripts/slurm-cluster.sh start BASE     # last stdout line: export SLURM_CONF=BASE/etc/slurm.conf
#   scripts/slurm-cluster.sh start BASE --accounting  # the same, with slurmdbd and MariaDB
#   scripts/slurm-cluster.sh start BASE --accounting --tres  # and nodes shared by cores, MB, GPUs
#   scripts/slurm-cluster.sh status BASE    # exit 0 if slurmctld, all nodes (and slurmdbd) answer
#   scripts/slurm-cluster.sh stop BASE      # cancel all jobs, stop every daemon; never fails
set -euo pipefail

# The daemons live in sbin, which a non-login PATH may lack.
export PATH="$PATH:/usr/sbin:/sbin"

readonly NODES=(c1 c2 c3 c4)
readonly CPUS_PER_NODE=4
# Ports away from Slurm's defaults (6817/6818) so a system Slurm cannot collide with ours. The
# accounting cluster has its own (and slurmdbd's 18819 and MariaDB's 13306, away from 6819 and
# 3306), so the two kinds can run at once: the advisor's tests on one, accounting on the other.
readonly PLAIN_CTLD_PORT=16817
readonly PLAIN_FIRST_NODE_PORT=17001
readonly ACCT_CTLD_PORT=18817
readonly ACCT_FIRST_NODE_PORT=18001
readonly ACCT_DBD_PORT=18819
readonly ACCT_DB_PORT=13306
# The shared-nodes (--tres) cluster's, beside both.
readonly TRES_CTLD_PORT=19817
readonly TRES_FIRST_NODE_PORT=19001
readonly TRES_DBD_PORT=19819
readonly TRES_DB_PORT=13307
# Its nodes: CPUs, memory (MB) and GPUs each.
readonly TRES_CPUS_PER_NODE=8
readonly TRES_MEMORY_MB=8000
readonly TRES_GPUS_PER_NODE=2
readonly START_TIMEOUT=60
# An accounting start takes 5 to 8 s on an idle machine (MariaDB's first start, then the accounts,
# each sacctmgr call 0.2 to 0.6 s); leave room for a busy one.
readonly ACCT_START_TIMEOUT=120
readonly DRAIN_TIMEOUT=30
# The accounting cluster's associations: account -> its users (the first account of a user is
# its default account).
readonly ACCOUNTS=(acct_a acct_b)
readonly -A ACCOUNT_USERS=([acct_a]="u1 u2" [acct_b]="u3")
# The database user slurmdbd logs in as. The password is no secret: the database listens on
# 127.0.0.1 only, holds nothing but this throwaway cluster's records, and dies with it.
readonly DB_USER=slurm
readonly DB_PASS=slurmpw
readonly DB_NAME=slurm_acct_db

# Set by cmd_start (with or without --accounting and --tres); stop and status read the mode back
# from the slurm.conf that start wrote.
ACCOUNTING=0
TRES=0
CTLD_PORT=$PLAIN_CTLD_PORT
FIRST_NODE_PORT=$PLAIN_FIRST_NODE_PORT
DBD_PORT=$ACCT_DBD_PORT
DB_PORT=$ACCT_DB_PORT

die() {
    echo "slurm-cluster: $*" >&2
    exit 1
}

usage() {
    # The usage lines are the header comment lines that show a command.
    sed -n 's/^#   \(scripts\/slurm-cluster.sh .*\)/\1/p' "$0" >&2
    exit 2
}

# BASE as an absolute path: slurm.conf and the daemons need absolute paths.
abs_base() {
    [[ -n "${1:-}" ]] || usage
    mkdir -p "$1"
    (cd "$1" && pwd -P)
}

use_base() {
    BASE=$(abs_base "${1:-}")
    export SLURM_CONF="$BASE/etc/slurm.conf"
    PIDS="$BASE/run/pids"
}

# A PID counts as running only if it is one of our daemons and not a zombie: a stopped daemon can
# linger as a zombie for ~2 s, and a stale pid file must never make us signal an unrelated process.
alive() {
    local pid=$1 comm state
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
    case "$comm" in
        munged | slurmctld | slurmd | slurmdbd | mariadbd) ;;
        *) return 1 ;;
    esac
    # Field 3 of /proc/PID/stat is the state; the command name before it may contain spaces.
    state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1) || return 1
    [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

pid_of() {
    cat "$PIDS/$1.pid" 2>/dev/null || true
}

any_alive() {
    local f
    for f in "$PIDS"/*.pid; do
        [[ -e "$f" ]] || continue
        if alive "$(cat "$f")"; then return 0; fi
    done
    return 1
}

ctld_up() {
    scontrol ping 2>/dev/null | grep -q 'is UP'
}

# With two partitions sinfo prints a node once per partition, hence -N and sort -u.
count_nodes() {
    sinfo -h -N "$@" -o %N 2>/dev/null | sort -u | grep -c . || true
}

cmd_install() {
    if command -v slurmctld >/dev/null 2>&1; then
        return 0
    fi
    local pkgs=(munge slurmctld slurmd slurm-client)
    export DEBIAN_FRONTEND=noninteractive
    # Try without an update first: the package lists may already be fresh (and update costs time).
    if ! apt-get install -y -qq "${pkgs[@]}" >/dev/null 2>&1; then
        apt-get update -qq >/dev/null
        apt-get install -y -qq "${pkgs[@]}" >/dev/null
    fi
    command -v slurmctld >/dev/null 2>&1 || die "slurmctld still not on PATH after install"
}

# Everything --accounting runs, as programs on PATH.
accounting_programs() {
    local prog
    for prog in slurmdbd sacctmgr sacct mariadbd mariadb-install-db mariadb-admin mariadb useradd; do
        command -v "$prog" >/dev/null 2>&1 || return 1
    done
}

# Slurm first (as install), then MariaDB and slurmdbd. slurm-wlm-mysql-plugin (slurmdbd's
# accounting_storage/mysql) is a dependency of slurmdbd, named anyway since slurmdbd is useless
# without it. No recommends: the server alone is what we run (about 17 packages, 8 to 17 s). Where a
# policy-rc.d forbids it (containers), apt starts no packaged mariadb or slurmdbd service; where
# it does start them they listen on 3306 and 6819, not on our ports, and /etc is never read by ours.
cmd_install_accounting() {
    cmd_install
    if accounting_programs; then
        return 0
    fi
    local pkgs=(mariadb-server slurmdbd slurm-wlm-mysql-plugin)
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1; then
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
    fi
    accounting_programs || die "slurmdbd or MariaDB still not on PATH after install"
}

# True when BASE's slurm.conf (written by start) sends accounting to slurmdbd.
conf_has_accounting() {
    grep -qx 'AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF" 2>/dev/null
}

# True when BASE's slurm.conf (written by start --tres) gives the nodes GPUs.
conf_has_gpus() {
    grep -qx 'GresTypes=gpu' "$SLURM_CONF" 2>/dev/null
}

# The nodes whose GPUs slurmctld counts as configured (a node whose slurmd found fewer device
# files is INVAL and shows fewer).
count_gpu_nodes() {
    sinfo -h -N -o '%N %G' 2>/dev/null | sort -u | grep -c " gpu:$TRES_GPUS_PER_NODE\b" || true
}

# slurmdbd answers (through sacctmgr, which asks it, not the database). A failing call takes about
# 2 s (munge retries), and one that cannot connect can hang longer: hence the timeout.
dbd_up() {
    timeout 10 sacctmgr -n -P show cluster format=cluster >/dev/null 2>&1
}

# A MariaDB client program on our database as root: --no-defaults must be its first option.
db_client() {
    local prog=$1
    shift
    "$prog" --no-defaults -S "$BASE/mysql/mysqld.sock" -u root "$@"
}

# The accounting cluster's slurm.conf lines that differ from the plain one's, with why:
# - AccountingStorage*: jobs recorded by slurmdbd. AccountingStoragePass names our munge socket:
#   the connection to slurmdbd (slurmctld's, sacct's, sacctmgr's, sshare's) ignores AuthInfo and
#   would use /run/munge/munge.socket.2 without it. Enforce=associations rejects a user with no
#   association (as sites do); limits and qos make the QOS and association limits tests set with
#   sacctmgr count (none is set here, so they change nothing until then).
# - JobAcctGatherType=jobacct_gather/linux: per-step CPU and memory use in sacct, sampled every 5 s.
# - PrologFlags=Contain: every job gets the `.extern` step that sites running pam_slurm_adopt (most
#   of them) record, so sacct output looks like theirs.
# - Priority: multifactor priority shows its factors within a test of a few minutes. Slurm
#   recomputes age and charges usage only at decay ticks, every PriorityCalcPeriod (in minutes: 1 is
#   the least). Fair-share weighs most (10000) so that who ran what moves the order within one tick;
#   age (1000) saturates after PriorityMaxAge=10 min, i.e. +100 a minute, enough to overtake job
#   size and partition (100 each, tie-breakers) but not fair-share; usage halves every 10 min and is
#   never reset, so a test sees decay without waiting hours. QOS weight 0: only QOS `normal` exists.
# With --tres: CR_Core_Memory (cores and memory are consumed, CR_CPU would ignore memory),
# GresTypes=gpu (without it Slurm drops the nodes' GPUs) and AccountingStorageTRES=gres/gpu (sacct
# records no GPUs otherwise: cpu, mem and node are recorded by default).
acct_conf_lines() {
    local select=CR_CPU tres_line="" gres_line=""
    if ((TRES)); then
        select=CR_Core_Memory
        tres_line=$'AccountingStorageTRES=gres/gpu\n'
        gres_line=$'GresTypes=gpu\n'
    fi
    cat <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$BASE/munge/munge.socket
AccountingStorageEnforce=associations,limits,qos
${tres_line}JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
PrologFlags=Contain
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=$select
${gres_line}PriorityType=priority/multifactor
PriorityDecayHalfLife=00:10:00
PriorityCalcPeriod=1
PriorityMaxAge=00:10:00
PriorityUsageResetPeriod=NONE
PriorityWeightAge=1000
PriorityWeightFairshare=10000
PriorityWeightJobSize=100
PriorityWeightPartition=100
PriorityWeightQOS=0
EOF
}

# What a node has: CPUs only, or with --tres also memory to share and GPUs.
node_resources() {
    if ((TRES)); then
        echo "CPUs=$TRES_CPUS_PER_NODE RealMemory=$TRES_MEMORY_MB Gres=gpu:$TRES_GPUS_PER_NODE"
    else
        echo "CPUs=$CPUS_PER_NODE RealMemory=1000"
    fi
}

plain_conf_lines() {
    cat <<EOF
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
PriorityType=priority/multifactor
PriorityWeightJobSize=1000
PriorityWeightPartition=1000
PriorityWeightAge=0
PriorityWeightFairshare=0
PriorityWeightQOS=0
EOF
}

write_conf() {
    local host last_port middle
    host=$(hostname -s)
    last_port=$((FIRST_NODE_PORT + ${#NODES[@]} - 1))
    if ((ACCOUNTING)); then
        middle=$(acct_conf_lines)
    else
        middle=$(plain_conf_lines)
    fi
    cat >"$SLURM_CONF" <<EOF
# Generated by scripts/slurm-cluster.sh: a throwaway test cluster under $BASE.
ClusterName=ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$BASE/munge/munge.socket
CommunicationParameters=NoInAddrAny
StateSaveLocation=$BASE/state
SlurmdSpoolDir=$BASE/spool/%n
SlurmctldPidFile=$BASE/run/slurmctld.pid
SlurmdPidFile=$BASE/run/slurmd-%n.pid
SlurmctldLogFile=$BASE/log/slurmctld.log
SlurmdLogFile=$BASE/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
$middle
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=600
NodeName=c[1-${#NODES[@]}] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$FIRST_NODE_PORT-$last_port] $(node_resources) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE DefaultTime=10 State=UP
PartitionName=batch Nodes=c[3-4] PriorityTier=2 MaxNodes=2 MaxTime=60 DefaultTime=10 State=UP
EOF
}

# The GPUs of --tres: slurmd counts a node's GPUs by the device files gres.conf names (with
# Count= alone, or Flags=CountOnly, it reports none and slurmctld sets every node INVAL). There is
# no GPU here: character devices with /dev/null's numbers stand in, one per GPU, shared by the
# four slurmd (all on this one host). gres.conf is read from slurm.conf's folder.
write_gres_conf() {
    local last=$((TRES_GPUS_PER_NODE - 1)) i
    rm -rf "${BASE:?}/dev"
    mkdir -p "$BASE/dev"
    for ((i = 0; i <= last; i++)); do
        mknod "$BASE/dev/gpu$i" c 1 3 || start_failed "mknod $BASE/dev/gpu$i failed"
    done
    cat >"$(dirname "$SLURM_CONF")/gres.conf" <<EOF
# Generated by scripts/slurm-cluster.sh: fake GPUs of the throwaway test cluster under $BASE.
NodeName=c[1-${#NODES[@]}] Name=gpu File=$BASE/dev/gpu[0-$last]
EOF
}

# slurmdbd refuses a slurmdbd.conf readable by others or owned by anyone but its SlurmUser (root).
# It reads the file beside $SLURM_CONF. StorageHost=127.0.0.1, not localhost: localhost would make
# the client library use the system socket /run/mysqld/mysqld.sock instead of our port.
write_dbd_conf() {
    local conf
    conf="$(dirname "$SLURM_CONF")/slurmdbd.conf"
    rm -f "$conf"
    (umask 077 && cat >"$conf") <<EOF
# Generated by scripts/slurm-cluster.sh: the throwaway test cluster's slurmdbd under $BASE.
AuthType=auth/munge
AuthInfo=socket=$BASE/munge/munge.socket
DbdHost=localhost
DbdPort=$DBD_PORT
SlurmUser=root
DebugLevel=info
LogFile=$BASE/log/slurmdbd.log
PidFile=$BASE/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=$DB_USER
StoragePass=$DB_PASS
StorageLoc=$DB_NAME
EOF
    chown root:root "$conf"
    chmod 600 "$conf"
}

# A private MariaDB: its own data folder, socket and port under BASE. --no-defaults must come
# first or /etc/mysql/*.cnf is read too; root (the Unix user) logs in through the socket without a
# password. A fresh database each start, like the fresh state folder: slurmctld starts job ids at 1
# again, and old records under the same ids would mix with the new ones in sacct.
# innodb_buffer_pool_size=1G and innodb_lock_wait_timeout=900: below them slurmdbd logs
# "Database settings not recommended values" (harmless, but an error line in every log).
start_db() {
    local deadline=$1 out
    rm -rf "${BASE:?}/mysql"
    mkdir -p "$BASE/mysql"
    # Its log is not a .out: show_logs would print its chatty success on every later failure.
    if ! mariadb-install-db --no-defaults --datadir="$BASE/mysql/data" --user=root \
        --auth-root-authentication-method=socket --skip-test-db \
        </dev/null >"$BASE/log/mariadb-install-db.log" 2>&1; then
        start_failed "mariadb-install-db failed: $(tail -n 15 "$BASE/log/mariadb-install-db.log")"
    fi
    launch mariadbd mariadbd --no-defaults --user=root --datadir="$BASE/mysql/data" \
        --socket="$BASE/mysql/mysqld.sock" --port="$DB_PORT" --bind-address=127.0.0.1 \
        --pid-file="$BASE/mysql/mysqld.pid" --log-error="$BASE/log/mariadbd.log" \
        --innodb-buffer-pool-size=1G --innodb-lock-wait-timeout=900
    until db_client mariadb-admin --connect-timeout=2 ping >/dev/null 2>&1; do
        alive "$(pid_of mariadbd)" || start_failed "mariadbd exited"
        ((SECONDS < deadline)) || start_failed "MariaDB did not answer within ${ACCT_START_TIMEOUT}s"
        sleep 0.1
    done
    # slurmdbd connects over TCP to 127.0.0.1, which MariaDB may match as 'localhost' or as
    # '127.0.0.1' (name resolution): grant both.
    if ! out=$(db_client mariadb 2>&1 <<EOF
CREATE DATABASE IF NOT EXISTS $DB_NAME;
CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PASS';
CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'localhost';
GRANT ALL ON $DB_NAME.* TO '$DB_USER'@'127.0.0.1';
FLUSH PRIVILEGES;
EOF
    ); then
        start_failed "creating the database and its user failed: $out"
    fi
}

# slurmdbd creates its tables on its first start (0.3 s on a fresh database). When it cannot reach
# the database it does not exit but retries every 5 s: only the deadline ends that wait.
start_dbd() {
    local deadline=$1
    write_dbd_conf
    launch slurmdbd slurmdbd -D
    until dbd_up; do
        alive "$(pid_of slurmdbd)" || start_failed "slurmdbd exited"
        ((SECONDS < deadline)) || start_failed "slurmdbd did not answer within ${ACCT_START_TIMEOUT}s"
        sleep 0.2
    done
}

sacctmgr_add() {
    local out
    out=$(timeout 20 sacctmgr -i add "$@" 2>&1) || start_failed "sacctmgr add $* failed: $out"
}

# The cluster, the accounts and their users, before slurmctld starts: associations made while it
# runs get a fair-share factor of 0 until its next decay tick, while slurmctld's startup tick
# computes real ones for these. `sacctmgr add` fails ("Nothing new added") on what exists, hence
# the one `show` first (each sacctmgr call costs 0.2 to 0.6 s, whatever the database's speed).
add_associations() {
    local have account users user
    have=$(timeout 20 sacctmgr -n -P show assoc format=cluster,account,user 2>&1) \
        || start_failed "sacctmgr show assoc failed: $have"
    grep -q '^ci|' <<<"$have" || sacctmgr_add cluster ci
    for account in "${ACCOUNTS[@]}"; do
        grep -qx "ci|$account|" <<<"$have" \
            || sacctmgr_add account "$account" Cluster=ci Description="$account" Organization=ci
        users=()
        for user in ${ACCOUNT_USERS[$account]}; do
            grep -qx "ci|$account|$user" <<<"$have" || users+=("$user")
        done
        if ((${#users[@]})); then
            sacctmgr_add user "$(IFS=,; echo "${users[*]}")" Account="$account" Cluster=ci
        fi
    done
}

# Jobs run as these users (`sbatch --uid=u1 --gid=u1`, or su): Unix accounts without a home.
add_unix_users() {
    local account user
    for account in "${ACCOUNTS[@]}"; do
        for user in ${ACCOUNT_USERS[$account]}; do
            id -u "$user" >/dev/null 2>&1 || useradd -M -s /bin/bash "$user" \
                || start_failed "useradd $user failed"
        done
    done
}

# Runs a daemon in foreground mode in the background; its stdio goes to log/NAME.out so that callers
# capturing our stdout ($(...), pipes) are not held open by the daemons.
launch() {
    local name=$1 pid comm want tries=0
    shift
    "$@" </dev/null >>"$BASE/log/$name.out" 2>&1 &
    pid=$!
    echo "$pid" >"$PIDS/$name.pid"
    # Until the forked shell has exec'd the daemon, its command name is still the shell's, and
    # `alive` would take a daemon that is starting for one that exited (seen on a loaded
    # machine). Wait for the exec, at most 5 s: a command that cannot be run never gets there.
    want=$(basename "$1")
    want=${want:0:15}
    while ((tries++ < 500)); do
        comm=$(cat "/proc/$pid/comm" 2>/dev/null) || break
        [[ "$comm" == "$want" ]] && break
        sleep 0.01
    done
}

# Slurm daemons write the same lines to NAME.log and to stderr: show NAME.log, or NAME.out when
# there is no log (munged -F logs to stderr only; a daemon may die before opening its log).
show_logs() {
    local out log
    for out in "$BASE"/log/*.out; do
        [[ -e "$out" ]] || continue
        log=${out%.out}.log
        [[ -s "$log" ]] || log=$out
        [[ -s "$log" ]] || continue
        echo "==> $log <==" >&2
        tail -n 15 "$log" >&2
    done
}

# Fails the start: stops what was started so no half-up cluster lingers, then shows why. The log
# tails are read before stopping (shutdown lines would bury the cause) but printed after, so a
# reader that closes our stderr early (| head) cannot leave daemons running.
start_failed() {
    local tails
    tails=$(show_logs 2>&1)
    stop_daemons
    echo "slurm-cluster: $*" >&2
    echo "$tails" >&2
    exit 1
}

cmd_start() {
    local arg base=""
    for arg in "$@"; do
        case "$arg" in
            --accounting) ACCOUNTING=1 ;;
            --tres) TRES=1 ;;
            -*) usage ;;
            *)
                [[ -z "$base" ]] || usage
                base=$arg
                ;;
        esac
    done
    use_base "$base"
    command -v slurmctld >/dev/null 2>&1 || die "slurmctld not found: run '$0 install' first"
    local limit=$START_TIMEOUT
    if ((ACCOUNTING)); then
        accounting_programs || die "slurmdbd or MariaDB not found: run '$0 install-accounting' first"
        ((EUID == 0)) || die "--accounting needs root (useradd, and slurmdbd.conf owned by root)"
        CTLD_PORT=$ACCT_CTLD_PORT
        FIRST_NODE_PORT=$ACCT_FIRST_NODE_PORT
        limit=$ACCT_START_TIMEOUT
    elif ((TRES)); then
        die "--tres needs --accounting (the shared-nodes cluster keeps accounts)"
    fi
    if ((TRES)); then
        CTLD_PORT=$TRES_CTLD_PORT
        FIRST_NODE_PORT=$TRES_FIRST_NODE_PORT
        DBD_PORT=$TRES_DBD_PORT
        DB_PORT=$TRES_DB_PORT
    fi
    # Restarting over a live cluster would fight it for ports and state: stop it first.
    if any_alive; then
        cmd_stop_quiet
    fi
    local deadline=$((SECONDS + limit)) n
    mkdir -p "$BASE"/{etc,munge,state,run,log} "$PIDS"
    for n in "${NODES[@]}"; do
        mkdir -p "$BASE/spool/$n"
    done
    # munged refuses a socket folder that others cannot traverse (every folder on its path: a
    # base made by mktemp -d is private), and a key readable by others.
    chmod 755 "$BASE" "$BASE/munge"
    if [[ ! -s "$BASE/munge/munge.key" ]]; then
        mungekey -c -k "$BASE/munge/munge.key"
    fi
    chmod 600 "$BASE/munge/munge.key"
    # A fresh state folder each start: stale jobs and reservations from an earlier run would leak in.
    rm -rf "${BASE:?}/state"/*
    write_conf
    if ((TRES)); then
        write_gres_conf
    else
        # (a base reused from a --tres start: its gres.conf would give nodes GPUs they lack)
        rm -f "$(dirname "$SLURM_CONF")/gres.conf"
    fi
    # A socket left by an earlier munged would make the wait below pass before the new one listens.
    rm -f "$BASE/munge/munge.socket"

    launch munged munged -F --socket="$BASE/munge/munge.socket" --key-file="$BASE/munge/munge.key" \
        --pid-file="$BASE/run/munged.pid" --seed-file="$BASE/munge/munge.seed"
    until [[ -S "$BASE/munge/munge.socket" ]]; do
        alive "$(pid_of munged)" || start_failed "munged exited"
        ((SECONDS < deadline)) || start_failed "munged socket did not appear within ${limit}s"
        sleep 0.1
    done

    # With accounting, slurmdbd must answer before slurmctld starts: a slurmctld with no saved
    # state and no slurmdbd exits ("slurmdbd and/or database must be up at slurmctld start time").
    if ((ACCOUNTING)); then
        # Job folders for the test users (sbatch -D BASE/jobs), sticky like /tmp.
        mkdir -p "$BASE/jobs"
        chmod 1777 "$BASE/jobs"
        add_unix_users
        start_db "$deadline"
        start_dbd "$deadline"
        add_associations
    fi

    # -i: ignore errors in state files (it does not discard state: the state folder was emptied
    # above, and that is what makes every start a clean cluster).
    launch slurmctld slurmctld -D -i
    until ctld_up; do
        alive "$(pid_of slurmctld)" || start_failed "slurmctld exited"
        ((SECONDS < deadline)) || start_failed "slurmctld not UP within ${limit}s"
        sleep 0.2
    done

    for n in "${NODES[@]}"; do
        launch "slurmd-$n" slurmd -D -N "$n"
    done
    until (($(count_nodes -t idle) == ${#NODES[@]})); do
        # A slurmd that died (port taken, bad config) never comes back: fail now, not at the timeout.
        for n in "${NODES[@]}"; do
            alive "$(pid_of "slurmd-$n")" || start_failed "slurmd for $n exited"
        done
        ((SECONDS < deadline)) || start_failed "${#NODES[@]} idle nodes not reached within ${limit}s"
        sleep 0.2
    done
    echo "export SLURM_CONF=$SLURM_CONF"
}

# Cancels every job (any user) and waits for the queue, completing jobs included, to drain: job
# processes would outlive a slurmd stopped under them.
drain_jobs() {
    ctld_up || return 0
    local ids deadline=$((SECONDS + DRAIN_TIMEOUT))
    ids=$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ') || true
    if [[ -n "${ids// /}" ]]; then
        # shellcheck disable=SC2086 # one argument per job id
        scancel $ids 2>/dev/null || true
    fi
    while [[ -n "$(squeue -h -o %A 2>/dev/null)" ]]; do
        if ((SECONDS >= deadline)); then
            echo "slurm-cluster: queue not empty after ${DRAIN_TIMEOUT}s, stopping anyway" >&2
            return 0
        fi
        sleep 0.5
    done
}

# TERMs the named daemons (those we started and that still run), waits up to 15 s, then KILLs
# leftovers.
stop_group() {
    local name pid deadline
    for name in "$@"; do
        pid=$(pid_of "$name")
        if alive "$pid"; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
    deadline=$((SECONDS + 15))
    for name in "$@"; do
        pid=$(pid_of "$name")
        while alive "$pid" && ((SECONDS < deadline)); do
            sleep 0.1
        done
        if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
        rm -f "$PIDS/$name.pid"
    done
}

# Stops every daemon we started, in groups, each after the one before has exited: the slurmds and
# slurmctld; then slurmdbd, once slurmctld has sent it its last job records; then MariaDB, once
# slurmdbd has closed its connections (a TERM makes it shut down cleanly); munged last, since
# every other daemon authenticates through it. Daemons a base never ran have no pid file.
stop_daemons() {
    local name group=()
    for name in "${NODES[@]}"; do
        group+=("slurmd-$name")
    done
    stop_group "${group[@]}" slurmctld
    stop_group slurmdbd
    stop_group mariadbd
    stop_group munged
}

cmd_stop_quiet() {
    drain_jobs
    stop_daemons
}

cmd_stop() {
    [[ -n "${1:-}" ]] || usage
    # Nothing was ever started there: nothing to stop.
    [[ -d "$1/run" ]] || return 0
    use_base "$1"
    cmd_stop_quiet
}

cmd_status() {
    use_base "${1:-}"
    local accounting=0 up gpus=""
    if conf_has_accounting; then accounting=1; fi
    if ! ctld_up; then
        if ((accounting)); then
            if dbd_up; then
                die "slurmctld does not answer (slurmdbd answers)"
            fi
            die "slurmctld does not answer (nor does slurmdbd)"
        fi
        die "slurmctld does not answer"
    fi
    up=$(count_nodes -r)
    ((up == ${#NODES[@]})) || die "$up of ${#NODES[@]} nodes respond"
    if conf_has_gpus; then
        up=$(count_gpu_nodes)
        ((up == ${#NODES[@]})) || die "$up of ${#NODES[@]} nodes have their $TRES_GPUS_PER_NODE GPUs"
        gpus=" of $TRES_GPUS_PER_NODE GPUs each"
    fi
    if ((accounting)); then
        dbd_up || die "slurmctld and ${#NODES[@]} nodes up, but slurmdbd does not answer"
        echo "up: slurmctld, ${#NODES[@]} nodes$gpus and slurmdbd"
        return 0
    fi
    echo "up: slurmctld and ${#NODES[@]} nodes"
}

case "${1:-}" in
    install) cmd_install ;;
    install-accounting) cmd_install_accounting ;;
    start)
        shift
        cmd_start "$@"
        ;;
    stop) cmd_stop "${2:-}" ;;
    status) cmd_status "${2:-}" ;;
    *) usage ;;
esac
