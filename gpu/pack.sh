#!/usr/bin/env bash
# Packs what the checks on a lent GPU machine need into .device/ (ignored by git), in bundles
# that each fit one call's 64 MiB: `runtime` (a jlink'd Java runtime with the modules' jars and
# their few Flink-free dependencies) and the shared models the device tests read (zoo-a..zoo-d).
# Run from the repository root after `mvn -B install -DskipTests`.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${FLINFER_SHARED:-../shared}
V=0.1.0-SNAPSHOT
M2=${M2_REPO:-$HOME/.m2/repository}
# The bundles built here; a baseline (gpu/pack-baseline.sh) stays.
rm -rf .device/runtime .device/zoo-a .device/zoo-b .device/zoo-c .device/zoo-d .device/job
mkdir -p .device/runtime/lib .device/zoo-a .device/zoo-b .device/zoo-c .device/zoo-d .device/job

jre=$(mktemp -d)
# The modules of the device tests and of bench-job's in-process broker and MiniCluster (SASL and
# JNDI classes among them).
jlink --add-modules java.base,java.desktop,jdk.incubator.vector,java.management,jdk.management,jdk.unsupported,java.logging,java.xml,java.sql,java.naming,java.security.sasl,java.security.jgss,java.rmi,java.scripting,java.compiler,jdk.crypto.ec,java.net.http,jdk.zipfs,jdk.management.agent \
  --strip-debug --no-man-pages --no-header-files --compress=0 --output "$jre/jre" 2>/dev/null
# Uncompressed modules, so that xz sees through them.
tar -C "$jre" -cf - jre | xz -T0 -9 > .device/runtime/jre.tar.xz
rm -rf "$jre"

lib=.device/runtime/lib
cp memcache/target/flinfer-memcache-$V.jar gpu-runtime/target/flinfer-gpu-runtime-$V.jar \
  gpu-runtime/target/flinfer-gpu-runtime-$V-tests.jar operators/target/flinfer-operators-$V.jar \
  job/target/flinfer-job-$V.jar "$lib"/
mvn -B -q dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:1.13.4 >/dev/null
for jar in org/junit/platform/junit-platform-console-standalone/1.13.4/junit-platform-console-standalone-1.13.4.jar \
  info/picocli/picocli/4.7.6/picocli-4.7.6.jar; do
  cp "$M2/$jar" "$lib"/
done
# The runtime's own dependencies (Jinjava's for chat templates among them), less what the console
# launcher bundles (JUnit), what the device tests do not use (jqwik, byte-buddy), and JCuda's
# natives, slimmed below.
cp_file=$(mktemp)
mvn -B -q dependency:build-classpath -pl gpu-runtime -Dmdep.includeScope=test -Dmdep.outputFile="$cp_file" >/dev/null
tr ':' '\n' < "$cp_file" | grep -v -e /org/junit/ -e /net/jqwik/ -e /org/opentest4j/ -e /org/apiguardian/ \
  -e /net/bytebuddy/ -e jcuda-natives -e /io/flinfer/ | while read -r jar; do cp "$jar" "$lib"/; done
rm -f "$cp_file"
# JCuda's natives less the 24 MB PTX compiler it does not use here.
natives=$(mktemp -d)
(cd "$natives" && unzip -q "$M2/org/jcuda/jcuda-natives/12.6.0/jcuda-natives-12.6.0-linux-x86_64.jar" \
  && rm lib/libJNvPTXCompiler-* lib/libJNvrtc-* lib/libJCudaRuntime-* \
  && zip -q -r jcuda-natives-12.6.0-linux-x86_64.jar META-INF lib)
mv "$natives/jcuda-natives-12.6.0-linux-x86_64.jar" "$lib"/
rm -rf "$natives"

# zoo-a: stories260K (the backend tests) with qwen3-tiny (q/k norms); zoo-b: qwen2-tiny (biases,
# and the 32K-position test); zoo-c: phi3-tiny and llama-q-Q8_0; zoo-d: llama3-tiny. The runtime
# with zoo-a and a baseline jar fit one call; while the machine is still warm a call may carry
# bundles alone (zoo-b with zoo-d, or zoo-c).
mkdir -p .device/zoo-a/models/stories260K .device/zoo-a/golden
cp "$SHARED"/models/stories260K/{stories260K.bin,tok512.bin} .device/zoo-a/models/stories260K/
cp "$SHARED"/golden/stories260K-greedy.txt .device/zoo-a/golden/
bundle() {
  local dir=.device/$1; shift
  mkdir -p "$dir/models/zoo" "$dir/golden/zoo"
  for m in "$@"; do
    xz -T0 -c "$SHARED/models/zoo/$m.gguf" > "$dir/models/zoo/$m.gguf.xz"
    cp "$SHARED/golden/zoo/$m.prompts.txt" "$dir/golden/zoo/"
  done
}
bundle zoo-a qwen3-tiny
bundle zoo-b qwen2-tiny
bundle zoo-c phi3-tiny llama-q-Q8_0
bundle zoo-d llama3-tiny
# job: the command-line jar unpacked for bench-job, less what a Linux x86-64 run never loads (the
# web UI's assets, other platforms' natives, ICU, JCuda's PTX compiler), in one bundle that a call
# carries alone while the runtime is still unpacked on the warm machine.
job=$(mktemp -d)
root=$(pwd)
(cd "$job" && unzip -q "$root/job/target/flinfer.jar" \
  && rm -rf web com/ibm aix win darwin* freebsd* linux/aarch64 linux/ppc64le linux/s390x linux/arm* \
    lib/libJNvPTXCompiler-* lib/libJNvrtc-* lib/libJCudaRuntime-*)
tar -C "$job" -cf - . | xz -T0 -9 > .device/job/job.tar.xz
rm -rf "$job"
du -sh .device/*
