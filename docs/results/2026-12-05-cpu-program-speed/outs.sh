#!/bin/bash
# usage: outs.sh LAYOUT TAG [targets...]: concise findings of each corpus (budgets lifted, hash seed fixed) + CPU time
L=$1; T=$2; shift 2
mkdir -p /tmp/ps/out
targets=${@:-"fixtures oc ul gan ex"}
for t in $targets; do
  case $t in fixtures) d=${FIX:-/tmp/prog-speed-base/fixtures};; *) d=/tmp/ps/corp/$t;; esac
  (cd /tmp && PYTHONHASHSEED=${SEED:-3} PYTHONPATH=$L /usr/bin/time -f "$T $t %U+%S s" /work/wt/prog-speed/.venv/bin/python /tmp/ps/lifted.py check "$d" --exit-zero --output-format concise --isolated --no-respect-gitignore --no-cache > /tmp/ps/out/$T.$t.txt 2> /tmp/ps/out/$T.$t.err)
  tail -1 /tmp/ps/out/$T.$t.err
done
