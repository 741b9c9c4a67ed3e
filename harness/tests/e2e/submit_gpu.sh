#!/bin/bash
# mapp submit --dry-run on the GPU cluster example: an entry on the cuda
# backend asks one GPU per rank (gpus: default), an entry with gpus: 2 two,
# each bound to its closest GPU, and the node count follows the GPUs per
# node; CUDA jobs are written even where this machine has no GPU.
. "$(dirname "$0")/lib.sh"
require_app crm
# Jobs run this build's executables, so `mapp submit` writes none for a
# backend the build lacks (MAPP_ENABLE_CUDA=OFF: presets debug, O0, sanitize).
cuda_built=$("$MAPP_BIN_DIR/mapp-crm" --list | python3 -c 'import json, sys
print(any(b["name"] == "cuda" and b["built"] for v in json.load(sys.stdin)["variants"] for b in v["backends"]))')
[ "$cuda_built" = True ] || { echo "crm's cuda backend is not built: skipping"; exit 77; }
GPU_ENV="$MAPP_SOURCE_DIR/envs/gpu-cluster-example.yaml"
cat >gpu.yaml <<'YAML'
name: gpu
runs:
  - app: crm
    variants: [batched]
    backends: [cuda]
    ranks: [8]
    sizes: [large]
  - app: crm
    label: two
    variants: [batched]
    backends: [cuda]
    ranks: [4]
    gpus: 2
    sizes: [large]
  - app: crm
    variants: [batched]
    backends: [omp]
    ranks: [2]
    threads: [16]
YAML
expect_exit 0 "$MAPP" submit gpu.yaml --env "$GPU_ENV" --dry-run
script_of() { awk -v s="$1" 'index($0, s) && /sbatch/ {on = 1} on {print} on && /^srun|mapp_run/ {exit}' <<<"$OUT"; }
one=$(script_of crm-batched-cuda-large-strong-n8-t1)
grep -q '#SBATCH --gpus-per-task=1' <<<"$one" || { echo "$OUT"; fail "no --gpus-per-task=1 for the cuda entry"; }
grep -q '#SBATCH --gpu-bind=closest' <<<"$one" || fail "no --gpu-bind from the environment"
grep -q '#SBATCH --nodes=2' <<<"$one" || fail "8 ranks of 1 GPU on 4-GPU nodes need 2 nodes"
two=$(script_of crm-batched-cuda-large-strong-n4-t1-two)
grep -q '#SBATCH --gpus-per-task=2' <<<"$two" || fail "gpus: 2 not asked"
grep -q '#SBATCH --nodes=2' <<<"$two" || fail "4 ranks of 2 GPUs on 4-GPU nodes need 2 nodes"
cpu=$(script_of crm-batched-omp-tiny-strong-n2-t16)
grep -q 'gpus-per-task' <<<"$cpu" && fail "a CPU job asked for GPUs"
# a spec asking more GPUs per rank than a node has is bad input
sed 's/gpus: 2/gpus: 8/' gpu.yaml >too-many.yaml
expect_exit 2 "$MAPP" submit too-many.yaml --env "$GPU_ENV" --dry-run
expect_output "8 GPUs per rank but 4 per node"
echo "submit gpu: ok"
