#!/usr/bin/env bash
# Drill: a 2-node x 2-rank job, each node in its own network namespace, trains with the same step
# losses as the same job on one node with 4 ranks.
#
# Tolerance: 1e-5 relative per step (the losses are printed with 9 significant digits). The two
# runs hold the same 4 ranks with the same data shards and seeds, so the forward pass is the same
# per rank; only the gradient all-reduce differs: Gloo's ring over TCP between namespaces against
# its ring over loopback. A different summation order changes the fp32 sum by a few ulps (~1e-7
# relative), which after a few Adam steps moves the loss by far less than 1e-5; a wrong world
# size, a rank that trained on another shard, or a missing reduction moves it by 1e-3 or more.
# Usage: parity_test.sh ACCEL
set -euo pipefail
# shellcheck source=SCRIPTDIR/netns_harness.sh
source "$(dirname "$0")/netns_harness.sh"
nn_init "$1"
nn_make_nodes 2
steps=6
port=$(nn_port 1)

# Reference: one node, 4 ranks (file store, loopback), in node 0's namespace.
mapfile -t ref_args < <(nn_job_args "$steps" "$NN_WORK/ref" --set cluster.nodes=1 --set cluster.devices_per_node=4)
start=$(nn_now)
nice -n 10 ip netns exec "${NN_NODE[0]}" "$NN_ACCEL" run "$NN_SPEC" "${ref_args[@]}" >"$NN_WORK/ref.out" 2>&1 ||
  nn_fail "the 1-node x 4-rank reference run failed (exit $?)"
nn_log "1 node x 4 ranks: $(nn_elapsed "$start" "$(nn_now)") s"

mapfile -t args < <(nn_job_args "$steps" "$NN_WORK/multi")
start=$(nn_now)
nn_start 1 "$port" "$NN_WORK/node1.out" "${args[@]}"
node1=$NN_LAST_PID
nn_start 0 "$port" "$NN_WORK/node0.out" "${args[@]}"
node0=$NN_LAST_PID
nn_wait_exit "$node0" 90
rc0=$NN_RC
nn_wait_exit "$node1" 10
rc1=$NN_RC
[ "$rc0" = 0 ] || nn_fail "node 0's accel run: exit $rc0 (expected 0)"
[ "$rc1" = 0 ] || nn_fail "node 1's accel run: exit $rc1 (expected 0)"
nn_log "2 nodes x 2 ranks over ${NN_ADDR[0]}:$port: $(nn_elapsed "$start" "$(nn_now)") s"
grep -q "launching 2 workers (multi-node, node 0 of 2)" "$NN_WORK/node0.out" ||
  nn_fail "node 0 did not launch as node 0 of 2: $(grep launching "$NN_WORK/node0.out")"
grep -q "rank 0/4" "$NN_WORK/node0.out" || nn_fail "node 0's rank 0 does not report a world of 4"

nn_losses "$NN_WORK/ref/metrics.jsonl" >"$NN_WORK/ref.losses"
nn_losses "$NN_WORK/multi/metrics.jsonl" >"$NN_WORK/multi.losses"
paste -d' ' "$NN_WORK/ref.losses" "$NN_WORK/multi.losses" |
  awk -v steps="$steps" '
    { n++; d = $2 - $4; if (d < 0) d = -d; r = d / $2; if (r > worst) worst = r
      printf "step %s: 1x4 %s  2x2 %s  |diff| %.2e\n", $1, $2, $4, d
      if ($1 != $3 || r > 1e-5) bad = 1 }
    END { printf "max relative difference %.2e over %d steps (tolerance 1e-5)\n", worst, n
          if (n != steps) { print "FAIL: expected " steps " steps in both runs"; exit 1 }
          if (bad) { print "FAIL: losses differ"; exit 1 } }' ||
  nn_fail "2-node losses differ from the 1-node losses"
echo "PASS: 2 nodes x 2 ranks in network namespaces match 1 node x 4 ranks"
