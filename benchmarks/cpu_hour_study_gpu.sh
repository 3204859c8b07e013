#!/usr/bin/env bash
# Issue 41, part 4: the cpu-hour study (leaderboards/cpu-hour-study.toml) on one GPU.
#
# The study file is the CPU study's under its own name, so it writes its own folder
# (leaderboards/cpu-hour-study-gpu/) with the same recipe, size, seeds, tasks and tables:
# its tables sit beside the CPU study's and `posharness compare` pairs their boards.
# Pretraining and evaluation take the GPU themselves (--device auto: CUDA first), in fp32
# like the CPU study. The GPU's name and the wall time go into the folder.
#
#   bash benchmarks/cpu_hour_study_gpu.sh      # from the repository root, ../shared/data beside it
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "no NVIDIA GPU here (nvidia-smi not found): run the CPU study instead," \
        "posharness study run leaderboards/cpu-hour-study.toml" >&2
    exit 2
fi
study=leaderboards/cpu-hour-study-gpu.toml
sed 's/^name = "cpu-hour"$/name = "cpu-hour-gpu"/' leaderboards/cpu-hour-study.toml > "$study"
mkdir -p leaderboards/cpu-hour-study-gpu
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader \
    > leaderboards/cpu-hour-study-gpu/GPU.txt
start=$(date +%s)
posharness study run "$study"
echo "wall time: $(( $(date +%s) - start )) s" >> leaderboards/cpu-hour-study-gpu/GPU.txt
posharness study status "$study"
