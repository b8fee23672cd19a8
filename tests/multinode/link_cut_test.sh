#!/usr/bin/env bash
# Drill: node 1's network is cut mid-run (its veth pair is deleted, as a dead NIC or a pulled
# cable). Nothing tells the peers: no FIN or RST ever arrives, so only the collective timeout
# (cluster.collective_timeout_seconds, 3 s here; default 300) can end the
# job. Checks that node 0's `accel run` is down within that timeout plus 7 s (a second for the
# failing worker to flush its log, the step in flight, and the launcher stopping the other local
# worker, plus the 1-2 s roll call that names the lost node), exits 4, and names a rank, the
# timeout and node 1 as gone; node 1's launcher, cut off from everything, must go down the same
# way and say that it is cut off. Prints the measured seconds from the cut.
# Usage: link_cut_test.sh ACCEL
set -euo pipefail
# shellcheck source=SCRIPTDIR/netns_harness.sh
source "$(dirname "$0")/netns_harness.sh"
nn_init "$1"
nn_make_nodes 2
port=$(nn_port 2)
NN_TIMEOUT_S=3
limit=$((NN_TIMEOUT_S + 7))

mapfile -t args < <(nn_job_args 100000 "$NN_WORK/job")
nn_start 1 "$port" "$NN_WORK/node1.out" "${args[@]}"
node1=$NN_LAST_PID
nn_start 0 "$port" "$NN_WORK/node0.out" "${args[@]}"
node0=$NN_LAST_PID
nn_wait_step "$NN_WORK/job" 3 60 "$node0" "$node1"

cut=$(nn_now)
# Deleting one end of a veth pair deletes both: node 1 is left without eth0.
ip -n "$NN_SWITCH" link del p1
nn_log "cut node 1 (${NN_ADDR[1]}) off the switch"

nn_wait_exit "$node0" "$((limit + 20))"
rc0=$NN_RC
down0=$(nn_elapsed "$cut" "$(nn_now)")
nn_wait_exit "$node1" 20
rc1=$NN_RC
down1=$(nn_elapsed "$cut" "$(nn_now)")
echo "measured: node 0 down ${down0} s after the cut (exit $rc0), node 1 down ${down1} s (exit $rc1); collective timeout ${NN_TIMEOUT_S} s, limit ${limit} s"
echo "node 0's launcher said:"
grep -E '^error' "$NN_WORK/node0.out" | head -n 3 || true
echo "node 1's launcher said:"
grep -E '^error' "$NN_WORK/node1.out" | head -n 3 || true

[ "$rc0" != running ] || nn_fail "node 0's accel run still running $((limit + 20)) s after the cut"
[ "$rc0" = 4 ] || nn_fail "node 0's accel run exited $rc0, expected 4 (a worker failed)"
awk -v d="$down0" -v l="$limit" 'BEGIN { exit !(d <= l) }' ||
  nn_fail "node 0 took ${down0} s to go down, more than the collective timeout + 7 s = ${limit} s"
grep -qE '^error: rank [01] ' "$NN_WORK/node0.out" || nn_fail "node 0's launcher does not name its failed rank (0 or 1)"
grep -qiE 'timed? ?out' "$NN_WORK/node0.out" || nn_fail "node 0's launcher does not say that a collective timed out"
[ "$rc1" != running ] || nn_fail "node 1's accel run still running after the cut"
[ "$rc1" = 4 ] || nn_fail "node 1's accel run exited $rc1, expected 4"
grep -qE '^error: rank [23] ' "$NN_WORK/node1.out" || nn_fail "node 1's launcher does not name its failed rank (2 or 3)"
# Which node is gone, from each side (the roll call on the store, launcher/peer_loss_report.h).
grep -qE "^error: rank [01]: .*; after the failure no word within 1 s from node 1 \(ranks 2, 3\): it is likely down or cut off" \
  "$NN_WORK/node0.out" || nn_fail "node 0's launcher does not name node 1 (ranks 2, 3) as gone"
grep -qE "^error: rank [23]: .*did not answer within 2 s either: this node \(node 1\) is likely cut off from it" \
  "$NN_WORK/node1.out" || nn_fail "node 1's launcher does not say that node 1 is cut off"
echo "PASS: a cut node brings the job down in ${down0} s (collective timeout ${NN_TIMEOUT_S} s)"
