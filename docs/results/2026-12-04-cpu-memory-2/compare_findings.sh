#!/bin/bash
# usage: compare_findings.sh OUTDIR LAYOUT — JSON findings, wall time and peak RSS (GNU time) of the four corpora
out=$1; pp=$2; mkdir -p $out
cd "$(dirname "$0")/../../.."
for c in fixtures /tmp/ex/huggingface+diffusers/examples /tmp/nt/ultralytics-8.4.190-py3-none-any /tmp/memory/transformers/transformers; do
  name=$(basename $c)
  /usr/bin/time -f "%e s %M kB" -o $out/$name.time env PYTHONPATH=$pp .venv/bin/python -m devicelint check --no-cache --isolated --output-format json --exit-zero $c > $out/$name.json 2> $out/$name.err
  echo "$name $(wc -c < $out/$name.json) bytes $(cat $out/$name.time)"
done
