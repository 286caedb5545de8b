#!/bin/bash
# Capture the before/after pairs (capture_pairs.py, capture_pairs_jax.py) in one go on a GPU machine,
# packed into $OUT (or ./gpu_pairs) as each group ends, so a run cut short keeps what it made:
# log.txt (GPU, driver, versions, then every run's output), timings.json, rn50.tgz, gpt2.tgz,
# other.tgz (MLP, loader and JAX runs), compile.tgz; every tgz also holds timings.json and pairs.json.
set -u
out=${OUT:-$PWD/gpu_pairs}
mkdir -p "$out"
caps=$(mktemp -d)
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false TF_CPP_MIN_LOG_LEVEL=2
here=$(dirname "$0")
log="$out/log.txt"
{
  date -u; uname -a; nproc
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.max.sm --format=csv
  $py -c "import sys, torch; print('python', sys.version.split()[0]); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version(), torch.cuda.get_device_name(0))"
  $py -c "import jax, jaxlib; print('jax', jax.__version__, 'jaxlib', jaxlib.__version__, jax.devices())"
} >"$log" 2>&1
pack() { name=$1; shift; (cd "$caps" && tar czf "$out/$name.tgz" timings.json pairs.json "$@") 2>>"$log"; cp "$caps/timings.json" "$out/" 2>/dev/null; }
t() { echo "== $*" >>"$log"; "$@" >>"$log" 2>&1; echo "rc $?" >>"$log"; }
opts=(--warm 8 --timed 15 --rounds 3)
t $py "$here/capture_pairs.py" "$caps" "${opts[@]}" --only gpt2_fp32 gpt2_tf32 gpt2_bf16 gpt2_bf16_pad
pack gpt2 gpt2_*
t $py "$here/capture_pairs.py" "$caps" "${opts[@]}" --only rn50_b64_fp32 rn50_b64_bf16 rn50_b64_sync rn50_b256_fp32 rn50_b256_bf16
pack rn50 rn50_*
t $py "$here/capture_pairs.py" "$caps" "${opts[@]}" --only mlp_eager mlp_graphed loader_w0 loader_w4
t ${JAX_PYTHON:-$py} "$here/capture_pairs_jax.py" "$caps"
pack other mlp_* loader_* jax_*
t $py "$here/capture_pairs.py" "$caps" "${opts[@]}" --only gpt2_bf16_compile
pack compile gpt2_bf16_compile
ls -laR "$caps" >>"$log"
du -sh "$out"/* >>"$log"
