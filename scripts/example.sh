#!/usr/bin/env bash
# Installs hpcsched (building the Rust engine) and runs a complete example on a workload it
# generates itself: no download, no external data.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet -e .

out=examples-out
mkdir -p "$out"
# A busy 64-node machine: the SNF-ICON paper's Markovian workload model at 92 % target load.
hpcsched generate markovian "$out/markovian-5000.json.gz" --jobs 5000 --target-util 0.92
hpcsched inspect "$out/markovian-5000.json.gz"
# An 8-hour maintenance on day 10 (trace clock, seconds), announced 48 h ahead.
printf '# start   end      kind nodes note\n864000    892800   S    -     monthly maintenance\n' \
    > "$out/maintenance.txt"
for policy in "fcfs" "wfp3 --window 256" "sjf --window 256" "f1 --window 256" "snf"; do
    name=${policy%% *}
    # shellcheck disable=SC2086
    hpcsched simulate "$out/markovian-5000.json.gz" --policy $policy \
        --downtime "$out/maintenance.txt" --out "$out/runs/$name"
done
# The same workload on a 64-node AOBA-like platform whose idle nodes sleep: SNF-ICON and a baseline.
for policy in snf-icon fcfs-b+ipm; do
    hpcsched simulate "$out/markovian-5000.json.gz" --policy "$policy" --platform AOBA-64 \
        --out "$out/runs/$policy"
done
echo
echo "Run directories (jobs.parquet, summary.json) are in $out/runs/."
