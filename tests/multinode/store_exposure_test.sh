#!/usr/bin/env bash
# Drill: who can reach a multi-node job's rendezvous store (README / docs/faults.md, threat model:
# "a multi-node job's store listens on the master address only").
#
# Node 0 starts alone, so its rank 0 serves the store and waits for the other ranks. Node 0 also
# holds a second address, 10.232.0.1, on the outsider's subnet: a machine with two networks.
# Then, with TCP connects (bash /dev/tcp):
#   - node 1 (part of the job) to 10.231.0.1:PORT          -> connected  (the job works)
#   - the outsider (10.232.0.9) to 10.231.0.1:PORT        -> unreachable (another subnet, no route)
#   - the outsider to node 0's other address 10.232.0.1:PORT -> refused (the store is not bound
#     there: with LibTorch's own wildcard bind this would connect)
#   - node 0 itself to 127.0.0.1:PORT                      -> refused
# and `ss` must show the listener on the master address alone. Then node 1 starts and the job
# must finish normally: the probes' connections did not disturb the store.
# Usage: store_exposure_test.sh ACCEL
set -euo pipefail
# shellcheck source=SCRIPTDIR/netns_harness.sh
source "$(dirname "$0")/netns_harness.sh"
nn_init "$1"
nn_make_nodes 2
port=$(nn_port 4)
ip -n "${NN_NODE[0]}" addr add "$NN_OUT_NET.1/24" dev eth0

mapfile -t args < <(nn_job_args 4 "$NN_WORK/job")
nn_start 0 "$port" "$NN_WORK/node0.out" "${args[@]}"
node0=$NN_LAST_PID
# Wait for the listener (rank 0 binds it while the launcher has started its workers).
for ((i = 0; i < 300; i++)); do
  listen=$(ip netns exec "${NN_NODE[0]}" ss -Hltn "sport = :$port" | awk '{print $4}' | sort -u | tr '\n' ' ')
  [ -z "$listen" ] || break
  kill -0 "$node0" 2>/dev/null || nn_fail "node 0's accel run exited before serving the store"
  sleep 0.1
done
[ -n "$listen" ] || nn_fail "nothing listens on port $port in node 0 after 30 s"

member=$(nn_tcp_probe "${NN_NODE[1]}" "${NN_ADDR[0]}" "$port")
outsider=$(nn_tcp_probe "$NN_OUTSIDER" "${NN_ADDR[0]}" "$port")
other_addr=$(nn_tcp_probe "$NN_OUTSIDER" "$NN_OUT_NET.1" "$port")
loopback=$(nn_tcp_probe "${NN_NODE[0]}" 127.0.0.1 "$port")
echo "store listens on: $listen"
echo "node 1 -> ${NN_ADDR[0]}:$port: $member"
echo "outsider $NN_OUT_ADDR -> ${NN_ADDR[0]}:$port: $outsider"
echo "outsider $NN_OUT_ADDR -> node 0's other address $NN_OUT_NET.1:$port: $other_addr"
echo "node 0 -> 127.0.0.1:$port: $loopback"

case "$listen" in
  "${NN_ADDR[0]}:$port " | "[::ffff:${NN_ADDR[0]}]:$port ") ;;
  *) nn_fail "the store listens on '$listen', expected ${NN_ADDR[0]}:$port only" ;;
esac
[ "$member" = connected ] || nn_fail "node 1 cannot connect to the store: $member"
[ "$outsider" = unreachable ] || nn_fail "the outsider reaching ${NN_ADDR[0]}: expected unreachable, got $outsider"
[ "$other_addr" = refused ] || nn_fail "the store answers on node 0's other address $NN_OUT_NET.1 ($other_addr), expected refused"
[ "$loopback" = refused ] || nn_fail "the store answers on node 0's loopback ($loopback), expected refused"

nn_start 1 "$port" "$NN_WORK/node1.out" "${args[@]}"
node1=$NN_LAST_PID
nn_wait_exit "$node0" 90
[ "$NN_RC" = 0 ] || nn_fail "node 0's accel run exited $NN_RC after the probes, expected 0"
nn_wait_exit "$node1" 10
[ "$NN_RC" = 0 ] || nn_fail "node 1's accel run exited $NN_RC after the probes, expected 0"
[ "$(nn_losses "$NN_WORK/job/metrics.jsonl" | wc -l)" = 4 ] || nn_fail "the job did not log 4 steps"
echo "PASS: the store is reachable from the job's network only, on the master address only"
