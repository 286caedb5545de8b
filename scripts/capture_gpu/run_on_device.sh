#!/bin/bash
# Make every GPU capture in one go on a GPU machine and pack them into $OUT (or ./gpu_captures):
# env.txt (GPU, driver, library versions), torch.tgz and jax.tgz (one TensorBoard run per scenario),
# log.txt. Each group is packed as soon as it ends, so a run cut short keeps what it made.
set -u
out=${OUT:-$PWD/gpu_captures}
mkdir -p "$out"
caps=$(mktemp -d)
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false TF_CPP_MIN_LOG_LEVEL=2
here=$(dirname "$0")
# SMALL=1: tiny sizes, to try the script on a machine without a GPU
small_torch=() small_jax=()
[ "${SMALL:-}" = 1 ] && small_torch=(--width 128 --block-width 64 --tokens 256 --batch 8 --active 2 --skip 1) && small_jax=(--width 128 --rows 256 --steps 3)
{
  date -u; uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  $py -c "import sys, torch; print('python', sys.version.split()[0]); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version(), torch.cuda.get_device_name(0))"
  $py -c "import jax, jaxlib; print('jax', jax.__version__, 'jaxlib', jaxlib.__version__, jax.devices())"
} >"$out/env.txt" 2>&1
pack() { (cd "$caps" && tar czf "$out/$1.tgz" $2) 2>>"$out/log.txt"; }
t() { echo "== $*" >>"$out/log.txt"; "$@" >>"$out/log.txt" 2>&1; echo "rc $?" >>"$out/log.txt"; }
t $py "$here/capture_torch_gpu.py" "$caps" --only torch_input_workers0 torch_input_workers4 torch_input_workers8 \
  torch_input_workers8_warm torch_fp32 torch_tf32 torch_bf16 torch_bf16_memory torch_fp16_odd_dims torch_tiny_ops torch_cuda_graph torch_cuda_graph_async "${small_torch[@]}"
pack torch "torch_*"
t ${JAX_PYTHON:-$py} "$here/capture_jax_gpu.py" "$caps" "${small_jax[@]}"
pack jax "jax_*"
t $py "$here/capture_torch_gpu.py" "$caps" --only torch_eager torch_compile torch_tiny_ops_compiled "${small_torch[@]}"
pack torch_compile "torch_eager torch_compile torch_tiny_ops_compiled"
ls -laR "$caps" >>"$out/log.txt"
