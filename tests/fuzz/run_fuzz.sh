#!/usr/bin/env bash
# Run every loader fuzz target for a bounded time (docs/testing.md, "Fuzzing").
#
#   bash tests/fuzz/run_fuzz.sh BUILD_DIR [SECONDS] [TARGET...]
#
# BUILD_DIR was configured with -DFABRICSIM_FUZZ=ON and built with
# `--target fuzz_targets`. Each target starts from the shipped YAML files
# (topologies/**; the schedule target from the shipped schedules, below)
# plus what earlier runs in BUILD_DIR kept in its corpus and
# runs a fixed number of inputs from a fixed seed (FUZZ_SEED, default 1;
# FUZZ_RUNS, default per target below), so that on a fresh BUILD_DIR the same
# inputs are tried on every machine and a clean run here means a clean run in
# CI. SECONDS (default 60) only caps each target's time on a slow machine. It
# fails on any crash, leak, time-out (an input
# taking more than FUZZ_TIMEOUT s, default 10), memory blow-up (2 GiB RSS) or
# sanitizer report; the failing input is kept as
# BUILD_DIR/fuzz-artifacts/<target>-{crash,leak,timeout,oom}-... and the script
# exits 1. Prints one line per target: executions, corpus, result.
set -u
if [[ $# -lt 1 ]]; then
  echo "usage: bash $0 BUILD_DIR [SECONDS] [TARGET...]" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$1" && pwd) || exit 2
SECONDS_EACH=${2:-60}
# Per-input limit, wall-clock seconds (libFuzzer -timeout). Raise it only on a
# machine shared with other work, where a slow wall clock is not the input's fault.
TIMEOUT=${FUZZ_TIMEOUT:-10}
SEED=${FUZZ_SEED:-1}
# Inputs per target (about 60 s each on the standard 2-core machine, Debug).
declare -A RUNS=([fabric_file]=50000 [host_file]=50000 [study_file]=10000 [schedule_file]=50000)
shift $(( $# >= 2 ? 2 : 1 ))

# Seeds: every shipped YAML file for every target (a seed of another kind still
# carries the shared sections: links, workload, units), except
# ualink-pod-1024.yaml: the same structure as ualink-pod-64.yaml at 16x the
# size, whose check alone takes about 10 s under the fuzz instrumentation.
# The schedule loader's target (fuzz_schedule_file) has seeds of its own: the
# shipped schedules (topologies/schedules/, but allpairs-allreduce-64.xml,
# 2 MB, far past -max_len) and the CLI tests' good and bad schedules.
ALL_TARGETS=(fabric_file host_file study_file schedule_file)
TARGETS=("${ALL_TARGETS[@]}")
if [[ $# -gt 0 ]]; then TARGETS=("$@"); fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=0
for t in "${TARGETS[@]}"; do
  bin="$BUILD/fuzz/fuzz_$t"
  [[ -x $bin ]] || { echo "error: $bin not built (cmake --build $BUILD --target fuzz_targets)" >&2; exit 2; }
  corpus="$BUILD/fuzz-corpus/$t" seeds="$BUILD/fuzz-seeds" art="$BUILD/fuzz-artifacts"
  mkdir -p "$corpus" "$seeds" "$art"
  if [[ $t == schedule_file ]]; then
    seeds="$BUILD/fuzz-seeds-schedule"
    mkdir -p "$seeds"
    find "$ROOT/topologies/schedules" "$ROOT/tests/cli/fixtures/schedules" -type f \( -name '*.xml' -o -name '*.yaml' \) \
      -size -64k -exec cp {} "$seeds/" \;
  else
    (cd "$ROOT/topologies" && find . -name '*.yaml' ! -name ualink-pod-1024.yaml | while read -r f; do cp "$f" "$seeds/$(echo "${f#./}" | tr / _)"; done)
  fi
  log="$BUILD/fuzz-$t.log"
  # The target's scratch folder (removed at a normal exit) stays inside BUILD_DIR.
  rm -rf "$BUILD/fuzz-tmp/$t" && mkdir -p "$BUILD/fuzz-tmp/$t"
  TMPDIR="$BUILD/fuzz-tmp/$t" "$bin" "$corpus" "$seeds" -seed="$SEED" -runs="${FUZZ_RUNS:-${RUNS[$t]:-20000}}" -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$art/$t-" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if [[ $rc -eq 0 ]]; then
    echo "fuzz_$t: ok, ${execs:-?} executions (seed $SEED, cap ${SECONDS_EACH} s), corpus $(ls "$corpus" | wc -l) inputs"
  else
    failed=1
    echo "fuzz_$t: FAILED (exit $rc) after ${execs:-?} executions; log $log; input:"
    ls -t "$art" | grep "^$t-" | head -1 | sed "s|^|  $art/|"
    grep -a -m2 -E 'ERROR: |runtime error|unclassified exception' "$log" | sed 's/^/  /'
  fi
done
exit $failed
