#!/usr/bin/env bash
# dp_bench.sh: step time of data-parallel training on this machine, np 1 against np 2, and the
# time spent in the gradient all-reduce. Prints a table; asserts nothing.
#   bench/dp_bench.sh [build dir, default build] [steps, default 60]
# The model is configs/default.json's (4 layers, n_embd 128, block 64), one BLAS thread per rank,
# global batch 24 (2 micro-batches of 12): np 1 accumulates both, np 2 gives one to each rank.
set -euo pipefail
build=${1:-build}
steps=${2:-60}
exe=$build/scratchformer
[[ -x $exe ]] || { echo "dp_bench.sh: no $exe (cmake --build $build --target scratchformer)" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "dp_bench.sh: no mpirun (scripts/setup.sh installs Open MPI)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common=(--set train.steps="$steps" --set train.eval_interval=100000 --set train.eval_iters=1 --set train.eval_full=false
        --set train.samples=0 --set train.threads=1 --set output.plot=false --set schedule.warmup_steps=10)

run() {  # name, launcher..., -- extra args
  local name=$1; shift
  local launcher=()
  while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
  shift
  "${launcher[@]}" "$exe" train configs/default.json "${common[@]}" --set output.run_dir="$out/$name" "$@" > "$out/$name.log" 2>&1
}

# ms per optimizer step (median over the steps after the first 5), tokens/s, and per step the
# all-reduce's ms (the transfer) and the ms a rank waited for the other before it (load imbalance).
report() {  # name, label, tokens per step
  python3 - "$out/$1/metrics.jsonl" "$2" "$3" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if '"train"' in l]
t = [r["time_s"] for r in rows]
dt = sorted(b - a for a, b in zip(t[5:], t[6:]))
step = statistics.median(dt)
ar = rows[-1].get("allreduce_s", 0.0) / len(rows)
wait = rows[-1].get("wait_s", 0.0) / len(rows)
print(f"{sys.argv[2]:<40} {1e3 * step:9.1f} {int(sys.argv[3]) / step:10.0f} {1e3 * ar:13.2f} {1e3 * wait:9.2f}")
EOF
}

run np1_b12 -- -- --set train.batch_size=12
run np1_accum2 -- -- --set train.batch_size=12 --set train.grad_accum_steps=2
run np2 mpirun --oversubscribe -np 2 -- --set train.batch_size=12
echo "data-parallel step time, $(nproc) cores, $steps steps, configs/default.json's model, 1 thread per rank"
printf "%-40s %9s %10s %13s %9s\n" "run" "ms/step" "tokens/s" "allreduce ms" "wait ms"
report np1_b12 "np 1, batch 12" $((12 * 64))
report np1_accum2 "np 1, grad_accum 2 x 12 (global 24)" $((24 * 64))
report np2 "np 2, 1 x 12 per rank (global 24)" $((24 * 64))
