#!/bin/bash
# usage: compare.sh OUTDIR [PYTHONPATH]  — findings of the five corpora
out=$1; pp=$2; mkdir -p $out
cd /work/wt/memory
for c in fixtures examples /tmp/nt/ultralytics-8.4.190-py3-none-any /tmp/fp/eriklindernoren+PyTorch-GAN /tmp/memory/transformers/transformers; do
  name=$(basename $c)
  PYTHONPATH=$pp .venv/bin/python -m devicelint check --no-cache --output-format concise --exit-zero $c > $out/$name.txt 2> $out/$name.err
  echo "$name $(wc -l < $out/$name.txt) lines"
done
