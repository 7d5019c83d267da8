#!/usr/bin/env bash
# Runs on a lent GPU machine, from the repository root. Unpacks whatever bundles of .device/ this
# call carried into /tmp/flinfer (which outlives the call while the machine stays warm), then runs
# each action given:
#   tests [CLASS...]      the CUDA device tests (JUnit), default all of them
#   bench-model ARGS...   flinfer bench-model --backend cuda ARGS
#   bench-engine ARGS...  flinfer bench-engine --backend cuda ARGS
#   torch ARGS...         gpu/hf_llama_bench.py ARGS (PyTorch eager, Hugging Face Llama)
# Actions are separated by "--". Output goes to stdout and, when OUT is set, to $OUT/NAME.log.
set -uo pipefail
cd "$(dirname "$0")/.."
F=/tmp/flinfer
mkdir -p "$F/shared"
if [ -d .device/runtime ]; then
  tar -C "$F" -xJf .device/runtime/jre.tar.xz
  rm -rf "$F/lib" && cp -r .device/runtime/lib "$F/lib"
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
JAVA=("$F/jre/bin/java" --add-modules jdk.incubator.vector -Xmx48g -XX:MaxDirectMemorySize=32g
  -Dflinfer.shared="$F/shared" -cp "$F/lib/*")
log() { if [ -n "${OUT:-}" ]; then tee -a "$OUT/$1.log"; else cat; fi; }

run() {
  local action=$1; shift
  case "$action" in
    tests)
      local sel=()
      if [ $# -eq 0 ]; then set -- CudaBackendTest CudaZooTest; fi
      for c in "$@"; do sel+=(--select-class "io.flinfer.runtime.cuda.$c"); done
      "${JAVA[@]}" org.junit.platform.console.ConsoleLauncher execute --disable-banner \
        --details=tree --disable-ansi-colors "${sel[@]}" 2>&1 | log tests ;;
    bench-model)
      "${JAVA[@]}" io.flinfer.job.cli.BenchModelCommand --backend cuda "$@" 2>&1 | log bench-model ;;
    bench-engine)
      "${JAVA[@]}" io.flinfer.job.cli.BenchEngineCommand --backend cuda "$@" 2>&1 | log bench-engine ;;
    torch)
      PYTHONUNBUFFERED=1 python3 gpu/hf_llama_bench.py "$@" 2>&1 | log torch ;;
    *) echo "unknown action $action" >&2; return 2 ;;
  esac
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv | log device
args=()
for a in "$@" --; do
  if [ "$a" = "--" ]; then
    [ ${#args[@]} -gt 0 ] && run "${args[@]}"
    args=()
  else
    args+=("$a")
  fi
done
