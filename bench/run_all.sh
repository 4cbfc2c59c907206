#!/usr/bin/env bash
# Run every runtime_shim benchmark at full size, writing OUT_DIR/<name>.json and OUT_DIR/<name>.md
# (the markdown each prints); progress goes to stderr. A failing benchmark does not stop the others,
# the script exits 1 if any failed, and the summary of each, read back from its JSON, comes last.
#
#   bash bench/run_all.sh [OUT_DIR]        # default OUT_DIR: ./bench-results
#
# Needs only python3 with numpy and torch; runtime_shim is imported from this checkout (PYTHONPATH),
# no install needed. PYTHON=... picks another interpreter.
set -uo pipefail

out="${1:-./bench-results}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
python="${PYTHON:-$(command -v python3 || command -v python)}"
benchmarks=(move_bandwidth dispatch_overhead checkpointing_memory)
export PYTHONUNBUFFERED=1
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$out"

failed=()
for name in "${benchmarks[@]}"; do
    echo "== $name"
    rm -f "$out/$name.json" "$out/$name.md"
    if ! "$python" "$here/$name.py" --json "$out/$name.json" | tee "$out/$name.md"; then
        failed+=("$name")
    fi
    echo
done

echo "== summary ($out)"
"$python" - "$out" "${benchmarks[@]}" <<'PY'
import json
import sys
from pathlib import Path

out, names = Path(sys.argv[1]), sys.argv[2:]
for name in names:
    path = out / f"{name}.json"
    print(f"- {json.loads(path.read_text())['summary']}" if path.exists() else f"- {name}: no results")
PY
if ((${#failed[@]})); then
    echo "FAILED: ${failed[*]}"
    exit 1
fi
