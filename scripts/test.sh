#!/usr/bin/env bash
# Runs the whole test suite: Rust (lints and tests of the engine) and Python (lints and tests),
# after installing the package with its test dependencies.
#   ./scripts/test.sh           everything (what CI runs)
#   ./scripts/test.sh --quick   the loop while working: the same lints and engine tests, and
#                               the Python tests but those marked slow (processes, signals,
#                               executed docs, benchmark smokes)
set -euo pipefail
cd "$(dirname "$0")/.."

selection=()
case "${1:-}" in
    "") ;;
    --quick) selection=(-m "not slow") ;;
    *) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

python3 -m pip install --quiet -e '.[test]'

echo "== cargo fmt / clippy"
cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings
echo "== cargo test (engine)"
cargo test -p hpcsched-core --quiet
echo "== ruff"
python3 -m ruff check python tests benchmarks examples
python3 -m ruff format --check python tests benchmarks examples
echo "== mypy (strict, the package) and stubtest (the native module's stubs)"
python3 -m mypy
python3 -m mypy.stubtest hpcsched._core
echo "== pytest"
python3 -m pytest -q "${selection[@]}"
