#!/bin/bash
# How reports/cpu-mini-replication was made (run from the repository root; DATA: the SentEval data folder).
#
# 1. Training: five methods x five seeds, 50 steps each (batch 64 from the 11,914-sentence wiki head), STS-B dev
#    every 10 steps, the best kept; CPU, 1 thread a run, two runs at a time. The runs were started one seed at a
#    time as `stsbench train --config C [--queue-multiple 0 | --no-repetition] --seed S --max-steps 50
#    --eval-steps 10 --output RUNS/<method>/seed-S`, the layout `--seeds` writes; `--seeds ... --resume` on the
#    finished folders then wrote each RUNS/<method>/seeds.json:
#      stsbench train --config configs/simcse-minilm-cpu.yaml  --seeds 1,2,3,4,5 --max-steps 50 --eval-steps 10 --output RUNS/simcse
#      stsbench train --config configs/esimcse-minilm-cpu.yaml --seeds 1,2,3,4,5 --max-steps 50 --eval-steps 10 --output RUNS/esimcse
#      stsbench train --config configs/esimcse-minilm-cpu.yaml --queue-multiple 0 --seeds 1,2,3,4,5 --max-steps 50 --eval-steps 10 --output RUNS/esimcse-wr-only
#      stsbench train --config configs/esimcse-minilm-cpu.yaml --no-repetition    --seeds 1,2,3,4,5 --max-steps 50 --eval-steps 10 --output RUNS/esimcse-mc-only
#      stsbench train --config configs/mocose-minilm-cpu.yaml  --seeds 1,2,3,4,5 --max-steps 50 --eval-steps 10 --output RUNS/mocose
#    (each with --data-dir DATA). The runs' stsbench.json and train_log.jsonl are copied to results/train/.
# 2. Evaluation and report: this script, `bash reports/cpu-mini-replication/make.sh RUNS`.
set -euo pipefail
RUNS=${1:?usage: make.sh RUNS (the folder holding simcse/, esimcse/, esimcse-wr-only/, esimcse-mc-only/, mocose/)}
DATA=${DATA:-../shared/data}
R=reports/cpu-mini-replication/results
METHODS=${METHODS:-simcse esimcse esimcse-wr-only esimcse-mc-only mocose}  # a subset: METHODS="simcse" BACKBONE=0 REPORT=0
t() { local s=$SECONDS; "$@" > /dev/null; echo "$(( SECONDS - s )) s: $*" >> "$R/../timings.log"; }
mkdir -p "$R"
# the backbone: STS with intervals (its transfer results and analyses are kept from the first edition)
[ "${BACKBONE:-1}" = 0 ] || t stsbench run --model all-MiniLM-L6-v2 --tasks sts --data-dir "$DATA" --output "$R" -q
for m in $METHODS; do
  t stsbench run --model "$RUNS/$m" --tasks sts --data-dir "$DATA" --output "$R" -q   # every seed + seeds.json
  for s in "$RUNS/$m"/seed-*; do
    mkdir -p "$R/train/$m/$(basename "$s")"
    cp "$s/stsbench.json" "$s/train_log.jsonl" "$R/train/$m/$(basename "$s")/"
  done
  # the analyses of one seed per method (seed 1): the geometry and bias figures are read per checkpoint
  M="$RUNS/$m/seed-1"
  [ "${ANALYSES:-1}" = 0 ] && continue
  t stsbench length-bias --model "$M" --data-dir "$DATA" --output "$R/analyses"
  t stsbench length-bias --unit tokens --model "$M" --data-dir "$DATA" --output "$R/analyses"
  t stsbench align-uniform --model "$M" --data-dir "$DATA" --output "$R/analyses"
  t stsbench spectrum --model "$M" --data-dir "$DATA" --output "$R/analyses"
  t stsbench repetition-probe --model "$M" --corpus "$DATA/wiki/wiki1m_head.txt" --output "$R/analyses"
done
rm -rf "$R/analyses/figures"  # the analysis commands' own figures: the report draws its own from the JSON
[ "${REPORT:-1}" = 0 ] || stsbench report --results "$R" --out reports/cpu-mini-replication \
  --title "CPU mini-replication: SimCSE, ESimCSE and MoCoSE on all-MiniLM-L6-v2, five seeds each"
