#!/usr/bin/env bash
# Is the layout `accel plan --search` ranks first the fastest when run? For a small CPU job
# (bench/step_time/base.yaml on 4 workers unless JOB is given) it ranks the layouts with a
# calibrated profile, writes each of the top N as a spec (`--emit-spec FILE --emit-rank K`),
# runs every one with `accel run`, and prints per rank the estimated and the measured step time
# (median of metrics.jsonl after WARMUP steps) and the CPU-time equivalent (user + sys seconds
# of the run per step over the cores, as bench/step_time/run.sh computes it). The last lines say
# whether rank 1 was measured fastest, and if not, by how much the fastest beat it against the
# step-time model's stated error (ERROR_PERCENT, the step-time benchmark's largest miss).
#
#   bench/search_winner/run.sh [PROFILE.json]      env: JOB, TOP (5), STEPS (10), WARMUP (2),
#                                                  SETS (extra --set values), ERROR_PERCENT (15)
# Benchmarks are run by hand, never asserted on in tests.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ACCEL=${ACCEL:-$ROOT/build/cli/accel}
JOB=${JOB:-bench/step_time/base.yaml}
TOP=${TOP:-5}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-2}
ERROR_PERCENT=${ERROR_PERCENT:-15}
SETS=${SETS:-cluster.devices_per_node=4}
WORK=$(mktemp -d /tmp/accel-search-winner.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"

PROFILE=${1:-}
if [[ -z "$PROFILE" ]]; then
  PROFILE=$WORK/cpu_profile.json
  "$ACCEL" calibrate -o "$PROFILE" >&2
fi
PROFILE=$(cd "$(dirname "$PROFILE")" && pwd)/$(basename "$PROFILE")

sets=(--set cluster.device_profile="$PROFILE" --set training.steps="$STEPS")
for s in $SETS; do sets+=(--set "$s"); done
"$ACCEL" plan "$JOB" "${sets[@]}" --search --top "$TOP" | tee "$WORK/search.txt"
echo

printf '| rank | layout | estimate s | measured s | CPU-time s |\n|---:|---|---:|---:|---:|\n'
for rank in $(seq 1 "$TOP"); do
  spec=$WORK/rank$rank.yaml
  "$ACCEL" plan "$JOB" "${sets[@]}" --search --top "$TOP" --emit-spec "$spec" \
      --emit-rank "$rank" >/dev/null 2>&1 || break
  run_dir=$WORK/run$rank
  python3 - "$ACCEL" "$spec" "$run_dir" "$rank" "$WARMUP" "$(nproc)" "$WORK/search.txt" \
      "$STEPS" <<'PY'
import json, resource, statistics, subprocess, sys
accel, spec, run_dir, rank, warmup, cores, table, steps = sys.argv[1:]
est = float(json.loads(subprocess.run([accel, "plan", spec, "--format", "json"],
                                      capture_output=True, check=True).stdout)
            ["step_time"]["step_seconds"])
row = next(l for l in open(table) if l.startswith(f"{int(rank):4d}  "))
layout = " ".join(row.split()[1:9])
with open(run_dir + ".log", "w") as log:
    rc = subprocess.run([accel, "run", spec, "--run-dir", run_dir,
                         "--set", f"checkpoint.dir={run_dir}/ckpt"],
                        stdout=log, stderr=subprocess.STDOUT).returncode
if rc != 0:
    print(f"| {rank} | {layout} | {est:.3f} | run failed (see log) | |"); sys.exit(0)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
steps_done = [json.loads(l) for l in open(run_dir + "/metrics.jsonl") if l.strip()]
measured = statistics.median(s["step_seconds"] for s in steps_done[int(warmup):])
cpu = (u.ru_utime + u.ru_stime) / int(steps) / int(cores)
print(f"| {rank} | {layout} | {est:.3f} | {measured:.3f} | {cpu:.3f} |")
PY
done | tee "$WORK/rows.txt"

python3 - "$WORK/rows.txt" "$ERROR_PERCENT" <<'PY'
import sys
rows = [l.split("|") for l in open(sys.argv[1]) if l.startswith("| ") and "failed" not in l]
if not rows:
    print("no layout ran"); sys.exit(1)
measured = {int(r[1]): float(r[4]) for r in rows}
best = min(measured, key=measured.get)
first = measured.get(1)
print()
if best == 1:
    print(f"rank 1 was measured fastest ({first:.3f} s per step)")
else:
    gap = 100 * (first - measured[best]) / measured[best]
    verdict = "within" if gap <= float(sys.argv[2]) else "beyond"
    print(f"rank {best} was measured fastest ({measured[best]:.3f} s); rank 1 took {first:.3f} s, "
          f"{gap:.1f}% slower: {verdict} the step-time model's stated error of {sys.argv[2]}%")
PY
