#!/usr/bin/env bash
# Mutation testing of the engine's code a change touches: cargo-mutants mutates the lines of
# crates/core changed since REF (default: origin/main if it exists, else the merge base with
# main), runs the engine's tests against each mutant and prints the ones no test caught.
#   ./scripts/mutants.sh [REF] [cargo-mutants options...]   e.g. ./scripts/mutants.sh HEAD~3 -j 2
# Needs `cargo install cargo-mutants --locked`. Slow (a build and the engine's tests per
# mutant): the report stays in mutants.out/. Each survivor is killed by a test with a
# hand-computed expectation, or explained (an equivalent mutant) in the change's closing note.
set -euo pipefail
cd "$(dirname "$0")/.."

ref=${1:-}
[[ $# -gt 0 ]] && shift
if [[ -z $ref ]]; then
    if git rev-parse --verify --quiet origin/main >/dev/null; then
        ref=origin/main
    else
        ref=$(git merge-base HEAD main)
    fi
fi
diff=$(mktemp)
trap 'rm -f "$diff"' EXIT
git diff "$ref" -- crates/core >"$diff"
if [[ ! -s $diff ]]; then
    echo "no change to crates/core since $ref"
    exit 0
fi
echo "== cargo mutants over crates/core changed since $ref"
status=0
cargo mutants -p hpcsched-core --in-diff "$diff" "$@" || status=$?
echo "== survivors (missed: no test failed; timeout: the tests ran too long)"
cat mutants.out/missed.txt mutants.out/timeout.txt 2>/dev/null || true
# cargo-mutants: 0 all caught, 2 some missed, 3 some timed out, 4 the tests fail unmutated
exit "$status"
