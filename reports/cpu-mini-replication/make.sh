#!/bin/bash
# How the results under reports/cpu-mini-replication/results were made (run from the repository root).
# Training (one epoch of the 11,914-sentence wiki head, batch 64, 187 steps, CPU, 1 thread each):
#   stsbench train --config configs/simcse-minilm-cpu.yaml  --output /tmp/runs5/simcse-minilm  --data-dir ../shared/data
#   stsbench train --config configs/esimcse-minilm-cpu.yaml --output /tmp/runs5/esimcse-minilm --data-dir ../shared/data
#   stsbench train --config configs/esimcse-minilm-cpu.yaml --queue-multiple 0 --output /tmp/runs-reports/esimcse-wr-only --data-dir ../shared/data
#   stsbench train --config configs/esimcse-minilm-cpu.yaml --no-repetition    --output /tmp/runs-reports/esimcse-mc-only --data-dir ../shared/data
#   stsbench train --config configs/mocose-minilm-cpu.yaml  --output /tmp/runs6/mocose-minilm --data-dir ../shared/data
# Evaluation, per model (this script: bash reports/cpu-mini-replication/make.sh MODEL [transfer]; the token-length
# tables: stsbench length-bias --unit tokens --model MODEL ...; transfer ran with OMP_NUM_THREADS=1),
# then the report:
#   stsbench report --results reports/cpu-mini-replication/results --out reports/cpu-mini-replication \
#       --title 'CPU mini-replication: SimCSE, ESimCSE and MoCoSE on all-MiniLM-L6-v2'
set -euo pipefail
M=$1
DATA=${DATA:-/work/shared/data}
R=reports/cpu-mini-replication/results
t() { local s=$SECONDS; "$@" > /dev/null; echo "$(( SECONDS - s )) s: $*" >> "$R/../timings.log"; }
mkdir -p "$R"
t stsbench run --model "$M" --tasks sts --data-dir "$DATA" --output "$R" -q
t stsbench length-bias --model "$M" --data-dir "$DATA" --output "$R/analyses"
t stsbench align-uniform --model "$M" --data-dir "$DATA" --output "$R/analyses"
t stsbench spectrum --model "$M" --data-dir "$DATA" --output "$R/analyses"
t stsbench repetition-probe --model "$M" --corpus "$DATA/wiki/wiki1m_head.txt" --output "$R/analyses"
if [ "${2:-}" = transfer ]; then
  t stsbench run --model "$M" --tasks transfer --mode fasttest --data-dir "$DATA" --output "$R" -q
fi
