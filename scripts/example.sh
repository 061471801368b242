#!/usr/bin/env bash
# Installs hpcsched (building the Rust engine) and runs a complete example on a workload it
# generates itself: no download, no external data.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet -e .

mkdir -p examples-out
hpcsched generate markovian examples-out/markovian-3000.json.gz
hpcsched inspect examples-out/markovian-3000.json.gz
for policy in "fcfs" "wfp3 --window 256" "sjf --window 256" "snf"; do
    name=${policy%% *}
    # shellcheck disable=SC2086
    hpcsched simulate examples-out/markovian-3000.json.gz --policy $policy \
        --out "examples-out/runs/$name"
done
echo
echo "Run directories (jobs.parquet, summary.json) are in examples-out/runs/."
