#!/bin/bash
# Issue 26 on big real captures, on a GPU machine: build the C extensions for its Python, capture a big
# PyTorch trace and a big JAX XSpace (capture_big.py), run benchmarks/real_trace_benchmark.py on them
# there, and leave in $OUT (or ./big_captures): env.txt, log.txt, results.json, and the profiles
# xz-compressed in pieces (RUN.xz.00, ...; names.txt), to run the oracles (HTA, torch-tb-profiler, the
# profile plugin's converter) on them elsewhere. CAPTURE_ARGS: capture_big.py's options.
# Missing Python packages travel as wheels in .whl/ (orjson: the Python reader's parser).
set -u
out=${OUT:-$PWD/big_captures}
mkdir -p "$out"
py=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
caps=${CAPS:-$(mktemp -d)}
log="$out/log.txt"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false TF_CPP_MIN_LOG_LEVEL=2
if ls "$root"/.whl/*.whl >/dev/null 2>&1; then
  $py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$root"/.whl/*.whl >>"$log" 2>&1
  export PYTHONPATH=/tmp/site
fi
{
  date -u; uname -a; nproc; free -g
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  $py -c "import sys, torch, numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'numpy', numpy.__version__)"
  $py -c "import jax; print('jax', jax.__version__, jax.devices())"
} >"$out/env.txt" 2>&1
(cd "$root" && $py setup.py -q build_ext --inplace) >>"$log" 2>&1
(cd "$root" && $py -c "
from tb_gpu_advisor.formats.xplane import scan
from tb_gpu_advisor.formats.kineto import native
print('native XSpace decoder:', scan.available(), '; native Kineto reader:', native.available())") >>"$out/env.txt" 2>&1
echo "== capture $(date -u +%T)" >>"$log"
$py "$here/capture_big.py" "$caps" ${CAPTURE_ARGS:-} >>"$log" 2>&1
find "$caps" -type f -exec ls -la {} + >>"$log"
files=$(find "$caps" -name '*.pt.trace.json' -o -name '*.xplane.pb' | sort)
echo "== benchmark $(date -u +%T)" >>"$log"
# shellcheck disable=SC2086
$py "$root/benchmarks/real_trace_benchmark.py" $files --json "$out/results.json" >>"$log" 2>&1
echo "== compress $(date -u +%T)" >>"$log"
# each profile xz-compressed and cut in pieces of 15 MiB while they total under 56 MiB in at most four
# pieces (8 files come back at most: these four and the pieces); names.txt says which make which file
tmp=$(mktemp -d)
total=0
pieces=0
: >"$out/names.txt"
for f in $files; do
  run=$(basename "$(dirname "$f")")
  case "$f" in *.xplane.pb) run=$(basename "$(dirname "$(dirname "$(dirname "$(dirname "$f")")")")") ;; esac
  xz -T0 -6 -c "$f" >"$tmp/$run.xz" 2>>"$log" || continue
  size=$(stat -c %s "$tmp/$run.xz")
  ls -la "$tmp/$run.xz" >>"$log"
  n=$(((size + (15 << 20) - 1) / (15 << 20)))
  if [ $((total + size)) -lt $((56 << 20)) ] && [ $((pieces + n)) -le 4 ]; then
    split -b 15M -d "$tmp/$run.xz" "$out/$run.xz."
    echo "$run.xz ${f#"$caps"/}" >>"$out/names.txt"
    total=$((total + size))
    pieces=$((pieces + n))
  fi
done
echo "== done $(date -u +%T)" >>"$log"
