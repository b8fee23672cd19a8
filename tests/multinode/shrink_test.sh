#!/usr/bin/env bash
# Drill: a 3-node x 1-rank job started with `--max-restarts 1 --min-nodes 2` loses node 0 (its
# `accel run` SIGKILLed, so the master, rank 0 and its store go with it). Nodes 1 and 2 must meet
# again (--rejoin-timeout 4), re-plan the job for 2 nodes (data parallel 3 -> 2, the global batch
# of 12 kept by gradient accumulation 2 -> 3), resume from the newest checkpoint with resharding
# and finish, node 1 now the master.
#
# Then the reference: the checkpoint the shrunk job resumed, copied to a directory of its own, and
# a fresh 2-node job resumed from it. The losses after the resumed step must be identical (the
# printed 9 significant digits): both runs load the same checkpoint into the same layout and
# compute the same steps on the same data with the same 2-rank Gloo ring, so the arithmetic is
# the same; any difference means the shrink resumed something else (another step, the data
# position, the optimizer state) or planned another layout.
# Also checks: restarts.jsonl and summary.json record the restart (3 -> 2 nodes, the resumed step,
# the time lost); the checkpoint the job resumed from was not overwritten; the checkpoints before
# and after the shrink are one lineage (one run id); prints the measured down time.
# Usage: shrink_test.sh ACCEL
set -euo pipefail
# shellcheck source=SCRIPTDIR/netns_harness.sh
source "$(dirname "$0")/netns_harness.sh"
nn_init "$1"
nn_make_nodes 3
port=$(nn_port 4)
steps=80

# 3 nodes x 1 rank, a checkpoint every 10 steps, all kept (the reference resumes one of them).
shrink_args() {
  local run_dir=$1 nodes=$2
  shift 2
  nn_job_args "$steps" "$run_dir" --set cluster.nodes="$nodes" --set cluster.devices_per_node=1 \
    --set data.global_batch_size=12 --set checkpoint.every_steps=10 --set checkpoint.keep=100 \
    --set checkpoint.resume=auto "$@"
}
mapfile -t args < <(shrink_args "$NN_WORK/job" 3 --max-restarts 1 --min-nodes 2 --rejoin-timeout 4)
for k in 2 1 0; do
  nn_start "$k" "$port" "$NN_WORK/node$k.out" "${args[@]}"
  pid[k]=$NN_LAST_PID
done
nn_wait_step "$NN_WORK/job" 25 120 "${pid[0]}" "${pid[1]}" "${pid[2]}"

killed=$(nn_now)
kill -KILL "${pid[0]}"
nn_log "SIGKILL to node 0's accel run (pid ${pid[0]}): the master goes"
nn_wait_exit "${pid[1]}" 150
rc1=$NN_RC
nn_wait_exit "${pid[2]}" 20
rc2=$NN_RC
wait "${pid[0]}" 2>/dev/null || true
[ "$rc1" = 0 ] || nn_fail "node 1's accel run: exit $rc1 (expected 0 after going on with 2 nodes)"
[ "$rc2" = 0 ] || nn_fail "node 2's accel run: exit $rc2 (expected 0 after going on with 2 nodes)"
grep -q "continuing on 2 of 3 nodes (launch node ranks 1, 2); this node is node 0 of 2, master ${NN_ADDR[1]}:$port" \
  "$NN_WORK/node1.out" || nn_fail "node 1 did not go on as node 0 of 2 with itself as the master"
grep -q "continuing on 2 of 3 nodes (launch node ranks 1, 2); this node is node 1 of 2" "$NN_WORK/node2.out" ||
  nn_fail "node 2 did not go on as node 1 of 2"
grep -q "elastic restart 1: the job goes on with 2 of 3 nodes: data parallel 3 -> 2; the global batch of 12 sequences is kept by gradient accumulation 2 -> 3" \
  "$NN_WORK/job/plan.txt" || nn_fail "plan.txt does not say how the job was re-planned"
grep -q "run finished after 1 restart (now 2 of 3 nodes)" "$NN_WORK/node1.out" || nn_fail "node 1 does not report the restart"

record=$(cat "$NN_WORK/job/restarts.jsonl")
echo "restarts.jsonl: $record"
resumed=$(sed -n 's/.*"resumed_step":\([0-9]*\).*/\1/p' "$NN_WORK/job/restarts.jsonl")
[ -n "$resumed" ] && [ "$resumed" -ge 20 ] || nn_fail "restarts.jsonl does not name a resumed step of 20 or later"
echo "$record" | grep -q '"nodes_before":3,"nodes_after":2,"world_before":3,"world_after":2,"nodes_kept":\[1,2\]' ||
  nn_fail "restarts.jsonl does not record 3 -> 2 nodes keeping nodes 1 and 2"
relaunch=$(sed -n 's/.*"relaunch_unix":\([0-9.]*\).*/\1/p' "$NN_WORK/job/restarts.jsonl")
lost=$(sed -n 's/.*"time_lost_seconds":\([0-9.]*\).*/\1/p' "$NN_WORK/job/summary.json")
[ -n "$lost" ] || nn_fail "summary.json has no time_lost_seconds for the restart: $(cat "$NN_WORK/job/summary.json")"
echo "measured: workers relaunched on 2 nodes $(nn_elapsed "$killed" "$relaunch") s after node 0 was killed (rejoin timeout 4 s); the restart cost $(printf "%.1f" "$lost") s of training time (summary.json); resumed step $resumed"

# The resumed checkpoint is intact (a shrink never overwrites what it resumed from).
ckpt=$(printf '%s/job/ckpt/step_%08d' "$NN_WORK" "$resumed")
[ -f "$ckpt/manifest.json" ] || nn_fail "the resumed checkpoint $ckpt is gone"

# One lineage across the shrink: every checkpoint records the same run id, so retention
# (checkpoint.keep) prunes the pre-shrink checkpoints as the job's own (node 1's launcher had
# drawn another run id at launch; the re-plan adopts the resumed checkpoint's).
ids=$(sed -n 's/.*"run_id": *"\([0-9a-f]*\)".*/\1/p' "$NN_WORK"/job/ckpt/step_*/manifest.json | sort -u)
[ "$(echo "$ids" | wc -l)" = 1 ] || nn_fail "the checkpoints record more than one run id: $ids"
for step in 10 70; do  # one from the 3-node job, one from the 2-node job
  [ -f "$(printf '%s/job/ckpt/step_%08d/manifest.json' "$NN_WORK" "$step")" ] || nn_fail "no checkpoint of step $step"
done

# Reference: a fresh 2-node job resuming a copy of that checkpoint.
mkdir -p "$NN_WORK/ref/ckpt"
cp -a "$ckpt" "$NN_WORK/ref/ckpt/"
mapfile -t ref_args < <(shrink_args "$NN_WORK/ref" 2)
ref_port=$(nn_port 5)
NN_NODE=("${NN_NODE[1]}" "${NN_NODE[2]}")
NN_ADDR=("${NN_ADDR[1]}" "${NN_ADDR[2]}")
nn_start 1 "$ref_port" "$NN_WORK/ref1.out" "${ref_args[@]}"
ref1=$NN_LAST_PID
nn_start 0 "$ref_port" "$NN_WORK/ref0.out" "${ref_args[@]}"
ref0=$NN_LAST_PID
nn_wait_exit "$ref0" 120
[ "$NN_RC" = 0 ] || nn_fail "the 2-node reference run: exit $NN_RC"
nn_wait_exit "$ref1" 10
grep -q "resume from .*step $resumed" "$NN_WORK/ref0.out" || nn_fail "the reference did not resume step $resumed"

nn_losses "$NN_WORK/job/metrics.jsonl" | awk -v s="$resumed" '$1 > s' >"$NN_WORK/shrunk.losses"
nn_losses "$NN_WORK/ref/metrics.jsonl" | awk -v s="$resumed" '$1 > s' >"$NN_WORK/ref.losses"
paste -d' ' "$NN_WORK/shrunk.losses" "$NN_WORK/ref.losses" |
  awk -v want=$((steps - resumed)) '
    { n++; if ($1 != $3 || $2 != $4) { bad = 1; printf "step %s: shrunk %s, reference step %s %s\n", $1, $2, $3, $4 } }
    END { printf "%d steps after the shrink compared with the reference: %s\n", n, bad ? "DIFFER" : "identical"
          if (n != want) { print "FAIL: expected " want " steps"; exit 1 }
          if (bad) exit 1 }' ||
  nn_fail "the losses after the shrink differ from a 2-node run resumed from the same checkpoint"
echo "PASS: losing node 0 of 3, the job went on with 2 nodes and trained as a 2-node job resumed from step $resumed"
