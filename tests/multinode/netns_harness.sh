# shellcheck shell=bash
# Multi-node drills in network namespaces (#42): helpers sourced by the drill scripts next to it.
#
# Each "node" is a network namespace holding one interface, eth0, with an address on
# 10.231.0.0/24 (node K has 10.231.0.(K+1)), plugged into a bridge that lives in a namespace of
# its own (the "switch"), so the drills never add an interface, address or route to the machine's
# own network namespace, and all job traffic stays among these addresses. An "outsider"
# namespace on another subnet (10.232.0.0/24), plugged into the same switch, plays a host that is
# not part of the job.
#
# Each node gets /etc/netns/<ns>/hosts, which `ip netns exec` mounts over /etc/hosts inside the
# namespace, mapping the host name to 127.0.1.1 as a default Debian install does. LibTorch's own
# choice of Gloo address (ProcessGroupGloo::createDefaultDevice resolves the host name) would then
# be a loopback address no peer can reach; the drills pass only because workers bind Gloo to the
# local end of the route to the master (common/route_address.h).
#
# Where namespaces cannot be made (not root, no `ip`, no CAP_NET_ADMIN, a kernel without veth or
# bridges), nn_init prints why and exits 77, which CTest reports as skipped (SKIP_RETURN_CODE 77),
# never as passed.
#
# Usage in a drill:
#   source netns_harness.sh; nn_init ACCEL; nn_make_nodes 2
#   mapfile -t args < <(nn_job_args STEPS RUN_DIR); nn_start K PORT OUT "${args[@]}"; ...
# Run the drills through CTest (`ctest -L multinode`) or one by one: bash DRILL.sh ACCEL.

# shellcheck disable=SC2034  # NN_RC and the like are read by the drills
NN_SKIP=77
NN_NET=10.231.0
NN_OUT_NET=10.232.0

nn_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
nn_fail() { printf 'FAIL: %s\n' "$*"; exit 1; }
nn_skip() { printf 'SKIP: %s\n' "$*"; exit "$NN_SKIP"; }

# Seconds since the epoch with milliseconds, for measured down times.
nn_now() { date +%s.%N | cut -c1-14; }
nn_elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# nn_init ACCEL: checks the binary and that namespaces can be made; sets up the cleanup trap and
# a work directory. Exits 77 (skip) with the reason when namespaces are unavailable.
nn_init() {
  NN_ACCEL=$1
  [ -x "$NN_ACCEL" ] || nn_fail "accel binary '$NN_ACCEL' is not executable"
  NN_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  NN_SPEC="$NN_HERE/../../examples/specs/gpt2-small_cpu2_dp.yaml"
  [ -r "$NN_SPEC" ] || nn_fail "example spec $NN_SPEC missing"
  [ -r /usr/share/games/fortunes ] || nn_skip "training text /usr/share/games/fortunes missing (Debian package fortunes)"
  [ "$(id -u)" = 0 ] || nn_skip "network namespaces need root (running as uid $(id -u))"
  command -v ip >/dev/null 2>&1 || nn_skip "no 'ip' command (Debian package iproute2)"
  # A short unique prefix: interface names are limited to 15 bytes.
  NN_ID="acl$$"
  NN_NS=()
  NN_PIDS=()
  NN_WORK=$(mktemp -d /tmp/accel-netns.XXXXXX)
  trap nn_cleanup EXIT
  trap 'exit 130' INT TERM
  local probe="${NN_ID}probe" why
  if ! why=$(ip netns add "$probe" 2>&1); then nn_skip "cannot create a network namespace: $why"; fi
  NN_NS+=("$probe")
  # `ip netns exec` also needs a private mount namespace and a fresh /sys mount.
  if ! why=$(ip netns exec "$probe" true 2>&1); then nn_skip "cannot enter a network namespace: $why"; fi
  if ! why=$(ip -n "$probe" link add vp0 type veth peer name vp1 2>&1); then
    nn_skip "cannot create a veth pair in a namespace: $why"
  fi
  if ! why=$(ip -n "$probe" link add br0 type bridge 2>&1); then
    nn_skip "cannot create a bridge in a namespace: $why"
  fi
  ip netns del "$probe"
  NN_NS=()
  # The per-node hosts files (see the top) live in /etc/netns, which `ip netns exec` reads.
  if ! why=$(mkdir -p /etc/netns 2>&1) || [ ! -w /etc/netns ]; then
    nn_skip "cannot write /etc/netns for the nodes' hosts files: ${why:-not writable}"
  fi
  nn_reap_stale
}

# Namespaces of a drill that is gone (killed by CTest's timeout, which leaves no time for its
# trap) would otherwise stay forever: their processes are killed and the namespaces deleted.
# Only names of this harness (acl<pid>...) whose drill pid is no longer a running bash are touched.
nn_reap_stale() {
  local ns pid left
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    [[ "$ns" =~ ^acl([0-9]+)(sw|n[0-9]+|out|probe)$ ]] || continue
    pid=${BASH_REMATCH[1]}
    [ "$pid" != $$ ] || continue
    if [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = bash ]; then continue; fi
    left=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086  # one pid per word
    [ -z "$left" ] || kill -KILL $left 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
    nn_log "removed namespace $ns left by drill pid $pid"
  done
}

# Kills what the drill started, then deletes the namespaces (which deletes their interfaces) and
# the per-namespace hosts files. Runs on every exit, failed or not.
nn_cleanup() {
  local status=$? pid ns
  trap - EXIT
  for pid in "${NN_PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${NN_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  # Workers die with their launcher (PR_SET_PDEATHSIG); anything left in a namespace is ours.
  for ns in "${NN_NS[@]}"; do
    local left
    left=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086  # one pid per word
    [ -z "$left" ] || kill -KILL $left 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  if [ "$status" != 0 ] && [ "$status" != "$NN_SKIP" ] && [ -n "${NN_WORK:-}" ]; then
    # A failed drill shows the launchers' output and the workers' logs.
    local f
    for f in "$NN_WORK"/*.out "$NN_WORK"/*/rank*.log; do
      [ -f "$f" ] || continue
      echo "---- $f (last 15 lines)"
      tail -n 15 "$f"
    done
  fi
  [ -z "${NN_WORK:-}" ] || rm -rf "$NN_WORK"
  exit "$status"
}

# nn_ns NAME: creates namespace NAME (prefixed) with loopback up; sets NN_LAST_NS to its full
# name. (Not a command substitution: NN_NS, which the cleanup reads, must grow in this shell.)
nn_ns() {
  NN_LAST_NS="${NN_ID}$1"
  ip netns add "$NN_LAST_NS" || nn_fail "ip netns add $NN_LAST_NS failed"
  NN_NS+=("$NN_LAST_NS")
  ip -n "$NN_LAST_NS" link set lo up
}

# nn_plug NS ADDR/PREFIX PORTNAME: a veth pair from namespace NS (as eth0, address ADDR) to the
# switch's bridge (as PORTNAME).
nn_plug() {
  local ns=$1 addr=$2 port=$3
  ip link add "$port" netns "$NN_SWITCH" type veth peer name eth0 netns "$ns" ||
    nn_fail "cannot create veth $port for $ns"
  ip -n "$NN_SWITCH" link set "$port" master br0 up
  ip -n "$ns" addr add "$addr" dev eth0
  ip -n "$ns" link set eth0 up
}

# nn_make_nodes N: the switch, N node namespaces (NN_NODE[K], address NN_ADDR[K]) and the
# outsider (NN_OUTSIDER, address NN_OUT_ADDR). Waits until every node answers a TCP connection
# from node 0 (new veth links take a moment to come up).
nn_make_nodes() {
  local n=$1 k
  nn_ns sw
  NN_SWITCH=$NN_LAST_NS
  ip -n "$NN_SWITCH" link add br0 type bridge
  ip -n "$NN_SWITCH" link set br0 up
  NN_NODE=()
  NN_ADDR=()
  for ((k = 0; k < n; k++)); do
    nn_ns "n$k"
    NN_NODE[k]=$NN_LAST_NS
    NN_ADDR[k]="$NN_NET.$((k + 1))"
    nn_plug "${NN_NODE[k]}" "${NN_ADDR[k]}/24" "p$k"
    mkdir -p "/etc/netns/${NN_NODE[k]}"
    printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$(hostname)" >"/etc/netns/${NN_NODE[k]}/hosts"
  done
  nn_ns out
  NN_OUTSIDER=$NN_LAST_NS
  NN_OUT_ADDR="$NN_OUT_NET.9"
  nn_plug "$NN_OUTSIDER" "$NN_OUT_ADDR/24" pout
  for ((k = 1; k < n; k++)); do
    local tries=0
    # "refused" is an answer (a RST from node k's kernel): the link is up. No ping: iputils is
    # not among the dependencies.
    until [ "$(nn_tcp_probe "${NN_NODE[0]}" "${NN_ADDR[k]}" 9)" = refused ]; do
      tries=$((tries + 1))
      [ "$tries" -lt 20 ] || nn_fail "node $k (${NN_ADDR[k]}) unreachable from node 0 after 10 s"
      sleep 0.5
    done
  done
  nn_log "namespaces: switch $NN_SWITCH; nodes ${NN_NODE[*]} at ${NN_ADDR[*]}; outsider $NN_OUTSIDER at $NN_OUT_ADDR"
}

# nn_tcp_probe NS HOST PORT: tries a TCP connection from namespace NS (2 s limit) and echoes
# "connected", "refused", "unreachable" or "timeout: ..." (bash's /dev/tcp, no netcat needed).
nn_tcp_probe() {
  local ns=$1 host=$2 port=$3 out
  if out=$(ip netns exec "$ns" timeout 2 bash -c "exec 3<>/dev/tcp/$host/$port" 2>&1); then
    echo connected
  else
    case "$out" in
      *"refused"*) echo refused ;;
      *"unreachable"*) echo unreachable ;;
      *) echo "timeout: $out" ;;
    esac
  fi
  return 0
}

# The tiny job every drill runs: the example GPT-2 cut down to 2 layers of hidden size 32, data
# parallel over 2 nodes x 2 CPU ranks, short sequences, no checkpoints or sample, one intra-op
# thread per worker. nn_job_args STEPS RUN_DIR [EXTRA --set ...]: echoes the arguments after the
# spec, one per line (read them with mapfile).
# NN_TIMEOUT_S is cluster.collective_timeout_seconds: 30 s, far above a step, so that a drill
# sharing the cores with other tests never times out by accident; the drills that measure the
# timeout set their own.
NN_TIMEOUT_S=30
nn_job_args() {
  local steps=$1 run_dir=$2
  shift 2
  printf '%s\n' \
    --set model.hidden_size=32 --set model.num_layers=2 --set model.num_heads=2 \
    --set data.seq_len=32 --set data.micro_batch_size=2 \
    --set training.steps="$steps" --set training.sample_tokens=0 \
    --set training.lr_schedule.warmup_steps=2 \
    --set checkpoint.every_steps=0 --set checkpoint.at_end=false \
    --set checkpoint.dir="$run_dir/ckpt" \
    --set cluster.nodes=2 --set cluster.devices_per_node=2 \
    --set cluster.collective_timeout_seconds="$NN_TIMEOUT_S" \
    --run-dir "$run_dir" --threads-per-worker 1 "$@"
}

# nn_start K PORT OUT ARGS...: starts `accel run SPEC ARGS... --node-rank K --master-addr
# <node 0> --master-port PORT` in node K's namespace, output to OUT, in the background, at low
# priority; sets NN_LAST_PID (the launcher's pid: `ip netns exec` execs the command).
nn_start() {
  local k=$1 port=$2 out=$3
  shift 3
  nice -n 10 ip netns exec "${NN_NODE[k]}" "$NN_ACCEL" run "$NN_SPEC" "$@" \
    --node-rank "$k" --master-addr "${NN_ADDR[0]}" --master-port "$port" >"$out" 2>&1 &
  NN_LAST_PID=$!
  NN_PIDS+=("$NN_LAST_PID")
}

# nn_wait_exit PID LIMIT_S: waits up to LIMIT_S seconds for PID (a child of this shell) to exit;
# sets NN_RC to its exit status, or to "running" when it is still alive at the limit. (Not a
# command substitution: a subshell cannot collect the parent's children.)
nn_wait_exit() {
  local pid=$1 limit=$2 start
  start=$(nn_now)
  while [ "$(ps -o stat= -p "$pid" 2>/dev/null | cut -c1)" != Z ] && kill -0 "$pid" 2>/dev/null; do
    if [ "$(awk -v a="$start" -v b="$(nn_now)" -v l="$limit" 'BEGIN { print (b - a >= l) }')" = 1 ]; then
      NN_RC=running
      return 0
    fi
    sleep 0.1
  done
  NN_RC=0
  wait "$pid" 2>/dev/null || NN_RC=$?
}

# nn_wait_step RUN_DIR STEP LIMIT_S PID...: waits until rank 0's metrics.jsonl holds STEP; fails
# at once when one of the launchers PID... has exited before.
nn_wait_step() {
  local dir=$1 step=$2 limit=$3 i pid
  shift 3
  for ((i = 0; i < limit * 10; i++)); do
    if [ -f "$dir/metrics.jsonl" ] && grep -q "\"step\":$step," "$dir/metrics.jsonl"; then return 0; fi
    for pid in "$@"; do
      if ! kill -0 "$pid" 2>/dev/null || [ "$(ps -o stat= -p "$pid" | cut -c1)" = Z ]; then
        nn_fail "accel run (pid $pid) exited before step $step"
      fi
    done
    sleep 0.1
  done
  nn_fail "step $step not in $dir/metrics.jsonl within $limit s"
}

# nn_losses METRICS: "step loss" per line.
nn_losses() {
  sed -n 's/.*"step":\([0-9]*\),"loss":\([-0-9.eE+]*\),.*/\1 \2/p' "$1"
}

# nn_port N: the drill's N-th TCP port. The namespaces start empty, so any port is free there;
# one derived from the pid only makes a leftover from another drill easy to tell apart.
nn_port() { echo $((20000 + ($$ * 7 + $1) % 20000)); }
