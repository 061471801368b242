#!/usr/bin/env bash
# Installs hpcsched (building the Rust engine) and runs a complete example on a workload it
# generates itself: no download, no external data.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! python3 -c "import hpcsched._core" >/dev/null 2>&1; then
    echo "Building the Rust engine and installing hpcsched: the first time takes about 5 minutes"
    echo "on 2 cores (cargo compiles the engine in release mode); later runs take seconds."
fi
started=$SECONDS
python3 -m pip install --quiet -e .
echo "hpcsched installed in $((SECONDS - started)) s: $(hpcsched --version)"

out=examples-out
mkdir -p "$out"
# A busy 64-node machine: the SNF-ICON paper's Markovian workload model at 92 % target load.
hpcsched generate markovian "$out/markovian-5000.json.gz" --jobs 5000 --target-util 0.92
hpcsched inspect "$out/markovian-5000.json.gz"
# An 8-hour maintenance on day 10 (trace clock, seconds), announced 48 h ahead.
printf '# start   end      kind nodes note\n864000    892800   S    -     monthly maintenance\n' \
    > "$out/maintenance.txt"
# One policy, one run directory.
hpcsched simulate "$out/markovian-5000.json.gz" --policy wfp3 --window 256 \
    --downtime "$out/maintenance.txt" --out "$out/runs/wfp3" --force  # a rerun replaces it
# Production heuristics against MARS look-ahead (in parallel), with an HTML report.
hpcsched compare "$out/markovian-5000.json.gz" --downtime "$out/maintenance.txt" \
    --policy fcfs --policy wfp3:256 --policy sjf:256 --policy f1:256 --policy snf \
    --policy mars-cw --iterations 50 --trees 2 \
    --out "$out/runs/compare" --report "$out/report.html"
# The same workload on a 64-node AOBA-like platform whose idle nodes sleep.
hpcsched compare "$out/markovian-5000.json.gz" --platform AOBA-64 \
    --policy fcfs-b+ipm --policy snf+ipm --policy snf-icon \
    --out "$out/runs/energy" --report "$out/energy-report.html"
echo
echo "Run directories (jobs.parquet, summary.json) are in $out/runs/;"
echo "open $out/report.html and $out/energy-report.html in a browser."
