#!/bin/sh
# `tce estimate` on 10^6 CSV rows against pandas.read_csv of the same file, one run
# (benches/csv_vs_pandas.py). Builds the release tce and, once, a bench venv with pandas
# in target/bench-venv (not the test venv). Extra arguments go to the Python script,
# e.g. `benches/csv_vs_pandas.sh --runs 51`, or `--baseline OLD_TCE` to time an older
# build in the same runs.
set -eu
cd "$(dirname "$0")/.."
cargo build --release -p tce-cli
venv=target/bench-venv
if ! "$venv/bin/python" -c 'import pandas, numpy' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet pandas numpy
fi
exec "$venv/bin/python" benches/csv_vs_pandas.py "$@"
