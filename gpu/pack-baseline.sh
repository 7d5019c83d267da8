#!/usr/bin/env bash
# Builds the gpu-runtime jar of another commit (default: HEAD) into .device/baseline/, so that one
# lease can time that build beside the working tree's: carry .device/baseline with the runtime and
# run gpu/device.sh with FLINFER_CP_FIRST=.device/baseline/flinfer-gpu-runtime-0.1.0-SNAPSHOT.jar.
# The baseline must keep the working tree's public API (the other jars are the working tree's).
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:-HEAD}
tree=$(mktemp -d)
git worktree add --detach -q "$tree" "$commit"
trap 'git worktree remove --force "$tree"' EXIT
(cd "$tree" && mvn -B -q -o -pl gpu-runtime -am package -DskipTests -Dspotless.check.skip=true >/dev/null)
mkdir -p .device/baseline
cp "$tree"/gpu-runtime/target/flinfer-gpu-runtime-0.1.0-SNAPSHOT.jar .device/baseline/
git -C "$tree" log -1 --format='%h %s' | cut -c1-100 > .device/baseline/COMMIT
echo "baseline $(cat .device/baseline/COMMIT)"
