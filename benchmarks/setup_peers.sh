#!/usr/bin/env bash
# Create one isolated virtual environment per peer implementation under
# benchmarks/.venvs/ (git-ignored). Their dependencies clash (pandas 2 vs 3,
# numba, torch), so every peer gets its own interpreter and run.py starts each
# implementation with the right one.
#
# Usage: bash benchmarks/setup_peers.sh [peer ...]   (default: every peer)
# Each peer's install log is kept in benchmarks/.venvs/<peer>.log; a peer that
# fails to install is reported and skipped by run.py ("not installed").
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
venvs="$here/.venvs"
mkdir -p "$venvs"
PY="${PYTHON:-python3.11}"

# Each peer's pip requirements. polars/pyarrow are there only to read the
# benchmark's Parquet files; the timed task starts from in-memory frames.
declare -A REQS=(
  [ranx]="ranx polars pyarrow pandas"
  [pytrec_eval]="pytrec-eval-terrier polars pyarrow"
  [rectools]="rectools pyarrow<20"  # rectools pins numpy<2; newer pyarrow needs numpy 2
  [replay]="replay-rec polars pyarrow"
  [recommenders]="recommenders pyarrow"
  # torch 2.13.0 resolves to the local CPU-only wheel (a plain `torch` pulls
  # gigabytes of CUDA libraries this benchmark never uses).
  [torchmetrics]="torch==2.13.0 torchmetrics polars pyarrow"
  # The report's plotting stack; matplotlib is not a package dependency.
  [report]="polars matplotlib"
)

peers=("$@")
if [ ${#peers[@]} -eq 0 ]; then
  peers=(ranx pytrec_eval rectools replay recommenders torchmetrics report)
fi

status=0
for peer in "${peers[@]}"; do
  reqs="${REQS[$peer]:-}"
  if [ -z "$reqs" ]; then
    echo "unknown peer: $peer (known: ${!REQS[*]})" >&2
    status=1
    continue
  fi
  env="$venvs/$peer"
  log="$venvs/$peer.log"
  echo "== $peer -> $env ($reqs)"
  if [ ! -x "$env/bin/python" ]; then
    "$PY" -m venv "$env" >"$log" 2>&1 || { echo "   venv creation failed, see $log"; status=1; continue; }
  fi
  # shellcheck disable=SC2086
  if "$env/bin/python" -m pip install --quiet $reqs >>"$log" 2>&1; then
    "$env/bin/python" -m pip freeze >"$venvs/$peer.freeze" 2>/dev/null
    echo "   ok"
  else
    echo "   FAILED: see $log (tail below)"
    tail -n 5 "$log" | sed 's/^/   | /'
    status=1
  fi
done
exit $status
