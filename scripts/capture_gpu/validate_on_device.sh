#!/bin/bash
# Capture the validation pairs (capture_validation.py) in one go on a GPU machine, packed into $OUT (or
# ./gpu_validation) as each group ends: log.txt, timings.json, val.tgz, val_compile.tgz (each tgz also
# holds timings.json and pairs.json).
set -u
out=${OUT:-$PWD/gpu_validation}
mkdir -p "$out"
caps=$(mktemp -d)
py=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
here=$(cd "$(dirname "$0")" && pwd)
log="$out/log.txt"
{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  $py -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
} >"$log" 2>&1
pack() { name=$1; shift; (cd "$caps" && tar czf "$out/$name.tgz" timings.json pairs.json $@) 2>>"$log"; cp "$caps/timings.json" "$out/" 2>/dev/null; }
t() { echo "== $*" >>"$log"; "$@" >>"$log" 2>&1; echo "rc $?" >>"$log"; }
opts=(--warm 8 --timed 15 --rounds 3)
t $py "$here/capture_validation.py" "$caps" "${opts[@]}" --only vit_fp32 vit_tf32 vit_bf16 rn18_fp32 rn18_bf16 gpt2v_bf16_sync gpt2v_bf16 mlpv_sync mlpv_eager gpt2_b1_eager gpt2_b1_graphed
pack val 'vit_fp32 vit_tf32 vit_bf16 rn18_* gpt2v_* mlpv_* gpt2_b1_*'
t $py "$here/capture_validation.py" "$caps" "${opts[@]}" --only vit_bf16_compile
pack val_compile vit_bf16_compile
du -sh "$out"/* >>"$log"
