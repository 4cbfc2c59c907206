#!/bin/bash
# usage: cmp.sh TAG TARGET [extra flags]; runs base (core 0) and branch (core 1) at once, concise findings + CPU
tag=$1; tgt=$2; shift 2
PY=/work/wt/world-sharing/.venv/bin/python
L=/work/wt/world-sharing/docs/results/2026-12-04-cpu-cold-3/lifted.py
for side in base branch; do
  core=0; [ $side = branch ] && core=1
  (cd /tmp && PYTHONPATH=/tmp/ws/lay/$side /usr/bin/time -f "$side %U+%S s" taskset -c $core $PY $L check "$tgt" --exit-zero --output-format concise --isolated --no-respect-gitignore --no-cache "$@" > /tmp/ws/out/$tag.$side.txt 2> /tmp/ws/out/$tag.$side.err) &
done
wait
tail -1 /tmp/ws/out/$tag.base.err; tail -1 /tmp/ws/out/$tag.branch.err
if cmp -s /tmp/ws/out/$tag.base.txt /tmp/ws/out/$tag.branch.txt; then echo "$tag IDENTICAL $(wc -l < /tmp/ws/out/$tag.base.txt) lines"; else echo "$tag DIFFER"; diff /tmp/ws/out/$tag.base.txt /tmp/ws/out/$tag.branch.txt | head; fi
