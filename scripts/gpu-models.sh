#!/usr/bin/env bash
# Issue 12's whole-model figures in one command on the lent GPU: rb-bench's ResNet-50, MLP
# training step and Llama decode names beside ../shared/bench/torch_anchors_graph.py
# (compare.py's table), then benches/resnet_onnx.py on the GPU (ONNX-loaded against
# recorded, ONNX Runtime's CUDA EP where installed). Run in the repository root with the
# binaries carried (scripts/gpu-pack.sh; BIN: their folder, default .dev/gpu/bin, or
# .dev/gpu-quick/bin when only that pack exists).
# Usage: bash scripts/gpu-models.sh   (logs and JSON in $OUT)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
source scripts/gpu-bin.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
timeout "${BENCH_TIMEOUT:-300}" "$bin/rb-bench" --device cuda \
  --filter 'copy_d2d_1GiB|resnet50|mlp_train_step|llama_decode' --json "$OUT/ours.json" 2>&1 \
  | tee "$OUT/bench.log" | grep -vE '^\s*$' | tail -n 40
(cd "$pack/bench" && OUT=$OUT timeout 240 python3 torch_anchors_graph.py > "$OUT/torch_anchors_graph.log" 2>&1)
cat "$OUT/torch_anchors_graph.log" | tail -n 12
python3 "$pack/bench/compare.py" "$OUT/ours.json" "$OUT/torch_anchors_graph.json" | tee "$OUT/compare_graph.txt"
if python3 -c 'import onnx, numpy' 2>/dev/null; then
  for dt in f32 f16; do
    RB_LIBRARY=$PWD/$bin/librocm_backend.so PYTHONPATH=$PWD/bindings/python OUT=$OUT timeout 240 \
      python3 "$pack/bench/resnet_onnx.py" --device cuda --batch 32 --dtype $dt --runs 30 \
      > "$OUT/resnet_onnx_cuda_$dt.log" 2>&1
    tail -n 14 "$OUT/resnet_onnx_cuda_$dt.log"
  done
fi
