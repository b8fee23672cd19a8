#!/usr/bin/env bash
# Drill: two jobs on the same two nodes, with different identities (job names a and b).
#   1. On different ports, at the same time, with job tokens ACCEL_JOB_TOKEN=drill-a / drill-b:
#      both finish, each with its own 4 ranks and all its steps (had a worker joined the other
#      job's store, a world would hold 6 ranks and hang or fail).
#   2. On the same port, without ACCEL_JOB_TOKEN, so each job's token is its plan hash
#      (launcher/job_token.h): job a's node 0 serves the store and waits for its node 1; job b
#      then starts on both nodes. b's rank 0 cannot bind the port ("cannot serve the rendezvous
#      store"), and b's other ranks reach a's store and are refused by its job token ("belongs to
#      another job"): b exits 4 within 20 s. Then a's node 1 starts and a finishes normally.
#      (Before plan-hash tokens a job by hand had none, b's ranks joined a's rendezvous, and the
#      plan check then stopped both jobs.)
# Prints the seconds each phase took.
# Usage: two_jobs_test.sh ACCEL
set -euo pipefail
# shellcheck source=SCRIPTDIR/netns_harness.sh
source "$(dirname "$0")/netns_harness.sh"
nn_init "$1"
nn_make_nodes 2
steps=4

# start_job NAME PORT NODE...: starts job NAME's given nodes, with ACCEL_JOB_TOKEN=drill-NAME
# when TOKENS is 1; sets PID[<NAME><K>].
declare -A PID
TOKENS=1
start_job() {
  local name=$1 port=$2 k
  shift 2
  mapfile -t args < <(nn_job_args "$steps" "$NN_WORK/$name$port" --set name="$name")
  for k in "$@"; do
    if [ "$TOKENS" = 1 ]; then
      ACCEL_JOB_TOKEN="drill-$name" nn_start "$k" "$port" "$NN_WORK/$name$port-node$k.out" "${args[@]}"
    else
      nn_start "$k" "$port" "$NN_WORK/$name$port-node$k.out" "${args[@]}"
    fi
    PID[$name$k]=$NN_LAST_PID
  done
}
expect_exit() {  # PID LIMIT EXPECTED WHAT
  nn_wait_exit "$1" "$2"
  [ "$NN_RC" = "$3" ] || nn_fail "$4: exit $NN_RC, expected $3"
}

# 1. Different ports, at the same time.
pa=$(nn_port 5)
pb=$(nn_port 6)
start=$(nn_now)
start_job a "$pa" 0 1
start_job b "$pb" 0 1
expect_exit "${PID[a0]}" 120 0 "job a (port $pa) node 0"
expect_exit "${PID[a1]}" 10 0 "job a (port $pa) node 1"
expect_exit "${PID[b0]}" 120 0 "job b (port $pb) node 0"
expect_exit "${PID[b1]}" 10 0 "job b (port $pb) node 1"
for j in "a$pa" "b$pb"; do
  [ "$(nn_losses "$NN_WORK/$j/metrics.jsonl" | wc -l)" = "$steps" ] || nn_fail "job $j did not log $steps steps"
  grep -q "rank 0/4" "$NN_WORK/$j-node0.out" || nn_fail "job $j's rank 0 does not report a world of 4"
done
echo "measured: jobs a (port $pa) and b (port $pb) side by side both finished in $(nn_elapsed "$start" "$(nn_now)") s"

# 2. The same port, no ACCEL_JOB_TOKEN.
TOKENS=0
unset ACCEL_JOB_TOKEN
p=$(nn_port 7)
start_job a "$p" 0
for ((i = 0; i < 300; i++)); do
  [ -z "$(ip netns exec "${NN_NODE[0]}" ss -Hltn "sport = :$p")" ] || break
  sleep 0.1
done
start=$(nn_now)
start_job b "$p" 0 1
expect_exit "${PID[b0]}" 20 4 "job b's node 0 on job a's port $p"
expect_exit "${PID[b1]}" 20 4 "job b's node 1 on job a's port $p"
echo "measured: job b on job a's port $p refused in $(nn_elapsed "$start" "$(nn_now)") s"
echo "job b's launchers said:"
grep -hE '^error: rank [0-9]+:' "$NN_WORK/b$p-node0.out" "$NN_WORK/b$p-node1.out" | sort -u
grep -qE "^error: rank 0: cannot serve the rendezvous store on ${NN_ADDR[0]}:$p from rank 0" "$NN_WORK/b$p-node0.out" ||
  nn_fail "job b's rank 0 does not say that it cannot serve the store on ${NN_ADDR[0]}:$p"
grep -qE "^error: rank [23]: the rendezvous store at ${NN_ADDR[0]}:$p belongs to another job" "$NN_WORK/b$p-node1.out" ||
  nn_fail "job b's node 1 does not say that the store at ${NN_ADDR[0]}:$p belongs to another job"
start_job a "$p" 1
expect_exit "${PID[a0]}" 90 0 "job a's node 0 after job b was refused"
expect_exit "${PID[a1]}" 10 0 "job a's node 1 after job b was refused"
[ "$(nn_losses "$NN_WORK/a$p/metrics.jsonl" | wc -l)" = "$steps" ] || nn_fail "job a did not log $steps steps"
echo "PASS: two jobs with different identities never join each other"
