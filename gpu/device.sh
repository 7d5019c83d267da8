#!/usr/bin/env bash
# Runs on a lent GPU machine, from the repository root. Unpacks whatever bundles of .device/ this
# call carried into /tmp/flinfer (which outlives the call while the machine stays warm), then runs
# each action given:
#   tests [CLASS[#METHOD]...]  the CUDA device tests (JUnit), default all of them
#   bench-model ARGS...   flinfer bench-model --backend cuda ARGS
#   profile ARGS...       bench-model ARGS with device time per kernel role (graphs off)
#   bench-engine ARGS...  flinfer bench-engine --backend cuda ARGS
#   bench-job ARGS...     flinfer bench-job --backend cuda ARGS (needs the job bundle, below)
#   torch ARGS...         gpu/hf_llama_bench.py ARGS (PyTorch eager, Hugging Face Llama)
# Actions are separated by "--"; an action written NAME@S is stopped after S seconds, and its
# first arguments that start with -D are the JVM's system properties. When a `tests` action
# fails, the actions after it are skipped (KEEP_GOING=1 runs them anyway), so a broken kernel
# costs no benchmark time. Output goes
# to stdout and, when OUT is set, to $OUT/NAME.log. With FLINFER_CP_FIRST set (a baseline's
# jar, see gpu/pack-baseline.sh), the actions run that build of the runtime instead. The kernels are packaged as built by the
# toolkit here (CUDA 13); where the device's driver is older and the device has nvcc, they are
# built there from the same source and loaded instead (flinfer.cuda.image).
set -uo pipefail
cd "$(dirname "$0")/.."
F=/tmp/flinfer
mkdir -p "$F/shared"
if [ -d .device/runtime ]; then
  tar -C "$F" -xJf .device/runtime/jre.tar.xz
  rm -rf "$F/lib" && cp -r .device/runtime/lib "$F/lib"
fi
if [ -f .device/job/job.tar.xz ]; then
  rm -rf "$F/job" && mkdir -p "$F/job" && tar -C "$F/job" -xJf .device/job/job.tar.xz
fi
for b in .device/zoo-*; do
  [ -d "$b" ] || continue
  cp -r "$b"/. "$F/shared/"
  for x in "$F"/shared/models/zoo/*.xz; do [ -f "$x" ] && xz -d -f "$x"; done
done
if [ ! -x "$F/jre/bin/java" ]; then
  echo "no Java runtime in $F: carry .device/runtime (gpu/pack.sh builds it)" >&2
  exit 3
fi
JVM=("$F/jre/bin/java" --add-modules jdk.incubator.vector -Xmx48g -XX:MaxDirectMemorySize=32g
  -Dflinfer.shared="$F/shared")
log() { if [ -n "${OUT:-}" ]; then tee -a "$OUT/$1.log"; else cat; fi; }

driver_cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9]*\)\..*/\1/p' | head -1)
if [ -n "$driver_cuda" ] && [ "$driver_cuda" -lt 13 ] && command -v nvcc >/dev/null; then
  if [ ! -f "$F/kernels.fatbin" ] || [ gpu-runtime/src/main/cuda/flinfer_kernels.cu -nt "$F/kernels.fatbin" ]; then
    echo "driver CUDA $driver_cuda: building the kernels with $(nvcc --version | tail -1)" | log device
    nvcc -fatbin -O3 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
      -o "$F/kernels.fatbin" gpu-runtime/src/main/cuda/flinfer_kernels.cu 2>&1 | log device
  fi
  JVM+=(-Dflinfer.cuda.image="$F/kernels.fatbin")
fi
# FLINFER_CP_FIRST: classpath entries ahead of the runtime's jars, e.g. a baseline's gpu-runtime jar
# (gpu/pack-baseline.sh) for an A/B in one lease; its classes and kernel image win.
JAVA=("${JVM[@]}" -cp "${FLINFER_CP_FIRST:+$FLINFER_CP_FIRST:}$F/lib/*")

run() {
  local action=${1%@*} limit=
  [[ $1 == *@* ]] && limit=${1#*@}
  shift
  local T=(); [ -n "$limit" ] && T=(timeout -k 5 "$limit")
  local D=(); while [[ ${1:-} == -D* ]]; do D+=("$1"); shift; done
  echo "== $action ${D[*]} $* (limit ${limit:-none})" | log "$action"
  local started=$SECONDS
  run_action "$action" "$@"
  echo "== $action took $((SECONDS - started)) s" | log "$action"
}

run_action() {
  local action=$1; shift
  case "$action" in
    env)
      { nvidia-smi; nvcc --version 2>&1 | tail -2; "$F/jre/bin/java" -version 2>&1
        python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)" 2>&1
        python3 -c "import transformers; print('transformers', transformers.__version__)" 2>&1
        nproc; free -g | head -2; } | log env ;;
    tests)
      local sel=()
      if [ $# -eq 0 ]; then set -- CudaBackendTest CudaDrawTest CudaFp8KvTest CudaZooTest CudaGemmaTest; fi
      for c in "$@"; do
        case "$c" in
          *'#'*) sel+=(--select-method "io.flinfer.runtime.cuda.$c") ;;
          *) sel+=(--select-class "io.flinfer.runtime.cuda.$c") ;;
        esac
      done
      "${T[@]}" "${JAVA[@]}" "${D[@]}" org.junit.platform.console.ConsoleLauncher execute --disable-banner \
        --details=tree --disable-ansi-colors "${sel[@]}" 2>&1 | log tests
      [ "${PIPESTATUS[0]}" -eq 0 ] || failed=1 ;;
    bench-model)
      "${T[@]}" "${JAVA[@]}" "${D[@]}" io.flinfer.job.cli.BenchModelCommand --backend cuda "$@" 2>&1 | log bench-model ;;
    profile)
      # bench-model with each kernel timed by events, summed per role when each runner closes.
      "${T[@]}" "${JAVA[@]}" -Dflinfer.cuda.profile=true io.flinfer.job.cli.BenchModelCommand \
        --backend cuda "$@" 2>&1 | log profile ;;
    bench-engine)
      "${T[@]}" "${JAVA[@]}" "${D[@]}" io.flinfer.job.cli.BenchEngineCommand --backend cuda "$@" 2>&1 | log bench-engine ;;
    bench-job)
      # The whole command line's classes (Kafka and Flink with them) in place of the runtime's jars.
      [ -d "$F/job" ] || { echo "no job bundle in $F: carry .device/job" >&2; return 3; }
      "${T[@]}" "${JVM[@]}" --add-opens=java.base/java.util=ALL-UNNAMED "${D[@]}" -cp "$F/job" \
        io.flinfer.job.cli.FlinferCommand bench-job --backend cuda "$@" 2>&1 | log bench-job ;;
    torch)
      PYTHONUNBUFFERED=1 "${T[@]}" python3 gpu/hf_llama_bench.py "$@" 2>&1 | log torch ;;
    *) echo "unknown action $action" >&2; return 2 ;;
  esac
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv | log device
args=()
failed=0
for a in "$@" --; do
  if [ "$a" = "--" ]; then
    if [ ${#args[@]} -gt 0 ]; then
      if [ "$failed" = 1 ] && [ "${KEEP_GOING:-0}" != 1 ]; then
        echo "== skipped after failed tests: ${args[*]}" | log device
      else
        run "${args[@]}"
      fi
    fi
    args=()
  else
    args+=("$a")
  fi
done
