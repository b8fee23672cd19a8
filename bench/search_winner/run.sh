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
#                                                  SETS (extra --set values), ERROR_PERCENT (15),
#                                                  PASSES (3: runs per rank, median reported)
# Benchmarks are run by hand, never asserted on in tests.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
ACCEL=${ACCEL:-$ROOT/build/cli/accel}
JOB=${JOB:-bench/step_time/base.yaml}
TOP=${TOP:-5}
STEPS=${STEPS:-10}
WARMUP=${WARMUP:-2}
PASSES=${PASSES:-3}
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

# Every rank runs once per pass (PASSES, default 3), passes one after another, so that the
# machine's drift over minutes spreads over all ranks; each rank reports the median of its
# passes and their range.
for rank in $(seq 1 "$TOP"); do
  "$ACCEL" plan "$JOB" "${sets[@]}" --search --top "$TOP" --emit-spec "$WORK/rank$rank.yaml" \
      --emit-rank "$rank" >/dev/null 2>&1 || break
done
for pass in $(seq "$PASSES"); do
for rank in $(seq 1 "$TOP"); do
  spec=$WORK/rank$rank.yaml
  [[ -f "$spec" ]] || break
  run_dir=$WORK/run$rank-$pass
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
record = {"rank": int(rank), "layout": layout, "estimate": est, "ok": rc == 0}
if rc == 0:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    steps_done = [json.loads(l) for l in open(run_dir + "/metrics.jsonl") if l.strip()]
    record["measured"] = statistics.median(s["step_seconds"] for s in steps_done[int(warmup):])
    record["cpu"] = (u.ru_utime + u.ru_stime) / int(steps) / int(cores)
print(json.dumps(record))
PY
done
done >"$WORK/rows.jsonl"

python3 - "$WORK/rows.jsonl" "$ERROR_PERCENT" <<'PY'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs.setdefault(r["rank"], []).append(r)
print("| rank | layout (dr x ds x tp x pp, cp, stage, micro, accum) | estimate s | measured s "
      "| passes min-max | CPU-time s |")
print("|---:|---|---:|---:|---:|---:|")
measured = {}
for rank, rs in sorted(runs.items()):
    ok = [r for r in rs if r["ok"]]
    if len(ok) < len(rs):
        print(f'| {rank} | {rs[0]["layout"]} | {rs[0]["estimate"]:.3f} | run failed (see log) | | |')
        continue
    measured[rank] = statistics.median(r["measured"] for r in ok)
    lo, hi = min(r["measured"] for r in ok), max(r["measured"] for r in ok)
    print(f'| {rank} | {rs[0]["layout"]} | {rs[0]["estimate"]:.3f} | {measured[rank]:.3f} | '
          f'{lo:.3f}-{hi:.3f} | {statistics.median(r["cpu"] for r in ok):.3f} |')
if not measured:
    print("no layout ran"); sys.exit(1)
best = min(measured, key=measured.get)
first = measured.get(1)
print()
if first is None:
    print("rank 1 did not run")
elif best == 1:
    print(f"rank 1 was measured fastest ({first:.3f} s per step)")
else:
    gap = 100 * (first - measured[best]) / measured[best]
    verdict = "within" if gap <= float(sys.argv[2]) else "beyond"
    print(f"rank {best} was measured fastest ({measured[best]:.3f} s); rank 1 took {first:.3f} s, "
          f"{gap:.1f}% slower: {verdict} the step-time model's stated error of {sys.argv[2]}%")
PY
