#!/usr/bin/env bash
# One verification run of the CUDA path on a GPU machine, in one call, inside a deadline:
#
#   scripts/gpu-verify.sh OUTDIR          # on the GPU machine (carry .cuda-debs/ there)
#   scripts/gpu-verify.sh OUTDIR --cpu    # rehearses every stage on this CPU machine
#
# Stages, in this order; each is a row of OUTDIR/summary.txt, which is rewritten when a stage starts
# and when it ends, so that a run killed from outside still leaves its verdict and the stage it was
# in. OUTDIR/logs.tar.gz (rewritten after each stage) holds every log. OUTDIR gets these two files
# only; the logs themselves live in VERIFY_WORK.
#   1. preflight (at most 15 s): nvidia-smi; torch's version, CUDA and C++ ABI (python3's torch, else
#      the LibTorch CMake config); nvcc, g++, cmake; where nccl.h, cuBLAS and CCCL headers are; how
#      many std::filesystem and protobuf symbols libtorch exports (nm -D). A missing tool is noted,
#      never fatal.
#   2. build: scripts/build-cuda.sh on all cores (accel and executor_cuda_test, then executor_test);
#      --cpu: the default preset in VERIFY_BUILD (build-verify), ccache when installed.
#   3. tests: ctest -L cuda (executor_cuda_test; it reports skipped without a CUDA device), then the
#      executor's CPU tests (label executor, not e2e), VERIFY_TESTS selecting (ctest -R).
#   4. run: accel run of examples/specs/llama-mini_cuda1_bf16.yaml (--cpu: llama-mini_cpu2_bf16),
#      checkpointing every third of the steps with keep 1 (so pruning runs): loss, tokens/s, memory.
#   5. throughput (bench/gpu/throughput.sh) and memory (bench/gpu/memory_table.sh), as far as the
#      deadline allows: one row per result, a failure is a row and the run goes on. --cpu: the
#      throughput benchmark is CUDA-only (a skipped row); the memory table runs its CPU rehearsal.
#
# Environment (defaults: GPU / --cpu):
#   VERIFY_DEADLINE    seconds for the whole run (480 / 1800); each stage gets what is left
#   VERIFY_STAGES      the stages to run (all: "preflight build tests run throughput memory")
#   VERIFY_WORK        the logs' directory (a new /tmp/gpu-verify.XXXXXX)
#   VERIFY_BUILD       the build directory (build-cuda / build-verify)
#   VERIFY_TESTS       ctest -R over the executor's CPU tests ("" = all / four small ones); "none"
#   VERIFY_TEST_SECONDS  at most this long for those (90 / 900)
#   VERIFY_RUN_STEPS   steps of the accel run (60 / 6)
#   VERIFY_THROUGHPUT  throughput.sh's PRECISIONS ("bf16 amp" / skipped on --cpu); "none"
#   VERIFY_MEMORY      memory_table.sh's LAYOUTS regex ("" = all 17 / two layouts); "none"
#   VERIFY_BENCH_STEPS timed steps of each benchmark run (throughput 10, memory 3)
#   JOBS               build and test parallelism (nproc)
#
# With the device tool (docs/gpu.md): run `scripts/gpu-verify.sh "$OUT"` with carry [".cuda-debs"]
# and a timeout_s above VERIFY_DEADLINE (540 for the default); summary.txt and logs.tar.gz come back.
# Exit status: 0 when the verdict is PASS, 1 otherwise (2: usage).
set -uo pipefail

usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
[[ $# -ge 1 && $1 != -* ]] || usage
out=$1
mode=gpu
case ${2:-} in
  --cpu) mode=cpu ;;
  "") ;;
  *) usage ;;
esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
work=${VERIFY_WORK:-$(mktemp -d /tmp/gpu-verify.XXXXXX)}
mkdir -p "$work/sections"
jobs=${JOBS:-$(nproc)}
if [[ $mode == gpu ]]; then
  deadline=${VERIFY_DEADLINE:-480}
  build=${VERIFY_BUILD:-$root/build-cuda}
  tests=${VERIFY_TESTS-}
  test_seconds=${VERIFY_TEST_SECONDS:-90}
  run_steps=${VERIFY_RUN_STEPS:-60}
  spec=$root/examples/specs/llama-mini_cuda1_bf16.yaml
  throughput=${VERIFY_THROUGHPUT-bf16 amp}
  memory=${VERIFY_MEMORY-}
else
  deadline=${VERIFY_DEADLINE:-1800}
  build=${VERIFY_BUILD:-$root/build-verify}
  tests=${VERIFY_TESTS-^(forward returns finite fp32 logits|future tokens do not change earlier logits|collectives match a single-process reference|counting allocator: peak keeps the maximum until reset)\$}
  test_seconds=${VERIFY_TEST_SECONDS:-900}
  run_steps=${VERIFY_RUN_STEPS:-6}
  spec=$root/examples/specs/llama-mini_cpu2_bf16.yaml
  throughput=none
  memory=${VERIFY_MEMORY-^amp s512 b8\$|^bf16 s1024 b4\$}
fi
stages_wanted=" ${VERIFY_STAGES:-preflight build tests run throughput memory} "
all_stages=(preflight build tests run throughput memory)
start=$SECONDS
started_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if head=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
  tree="commit $head, $(git -C "$root" status --porcelain 2>/dev/null | wc -l) paths changed or untracked"
else
  tree="a copy without .git"
fi
reserve=15  # kept back at the end for the summary and the logs' archive

left() { echo $((deadline - (SECONDS - start))); }
min() { if (($1 < $2)); then echo "$1"; else echo "$2"; fi; }
log() { echo "gpu-verify [$((SECONDS - start))s] $*"; }

declare -A status secs detail began
for s in "${all_stages[@]}"; do status[$s]=pending; secs[$s]=""; detail[$s]=""; done
current=""

# ---- the summary -------------------------------------------------------------------------------

verdict() {
  local s failed=() notrun=() bench_failed=0
  for s in preflight build tests run; do
    case ${status[$s]} in
      failed|timeout|killed) failed+=("$s") ;;
      pending|running) [[ $stages_wanted == *" $s "* ]] && notrun+=("$s") ;;
      skipped) [[ ${detail[$s]} == deadline* ]] && notrun+=("$s") ;;
    esac
  done
  for s in throughput memory; do
    case ${status[$s]} in failed|timeout|killed|partial) bench_failed=1 ;; esac
    [[ ${status[$s]} == skipped && ${detail[$s]} == deadline* ]] && bench_failed=1
  done
  local killed=""
  for s in "${all_stages[@]}"; do [[ ${status[$s]} == killed ]] && killed=$s; done
  if [[ -n $current ]]; then
    echo "INCOMPLETE: stage '$current' started at $((${began[$current]} - start)) s and running (if this is the final summary, the run was killed in it)"
  elif [[ -n $killed ]]; then
    echo "INCOMPLETE: stopped from outside in stage '$killed'"
  elif ((${#failed[@]})); then
    echo "FAIL: ${failed[*]}"
  elif ((${#notrun[@]})); then
    echo "INCOMPLETE: not run: ${notrun[*]}"
  elif ((bench_failed)); then
    echo "PASS; benchmarks with failed or missing rows"
  else
    echo "PASS"
  fi
}

write_summary() {
  local s tmp=$out/summary.txt.tmp
  {
    echo "accel gpu-verify: $mode mode, started $started_at on $(hostname 2>/dev/null || echo '?'), deadline ${deadline} s"
    echo "tree: $tree"
    [[ $mode == cpu ]] && echo "CPU rehearsal: the stages' logic on the CPU build; no GPU numbers"
    echo "verdict: $(verdict)"
    echo "elapsed: $((SECONDS - start)) s"
    echo
    printf '%-11s %-9s %5s  %s\n' stage status secs detail
    for s in "${all_stages[@]}"; do
      printf '%-11s %-9s %5s  %s\n' "$s" "${status[$s]}" "${secs[$s]}" "${detail[$s]}"
    done
    for s in "${all_stages[@]}"; do
      [[ -s $work/sections/$s ]] || continue
      echo
      echo "== $s"
      cat "$work/sections/$s"
    done
    echo
    echo "logs: logs.tar.gz (from $work)"
  } >"$tmp" && mv -f "$tmp" "$out/summary.txt"
}

pack_logs() {
  cp -f "$out/summary.txt" "$work/summary.txt" 2>/dev/null
  # Logs, tables and metrics; no checkpoints (the device tool returns files up to 16 MiB).
  tar -czf "$out/logs.tar.gz.tmp" -C "$work" --exclude='*.safetensors' --exclude='ckpt' \
    --exclude='*.pt' --exclude='*.bin' . 2>/dev/null
  if (($(stat -c %s "$out/logs.tar.gz.tmp" 2>/dev/null || echo 0) > 15 * 1024 * 1024)); then
    (cd "$work" && find . -type f \( -name '*.log' -o -name '*.txt' -o -name '*.jsonl' -o -name '*.json' \) -size -2M -print0 |
      tar -czf "$out/logs.tar.gz.tmp" --null -T -)
  fi
  mv -f "$out/logs.tar.gz.tmp" "$out/logs.tar.gz"
}

stage_begin() {  # name
  current=$1
  began[$1]=$SECONDS
  status[$1]=running
  log "stage $1 ($(left) s left)"
  write_summary
}

stage_end() {  # name status detail
  status[$1]=$2
  secs[$1]=$((SECONDS - ${began[$1]}))
  detail[$1]=$3
  current=""
  log "stage $1: $2 ${3:+- $3}"
  write_summary
  pack_logs
}

stage_skip() {  # name reason
  status[$1]=skipped
  detail[$1]=$2
  write_summary
}

section() { cat >>"$work/sections/$1"; }  # stdin: lines of the stage's detail section

wanted() { [[ $stages_wanted == *" $1 "* ]]; }

on_signal() {
  trap - TERM INT
  # timeout passes the signal on to its command's process group, then waits for it.
  [[ -n $child ]] && kill -TERM "$child" 2>/dev/null && wait "$child"
  if [[ -n $current ]]; then
    status[$current]=killed
    secs[$current]=$((SECONDS - ${began[$current]}))
    detail[$current]="$1 received: the run was stopped from outside"
    current=""
  fi
  write_summary
  pack_logs
  exit 1
}
trap 'on_signal SIGTERM' TERM
trap 'on_signal SIGINT' INT

# limited SECONDS LOG CMD...: runs CMD (its own process group, killed at the limit) with its output
# in LOG; returns CMD's status, 124 when the limit stopped it.
# It runs in the background, waited for, so that a signal to this script is handled at once.
child=""
limited() {
  local seconds=$1 logfile=$2 rc
  shift 2
  if ((seconds <= 0)); then echo "no time left" >>"$logfile"; return 124; fi
  timeout --kill-after=10 "$seconds" "$@" >>"$logfile" 2>&1 &
  child=$!
  wait "$child"
  rc=$?
  child=""
  return $rc
}

# ---- 1. preflight --------------------------------------------------------------------------------

torch_lib=""
preflight() {
  local s=preflight p=$work/preflight.log missing=() t0=$SECONDS
  # probe CAP CMD...: CMD for at most CAP s, and never past the stage's 15 s (at least 1 s).
  probe() {
    local t=$((15 - (SECONDS - t0))) cap=$1
    shift
    ((t > cap)) && t=$cap
    ((t < 1)) && t=1
    timeout "$t" "$@" 2>>"$p"
  }
  stage_begin $s
  {
    local gpu
    if command -v nvidia-smi >/dev/null; then
      gpu=$(probe 5 nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader | head -4)
      echo "gpu: ${gpu:-nvidia-smi found no GPU}"
      [[ -n $gpu ]] || missing+=("GPU")
    else
      echo "gpu: no nvidia-smi"; missing+=("nvidia-smi")
    fi
    # torch: python3's (the GPU machine's wheel), else the LibTorch CMake config (Debian's).
    local py torch_line=""
    py=$(probe 10 python3 -c 'import os, torch
print(torch.__version__, torch.version.cuda, int(torch._C._GLIBCXX_USE_CXX11_ABI),
      torch.cuda.is_available() if torch.version.cuda else False, os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
    if [[ -n $py ]]; then
      read -r tv tc tabi tavail torch_lib <<<"$py"
      torch_line="torch $tv (python3), CUDA $tc, C++11 ABI $tabi, cuda available $tavail"
    else
      local config=""
      config=$(sed -n 's/^Torch_DIR:PATH=//p' "$build/CMakeCache.txt" 2>/dev/null)
      for c in "$config" /usr/lib/*/cmake/Torch /usr/local/lib/cmake/Torch /usr/share/cmake/Torch; do
        [[ -n $c && -f $c/TorchConfigVersion.cmake ]] && { config=$c; break; }
      done
      if [[ -f $config/TorchConfigVersion.cmake ]]; then
        local tv abi cuda
        tv=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")/\1/p' "$config/TorchConfigVersion.cmake")
        abi=$(grep -ho '_GLIBCXX_USE_CXX11_ABI=[01]' "$config/TorchConfig.cmake" | head -1 | cut -d= -f2)
        cuda=$(grep -ho 'set(CAFFE2_USE_CUDA [A-Z]*)' "$config"/../Caffe2/Caffe2Config.cmake 2>/dev/null | head -1 | sed 's/.* \(.*\))/\1/')
        torch_line="LibTorch $tv (CMake config $config; python3 has no torch), CAFFE2_USE_CUDA ${cuda:-?}, C++11 ABI ${abi:-?}"
        torch_lib=$(cd "$config/../.." && pwd)
      else
        torch_line="no torch: neither python3 nor a LibTorch CMake config"; missing+=("torch")
      fi
    fi
    echo "torch: $torch_line"
    [[ $mode == gpu && ( -z $py || ${tc:-None} == None ) ]] && missing+=("python3's CUDA torch")
    local nvcc
    nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
    if [[ -n $nvcc ]]; then
      echo "nvcc: $nvcc, $(probe 3 "$nvcc" --version | sed -n 's/.*\(release .*\)/\1/p')"
    else
      echo "nvcc: not found"; missing+=("nvcc")
    fi
    echo "g++: $(probe 2 g++ -dumpfullversion || echo 'not found')"
    echo "cmake: $(probe 2 cmake --version | head -1 || echo 'not found')"
    echo "ninja: $(probe 2 ninja --version || echo 'not found (make)')"
    # Headers a CUDA build includes: the wheels' beside torch, then the toolkit's.
    local dirs=() site h found
    [[ -n $torch_lib ]] && site=$(dirname "$(dirname "$torch_lib")") && dirs+=("$site"/nvidia/*/include)
    [[ -n $nvcc ]] && dirs+=("$(dirname "$(dirname "$(readlink -f "$nvcc")")")/include")
    for h in nccl.h cublas_v2.h cublasLt.h cccl/cuda/std/version cuda/std/version; do
      found=""
      for d in "${dirs[@]}"; do [[ -e $d/$h ]] && found+="${found:+ }$d"; done
      echo "$h: ${found:-not found}"
    done
    echo "carried .cuda-debs: $(find "$root/.cuda-debs" -maxdepth 1 -name '*.deb' 2>/dev/null | wc -l) packages"
    # The symbols that made a worker crash in recursive directory removal: libtorch's own exports.
    local name lib n_fs n_pb
    for name in libtorch_cpu libtorch_cuda libtorch libc10; do
      lib=$(compgen -G "$torch_lib/$name.so*" | head -1)
      [[ -n $lib ]] || continue
      if ((SECONDS - t0 >= 14)); then echo "exports of $lib: not counted (15 s spent)"; continue; fi
      probe 5 nm -DC --defined-only "$lib" >"$work/nm.txt"
      n_fs=$(grep -c 'std::filesystem::' "$work/nm.txt")
      n_pb=$(grep -c 'google::protobuf::' "$work/nm.txt")
      rm -f "$work/nm.txt"
      echo "exports of $lib: $n_fs std::filesystem symbols, $n_pb protobuf symbols"
    done
  } >"$work/sections/$s" 2>>"$p"
  local d=""
  if ((${#missing[@]})); then
    d=$(printf '%s, ' "${missing[@]}")
    d="missing: ${d%, }"
  fi
  if [[ $mode == cpu ]]; then
    d="CPU rehearsal${d:+, $d (tolerated)}"
    stage_end $s ok "$d"
  elif ((${#missing[@]})); then
    stage_end $s warn "$d"
  else
    stage_end $s ok "$(head -1 "$work/sections/$s" | cut -c6-80)"
  fi
}

# ---- 2. build ------------------------------------------------------------------------------------

built_executor_test=0
build_ok=0
build_stage() {
  local s=build b=$work/build.log rc
  stage_begin $s
  if [[ $mode == gpu ]]; then
    ACCEL_CUDA_BUILD=$build JOBS=$jobs limited $(($(left) - reserve)) "$b" \
      "$root/scripts/build-cuda.sh" accel executor_cuda_test
    rc=$?
  else
    local launcher=()
    command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=1
    local t0=$SECONDS
    limited $(($(left) - reserve)) "$b" cmake --preset default -B "$build" "${launcher[@]}" &&
      limited $(($(left) - reserve)) "$b" cmake --build "$build" -j "$jobs" --target accel executor_cuda_test
    rc=$?
    echo "build-verify: built accel executor_cuda_test in $((SECONDS - t0)) s" >>"$b"
  fi
  if ((rc != 0)); then
    grep -m5 -E 'error|build-cuda:' "$b" | cut -c1-200 | section $s
    # The first compiler error, else build-cuda's last word, else the log's last line.
    local why
    why=$(grep -m1 'error' "$b" || grep '^build-cuda: ' "$b" | tail -1 || tail -1 "$b")
    stage_end $s "$( ((rc == 124)) && echo timeout || echo failed)" \
      "accel/executor_cuda_test: exit $rc: $(cut -c1-150 <<<"$why")"
    return
  fi
  build_ok=1
  grep -E '^build-(cuda|verify):' "$b" | section $s
  # executor_test: the LibTorch 2.x build of the CPU tests; only with time to spare for the rest.
  local budget
  budget=$(min $(($(left) - 200)) 240)
  if [[ $tests == none ]] || ! wanted tests; then
    stage_end $s ok "accel, executor_cuda_test (executor_test not needed)"
  elif ((budget < 30)); then
    stage_end $s partial "accel, executor_cuda_test; executor_test not built ($(left) s left)"
  else
    if [[ $mode == gpu ]]; then
      ACCEL_CUDA_BUILD=$build JOBS=$jobs limited "$budget" "$work/build-executor-test.log" \
        "$root/scripts/build-cuda.sh" executor_test
    else
      limited "$budget" "$work/build-executor-test.log" cmake --build "$build" -j "$jobs" --target executor_test
    fi
    rc=$?
    if ((rc == 0)); then
      built_executor_test=1
      stage_end $s ok "accel, executor_cuda_test, executor_test"
    else
      grep -m5 'error' "$work/build-executor-test.log" | cut -c1-200 | section $s
      stage_end $s partial "accel, executor_cuda_test; executor_test: $( ((rc == 124)) && echo "stopped after $budget s" || echo "exit $rc")"
    fi
  fi
}

# ---- 3. tests ------------------------------------------------------------------------------------

# counts LOG: "P passed, F failed, S skipped" from ctest's progress lines; the failed ones named.
ctest_counts() {
  local passed failed skipped
  passed=$(grep -cE 'Test +#[0-9]+: .* +Passed +[0-9.]+ sec' "$1")
  skipped=$(grep -cE 'Test +#[0-9]+: .*\*\*\*Skipped' "$1")
  failed=$(grep -E 'Test +#[0-9]+: ' "$1" | grep -cvE ' Passed +[0-9.]+ sec|\*\*\*Skipped')
  echo "$passed passed, $failed failed, $skipped skipped"
}
ctest_failed_names() {
  grep -E 'Test +#[0-9]+: ' "$1" | grep -vE ' Passed +[0-9.]+ sec|\*\*\*Skipped' |
    sed -E 's/.*Test +#[0-9]+: (.*[^ .]) *\.+ *\**(.*)$/  \1: \2/' | head -20
}

tests_stage() {
  local s=tests rc_cuda rc_exec=0 c e bad=0
  if (($(left) - reserve - 60 < 30)); then stage_skip $s "deadline: $(left) s left"; return; fi
  stage_begin $s
  local log1=$work/tests-cuda.log log2=$work/tests-executor.log
  limited "$(min $(($(left) - reserve - 60)) 300)" "$log1" \
    ctest --test-dir "$build" -L cuda --output-on-failure --timeout 280
  rc_cuda=$?
  c=$(ctest_counts "$log1")
  { echo "cuda (ctest -L cuda): $c"; ctest_failed_names "$log1"; } | section $s
  [[ $c == "0 passed, 0 failed, 0 skipped" || $rc_cuda != 0 ]] && bad=1
  if [[ $mode == gpu ]] && grep -qE '\*\*\*Skipped' "$log1"; then
    echo "  executor_cuda_test skipped: $(grep -m1 -iE 'no CUDA|skip' "$log1" | cut -c1-150)" | section $s
    bad=1
  fi
  e="not run"
  if [[ $tests == none ]]; then
    e="not selected (VERIFY_TESTS=none)"
  elif ((built_executor_test)); then
    local budget
    budget=$(min $(($(left) - reserve - 60)) "$test_seconds")
    local select=()
    [[ -n $tests ]] && select=(-R "$tests")
    limited "$budget" "$log2" ctest --test-dir "$build" -L executor -LE 'cuda|e2e' "${select[@]}" \
      -j "$jobs" --timeout 120 --output-on-failure
    rc_exec=$?
    e=$(ctest_counts "$log2")
    ((rc_exec == 124)) && e+=" (stopped after $budget s)"
    local selection="ctest -L executor -LE 'cuda|e2e'"
    [[ -n $tests ]] && selection+=" -R '$tests'"
    { echo "executor ($selection): $e"; ctest_failed_names "$log2"; } | section $s
    [[ $e == "0 passed, 0 failed, 0 skipped" ]] && bad=1
    ((rc_exec != 0 && rc_exec != 124)) && bad=1
  else
    e="executor_test not built"
  fi
  local st=ok
  ((bad)) && st=failed
  ((rc_cuda == 124)) && st=timeout
  [[ $st == ok && $mode == gpu ]] && ((rc_exec == 124)) && st=partial
  stage_end $s $st "cuda: $c; executor: $e"
}

# ---- 4. run --------------------------------------------------------------------------------------

run_stage() {
  local s=run r=$work/run.log dir=$work/run fortunes rc
  if (($(left) - reserve < 30)); then stage_skip $s "deadline: $(left) s left"; return; fi
  stage_begin $s
  fortunes=$build/deps/usr/share/games/fortunes
  [[ -e $fortunes ]] || fortunes=/usr/share/games/fortunes
  rm -rf "$dir"
  local every=$(( run_steps / 3 > 0 ? run_steps / 3 : 1 ))
  log "accel run $(basename "$spec"), $run_steps steps" >>"$r"
  limited "$(min $(($(left) - reserve)) 300)" "$r" "$build/cli/accel" run "$spec" \
    --set data.train.path="$fortunes" --set training.steps="$run_steps" --set training.log_every_steps=1 \
    --set checkpoint.dir="$dir/ckpt" --set checkpoint.every_steps="$every" --set checkpoint.keep=1 \
    --run-dir "$dir"
  rc=$?
  local parsed
  parsed=$(python3 - "$dir" "$run_steps" 2>&1 <<'PY'
import json, math, os, sys
run, want = sys.argv[1], int(sys.argv[2])
steps = [json.loads(l) for l in open(os.path.join(run, "metrics.jsonl")) if l.strip()]
steps = [s for s in steps if "loss" in s]
if not steps:
    print("FAIL no step in metrics.jsonl"); sys.exit()
first, last = steps[0]["loss"], steps[-1]["loss"]
timed = steps[min(5, len(steps) - 1):] if len(steps) > 1 else steps
tps = sum(s["tokens_per_second"] for s in timed) / len(timed)
G = 2**30
mem = ""
try:
    summary = json.load(open(os.path.join(run, "summary.json")))
    rank = summary["memory"]["ranks"][0]
    est = rank.get("estimate_tensor_bytes") or 0
    alloc = rank.get("peak_tensor_bytes") or 0
    mem = f", peak allocated {alloc / G:.3f} GiB"
    if rank.get("peak_reserved_bytes") is not None:
        mem += f", reserved {rank['peak_reserved_bytes'] / G:.3f} GiB"
    if est:
        mem += f", estimate {est / G:.3f} GiB (allocated/estimate {alloc / est:.3f})"
except (OSError, KeyError, IndexError, TypeError, ValueError) as e:
    mem = f", no memory report ({type(e).__name__})"
ok = math.isfinite(last) and last < first and len(steps) >= want
print("OK" if ok else "FAIL",
      f"loss {first:.3f} -> {last:.3f} over {len(steps)} of {want} steps, "
      f"{tps:,.0f} tokens/s (mean of steps {timed[0]['step']}-{timed[-1]['step']}){mem}")
PY
)
  local ckpts
  ckpts=$(find "$dir/ckpt" -maxdepth 1 -name 'step_*' 2>/dev/null | wc -l)
  { echo "accel run $(basename "$spec") --set training.steps=$run_steps: exit $rc"
    echo "${parsed#* }"
    echo "checkpoints left (keep 1, every $every steps, so pruned as it went): $ckpts"
    grep -iE 'error|fatal|signal' "$r" | head -5; } | section $s
  if ((rc == 0)) && [[ $parsed == OK* ]]; then
    stage_end $s ok "${parsed#OK }"
  else
    stage_end $s "$( ((rc == 124)) && echo timeout || echo failed)" "exit $rc: ${parsed#* }"
  fi
}

# ---- 5. benchmarks -------------------------------------------------------------------------------

throughput_stage() {
  local s=throughput bench=$work/bench rc
  if [[ $mode == cpu ]]; then
    echo "bench/gpu/throughput.sh needs CUDA (TinyLlama-1.1B at seq 2048 against PyTorch eager): not run on --cpu" | section $s
    stage_skip $s "CUDA only"
    return
  fi
  [[ $throughput == none ]] && { stage_skip $s "VERIFY_THROUGHPUT=none"; return; }
  stage_begin $s
  mkdir -p "$bench"
  local budget=$(($(left) - reserve))
  wanted memory && [[ $memory != none ]] && budget=$(( budget / 2 ))
  PRECISIONS=$throughput STEPS=${VERIFY_BENCH_STEPS:-10} ACCEL_CUDA_BUILD=$build \
    limited "$budget" "$work/throughput.log" "$root/bench/gpu/throughput.sh" "$bench"
  rc=$?
  bench_rows $s "$bench/throughput.jsonl" "$rc" "$budget" \
    "$("$root/bench/gpu/throughput.sh" --table "$bench/throughput.jsonl" 2>&1)" \
    "$(for p in $throughput; do printf '%s\n' "$p accel" "$p pytorch-eager" "$p hf-transformers"; done)"
}

memory_stage() {
  local s=memory bench=$work/bench rc
  [[ $memory == none ]] && { stage_skip $s "VERIFY_MEMORY=none"; return; }
  stage_begin $s
  mkdir -p "$bench"
  local budget=$(($(left) - reserve))
  local device=cuda
  [[ $mode == cpu ]] && device=cpu
  LAYOUTS=$memory DEVICE=$device STEPS=${VERIFY_BENCH_STEPS:-3} ACCEL_CUDA_BUILD=$build \
    limited "$budget" "$work/memory.log" "$root/bench/gpu/memory_table.sh" "$bench"
  rc=$?
  bench_rows $s "$bench/memory/memory.jsonl" "$rc" "$budget" \
    "$("$root/bench/gpu/memory_table.sh" --table "$bench/memory/memory.jsonl" 2>&1)" \
    "$(cat "$bench/memory/layouts.txt" 2>/dev/null)"
}

# bench_rows STAGE JSONL RC BUDGET TABLE EXPECTED: the stage's rows and status. EXPECTED: one line
# per row the benchmark would write ("layout" or "precision impl"); those without a row are listed
# as not reached.
bench_rows() {
  local s=$1 jsonl=$2 rc=$3 budget=$4 table=$5 expected=$6
  local ok failed total missing
  ok=$(grep -c '"estimate"\|"tokens_per_second"' "$jsonl" 2>/dev/null)
  failed=$(grep -c '"error"' "$jsonl" 2>/dev/null)
  ok=${ok:-0} failed=${failed:-0}
  total=$(grep -c . <<<"$expected")
  missing=$(python3 - "$jsonl" "$expected" 2>/dev/null <<'PY'
import json, sys
done = set()
try:
    for line in open(sys.argv[1]):
        if line.strip():
            r = json.loads(line)
            done.add(r["layout"] if "layout" in r else f"{r['precision']} {r['impl']}")
except OSError:
    pass
for want in sys.argv[2].splitlines():
    if want and want not in done:
        print(want)
PY
)
  {
    echo "$table"
    [[ -n $missing ]] && echo "not reached: $(paste -sd, <<<"$missing" | sed 's/,/, /g')"
    ((rc == 124)) && echo "stopped by the deadline after $budget s"
    ((rc != 0 && rc != 124)) && echo "script exit $rc: $(tail -1 "$work/$s.log" | cut -c1-200)"
  } | section "$s"
  local st=ok
  ((failed > 0 || (rc != 0 && rc != 124))) && st=partial
  [[ -n $missing ]] && st=partial
  ((ok == 0)) && st=failed
  stage_end "$s" $st "$ok of $total rows, $failed failed$([[ -n $missing ]] && echo ", $(grep -c . <<<"$missing") not reached")"
}

# ---- the run -------------------------------------------------------------------------------------

log "$mode mode, deadline $deadline s, logs in $work, summary in $out/summary.txt"
write_summary
if wanted preflight; then preflight; else stage_skip preflight "not in VERIFY_STAGES"; fi
if wanted build; then
  build_stage
else
  stage_skip build "not in VERIFY_STAGES: using $build as it is"
  build_ok=1
  [[ -x $build/tests/executor/executor_test ]] && built_executor_test=1
fi
# The carried Debian libraries (scripts/build-cuda.sh) for the tests, the run and the benchmarks.
if [[ -f $build/env.sh ]]; then
  # shellcheck source=/dev/null
  source "$build/env.sh"
fi
for stage in tests run throughput memory; do
  wanted $stage || { stage_skip $stage "not in VERIFY_STAGES"; continue; }
  if ((!build_ok)); then stage_skip $stage "no build"; continue; fi
  if (($(left) < reserve + 30)); then stage_skip $stage "deadline: $(left) s left"; continue; fi
  case $stage in
    tests) tests_stage ;;
    run) run_stage ;;
    throughput) throughput_stage ;;
    memory) memory_stage ;;
  esac
done
write_summary
pack_logs
log "verdict: $(verdict)"
cat "$out/summary.txt"
[[ $(verdict) == PASS* ]]
