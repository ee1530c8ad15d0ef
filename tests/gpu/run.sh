#!/usr/bin/env bash
# The GPU check of ddscript's CUPTI collector (see README.md): records
# record_resnet18.py with `ddscript record --skip 10 --iterations 5`, then
# checks what inspect, replay and convert make of the trace.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
OUT=${OUT:-$BUILD/gpu-check}
PYTHON=${PYTHON:-python3}
DD=$BUILD/ddscript
mkdir -p "$OUT"
fail() { echo "gpu check: FAIL: $*" >&2; exit 1; }

# The collector's overhead: the same loop without it, then under it (the
# median of iterations 10 to 59, whichever the collector records).
"$PYTHON" "$ROOT/tests/gpu/record_resnet18.py" --iterations 60 \
  | tee "$OUT/plain.txt"
"$DD" record -o "$OUT/resnet18.cupti" --skip 10 --iterations 5 -- \
  "$PYTHON" "$ROOT/tests/gpu/record_resnet18.py" --iterations 60 \
  | tee "$OUT/record.txt"
median() { awk '/^median iteration/ { print $3 }' "$1"; }
PLAIN=$(median "$OUT/plain.txt")
TRACED=$(median "$OUT/record.txt")
[ -n "$PLAIN" ] && [ -n "$TRACED" ] || fail "no median iteration time printed"
awk -v p="$PLAIN" -v t="$TRACED" 'BEGIN {
  printf "collector overhead: %.3f ms -> %.3f ms per iteration (%+.1f%%)\n",
         p, t, (t - p) / p * 100 }' | tee "$OUT/overhead.txt"
grep -Eq "5 iterations \(ProfilerStep#10 to #14\)" "$OUT/record.txt" ||
  fail "the trace does not hold ProfilerStep#10 to #14"

"$DD" inspect --trace "$OUT/resnet18.cupti" | tee "$OUT/inspect.txt"
grep -Eq "^iterations +5 from ProfilerStep#" "$OUT/inspect.txt" ||
  fail "inspect does not find 5 iterations"
grep -Eq "^device +GPU 0: " "$OUT/inspect.txt" || fail "no device properties"
grep -Eq "[0-9,]+ cuda_sync" "$OUT/inspect.txt" || fail "no synchronisation records"
grep -Eq "^ +layer1\.0\.conv1 " "$OUT/inspect.txt" ||
  fail "kernels are not mapped to layers (nn.Module NVTX ranges)"

"$DD" replay --trace "$OUT/resnet18.cupti" --iteration all | tee "$OUT/replay.txt"
# The unchanged graph replays the measured iterations (docs/replay.md).
awk '/^mean \|error\|/ { e = $3; sub("%", "", e); exit !(e + 0 <= 1.0) }' \
  "$OUT/replay.txt" || fail "replay differs from the measured time by more than 1%"

"$DD" convert "$OUT/resnet18.cupti" -o "$OUT/resnet18.json.gz"
"$DD" replay --trace "$OUT/resnet18.json.gz" --iteration all > "$OUT/replay-json.txt"
diff <(tail -n +2 "$OUT/replay.txt") <(tail -n +2 "$OUT/replay-json.txt") ||
  fail "the converted JSON replays differently from run.cupti"
# What a session with a GPU commits: the trace, compressed, as a fixture
# (tests/data/cupti/, see tests/data/README.md), and the numbers above in
# docs/validation.md.
gzip -9 -c "$OUT/resnet18.cupti" > "$OUT/resnet18.cupti.gz"
echo "gpu check: ok ($OUT; fixture $OUT/resnet18.cupti.gz)"
