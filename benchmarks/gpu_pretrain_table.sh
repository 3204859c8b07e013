#!/usr/bin/env bash
# Issue 30, part 3: the GPU table of pretraining tokens/s and MFU, in one short run.
#
# bert-a, tupe-r, rope and alibi (zoo) against transformers' BertForMaskedLM with SDPA,
# base size (12 x 768), bf16 autocast, at length 128 (batch 128) and 512 (batch 32), the
# models paired step for step in one process (benchmarks/pe_train_throughput.py). bert-a and rope
# are timed a second time without an attention mask: the gap between the two rows is what
# the zoo's always-passed (all-ones) mask costs, since SDPA's flash kernel takes no mask.
# Estimated 2-3 minutes on an H100 (not yet run on one); the JSON goes to $OUT (else
# benchmarks/out/). posharness needs its dependencies importable there (pydantic, scipy, ...):
# carry wheels where the machine lacks one.
#
#   benchmarks/gpu_pretrain_table.sh                  # on the GPU machine
#   benchmarks/gpu_pretrain_table.sh --device cpu     # dry run: tiny size, a few seconds
#
# PYTHON picks the interpreter (default python3). posharness must be importable with its
# entry points (the zoo's schemes are registered through them): where it is not, the
# script installs this checkout without dependencies (pip install --no-deps -e .).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
out="${OUT:-benchmarks/out}"
mkdir -p "$out"
if ! "$python" -c "import posharness.models.zoo" 2>/dev/null; then
    "$python" -m pip install --quiet --no-deps --no-build-isolation -e . \
        || { echo "posharness is not importable and could not be installed"; exit 2; }
fi
models=bert-a,tupe-r,rope,alibi
if [[ "${1:-}" == "--device" && "${2:-}" == "cpu" ]]; then
    exec "$python" benchmarks/pe_train_throughput.py --device cpu --shapes tiny:4x32,tiny:2x64 \
        --schemes "$models" --unmasked bert-a,rope --steps 2 --repeats 1 --no-target \
        --out "$out/gpu_pretrain_table_dryrun.json"
fi
"$python" -c "import torch; assert torch.cuda.is_available(), 'no CUDA device'; \
print(torch.cuda.get_device_name(), 'torch', torch.__version__)"
status=0
"$python" benchmarks/pe_train_throughput.py --device cuda --bf16 \
    --shapes base:128x128,base:32x512 --schemes "$models" --unmasked bert-a,rope \
    --steps 10 --repeats 3 --out "$out/gpu_pretrain_table.json" || status=$?
echo "pe_train_throughput exit status $status (1: a scheme below 0.85 of HF's tokens/s)"
exit "$status"
