#!/usr/bin/env bash
# Drill: node 1's `accel run` is killed with SIGKILL mid-run (the OOM killer, a node agent).
# Its workers die with it (PR_SET_PDEATHSIG) and the kernel closes their sockets, so node 0's
# workers see their Gloo connections reset at once, without waiting for the collective timeout.
# Checks that node 0's `accel run` is down within 10 s of the kill, exits 4, names a rank and
# the node that went away;
# prints the measured seconds. Also checks that no worker of node 1 outlives its launcher.
# Usage: node_kill_test.sh ACCEL
set -euo pipefail
# shellcheck source=SCRIPTDIR/netns_harness.sh
source "$(dirname "$0")/netns_harness.sh"
nn_init "$1"
nn_make_nodes 2
port=$(nn_port 3)
limit=10

# A collective timeout far above the limit, so that passing proves the job noticed the dead
# peer itself rather than timing out.
NN_TIMEOUT_S=60
mapfile -t args < <(nn_job_args 100000 "$NN_WORK/job")
nn_start 1 "$port" "$NN_WORK/node1.out" "${args[@]}"
node1=$NN_LAST_PID
nn_start 0 "$port" "$NN_WORK/node0.out" "${args[@]}"
node0=$NN_LAST_PID
nn_wait_step "$NN_WORK/job" 3 60 "$node0" "$node1"

killed=$(nn_now)
kill -KILL "$node1"
nn_log "SIGKILL to node 1's accel run (pid $node1)"
nn_wait_exit "$node0" "$((limit + 30))"
rc0=$NN_RC
down=$(nn_elapsed "$killed" "$(nn_now)")
wait "$node1" 2>/dev/null || true
# Node 1's workers must not outlive their launcher (they would keep the job's ports and CPUs).
sleep 0.5
left=$(ip netns pids "${NN_NODE[1]}" || true)
echo "measured: node 0 down ${down} s after SIGKILL of node 1's launcher (exit $rc0; collective timeout ${NN_TIMEOUT_S} s, limit ${limit} s)"
echo "node 0's launcher said:"
grep -E '^error' "$NN_WORK/node0.out" | head -n 3 || true

[ -z "$left" ] || nn_fail "node 1's processes outlived its killed launcher: $(ps -o pid=,args= -p "$(echo "$left" | tr '\n' ,)")"
[ "$rc0" != running ] || nn_fail "node 0's accel run still running $((limit + 30)) s after node 1 was killed"
[ "$rc0" = 4 ] || nn_fail "node 0's accel run exited $rc0, expected 4"
awk -v d="$down" -v l="$limit" 'BEGIN { exit !(d <= l) }' ||
  nn_fail "node 0 took ${down} s to go down after node 1 was killed, more than ${limit} s"
grep -qE '^error: rank [01] ' "$NN_WORK/node0.out" || nn_fail "node 0's launcher does not name its failed rank (0 or 1)"
# The named rank may be either of node 0's (both lose node 1 at once, and the Gloo error of one
# of them may name node 0's own address: "Connection closed by peer [10.231.0.1]"), so the node
# that went away is named by the roll call every failing rank makes on the store.
grep -qE "^error: rank [01]: .*; after the failure no word within 1 s from node 1 \(ranks 2, 3\): it is likely down or cut off" \
  "$NN_WORK/node0.out" || nn_fail "node 0's launcher does not name node 1 (ranks 2, 3) as gone"
echo "PASS: a killed node brings the job down in ${down} s"
