#!/usr/bin/env bash
# Command-line behaviour of fabricsim: bad input is rejected with exit status 2,
# one `error: ...` line on stderr naming file, line and key path, and nothing
# written; runs and sweeps are deterministic; sweeps resume.
#
#   bash tests/cli/run_cli_tests.sh <path-to-fabricsim> <repo-root>
#
# Prints `ok N - ...` / `not ok N - ...` (with `#` diagnostics) per check and
# finally `P passed, F failed`; exits 1 if any check failed. Works from any
# working directory; everything is written under a temporary directory that is
# removed on exit. Fixture studies live in tests/cli/fixtures/; the bad fabric
# files are derived from topologies/link-primary.yaml with sed at run time.
set -u

if [[ $# -lt 2 ]]; then
  echo "usage: bash $0 <path-to-fabricsim> <repo-root>" >&2
  exit 2
fi

abspath() {  # absolute path of an existing file, relative to the caller's cwd
  local d b
  d=$(cd "$(dirname -- "$1")" 2>/dev/null && pwd) || return 1
  b=$(basename -- "$1")
  echo "$d/$b"
}

BIN=$(abspath "$1") || { echo "error: cannot find fabricsim at '$1'" >&2; exit 2; }
ROOT=$(cd "$2" 2>/dev/null && pwd) || { echo "error: cannot find repo root '$2'" >&2; exit 2; }
[[ -x $BIN ]] || { echo "error: '$BIN' is not an executable" >&2; exit 2; }
TOPO="$ROOT/topologies/link-primary.yaml"
FIXTURES="$ROOT/tests/cli/fixtures"
[[ -f $TOPO ]] || { echo "error: '$TOPO' not found" >&2; exit 2; }
[[ -d $FIXTURES ]] || { echo "error: '$FIXTURES' not found" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/fabricsim-cli.XXXXXX") || exit 2
trap 'rm -rf -- "$TMP"' EXIT
FX="$TMP/fixtures"   # generated fabric files
WORK="$TMP/cwd"      # working directory for every invocation (must stay empty on bad input)
RES="$TMP/results"   # --out directories
mkdir -p "$FX" "$WORK" "$RES"
OUT="$TMP/stdout"
ERR="$TMP/stderr"
TMO=120              # per-invocation safety net, seconds
FLITS=2000

# ---------------------------------------------------------------- harness ---
n=0
passed=0
failed=0
bad=0
diag=""
rc=0

note() {  # record a failure reason for the current check
  bad=1
  diag+="# $*"$'\n'
}

check() {  # check "description" function [args...]
  local desc=$1
  shift
  n=$((n + 1))
  bad=0
  diag=""
  "$@"
  if ((bad)); then
    echo "not ok $n - $desc"
    printf '%s' "$diag"
    failed=$((failed + 1))
  else
    echo "ok $n - $desc"
    passed=$((passed + 1))
  fi
}

run_in() {  # run_in DIR ARGS...: run fabricsim from DIR; sets rc, fills $OUT / $ERR
  local dir=$1
  shift
  (cd "$dir" && exec timeout "$TMO" "$BIN" "$@") >"$OUT" 2>"$ERR"
  rc=$?
  [[ $rc -ne 124 ]] || note "fabricsim $* timed out after ${TMO}s"
}

fs() { run_in "$WORK" "$@"; }

show_output() {  # append the last invocation's stdout/stderr to the diagnostics
  local l
  while IFS= read -r l; do diag+="#   stderr: $l"$'\n'; done < <(head -n 20 "$ERR")
  while IFS= read -r l; do diag+="#   stdout: $l"$'\n'; done < <(head -n 10 "$OUT")
}

# expect_bad_input OUTDIR PATTERN...: the last invocation was rejected as bad
# input: exit 2, exactly one stderr line `error: ...` containing every PATTERN
# (fixed strings), OUTDIR not created and nothing written in the cwd.
expect_bad_input() {
  local out=$1 p nl before=$bad
  shift
  [[ $rc -eq 2 ]] || note "exit status $rc, expected 2"
  nl=$(wc -l <"$ERR")
  [[ $nl -eq 1 ]] || note "stderr has $nl lines, expected exactly 1"
  [[ $(head -c 7 "$ERR") == "error: " ]] || note "stderr does not start with 'error: '"
  for p in "$@"; do
    grep -qF -- "$p" "$ERR" || note "stderr does not contain '$p'"
  done
  [[ ! -e $out ]] || note "output directory $out was created"
  if [[ -n $(ls -A "$WORK") ]]; then
    note "files were created in the working directory: $(ls -A "$WORK" | tr '\n' ' ')"
    rm -rf -- "${WORK:?}"/* "${WORK:?}"/.[!.]* 2>/dev/null
  fi
  ((bad == before)) || show_output
}

# derive NAME SED-SCRIPT MARKER-ERE: write $FX/NAME = link-primary.yaml edited
# by SED-SCRIPT; set $line to the number of the single line matching
# MARKER-ERE. Fails (and records why) if the edit did not apply.
derive() {
  local f="$FX/$1" lines
  line=""
  if ! sed -e "$2" "$TOPO" >"$f" || cmp -s "$f" "$TOPO"; then
    note "fixture $1: sed '$2' did not change $TOPO (has the topology changed?)"
    return 1
  fi
  lines=$(grep -n -E -- "$3" "$f" | cut -d: -f1)
  if [[ -z $lines || $(wc -l <<<"$lines") -ne 1 ]]; then
    note "fixture $1: expected exactly one line matching '$3', got '${lines//$'\n'/ }'"
    return 1
  fi
  line=$lines
}

mtimes() {  # mtimes DIR: "mtime path" of every point result.json, sorted by path
  # (points/POLICY/sSEED/result.json; points/VARIANT/POLICY/sSEED/... with variants)
  (cd "$1" && find points -path '*/s[0-9]*/result.json' -printf '%T@ %p\n' | sort -k2)
}

# ------------------------------------------------------- bad fabric input ---

t_unknown_key() {
  local f="$FX/unknown-key.yaml" line out="$RES/t1"
  derive unknown-key.yaml 's/^    error_bad: .*/&\n    error_badd: 0.6/' '^    error_badd: 0\.6$' || return
  fs run "$f" --set traffic.flits=$FLITS --out "$out"
  expect_bad_input "$out" "unknown-key.yaml" "$f:$line:" "link.channel.error_badd" "unknown key"
}

t_bad_unit() {
  local f="$FX/bad-unit.yaml" line out="$RES/t2"
  derive bad-unit.yaml 's|^  forward_rate: 400Gb/s|  forward_rate: 400Gbps|' '^  forward_rate: 400Gbps' || return
  fs run "$f" --set traffic.flits=$FLITS --out "$out"
  expect_bad_input "$out" "$f:$line:" "key 'link.forward_rate'" "Gbps"
}

t_bad_probability() {
  local f="$FX/bad-probability.yaml" line out="$RES/t3"
  derive bad-probability.yaml 's/^    error_bad: 0\.6/    error_bad: 1.5/' '^    error_bad: 1\.5' || return
  fs run "$f" --set traffic.flits=$FLITS --out "$out"
  expect_bad_input "$out" "$f:$line:" "key 'link.channel.error_bad'" "1.5"
}

t_negative_rate() {
  local f="$FX/negative-rate.yaml" line out="$RES/t4"
  derive negative-rate.yaml 's|^  reverse_rate: 400Gb/s|  reverse_rate: -400Gb/s|' '^  reverse_rate: -400Gb/s' || return
  fs run "$f" --set traffic.flits=$FLITS --out "$out"
  expect_bad_input "$out" "$f:$line:" "key 'link.reverse_rate'"
}

t_window_order() {
  local f="$FX/window-order.yaml" line out="$RES/t5"
  derive window-order.yaml 's/^  window_reduced: 8\b/  window_reduced: 20/' '^  window_reduced: 20' || return
  fs run "$f" --set traffic.flits=$FLITS --out "$out"
  expect_bad_input "$out" "$f:$line:" "key 'link.window_reduced'"
}

t_missing_file() {
  local f="$TMP/no/such/dir/fabric.yaml" out="$RES/t6"
  fs run "$f" --set traffic.flits=$FLITS --out "$out"
  expect_bad_input "$out" "$f"
}

t_yaml_syntax() {
  local f="$FX/syntax-error.yaml" line out="$RES/t7"
  derive syntax-error.yaml 's|^  forward_rate: 400Gb/s|  forward_rate: 400Gb/s: oops|' '^  forward_rate: 400Gb/s: oops' || return
  fs run "$f" --set traffic.flits=$FLITS --out "$out"
  expect_bad_input "$out" "$f:$line:"
}

# ------------------------------------------------------- bad command line ---

t_set_unknown() {
  local out="$RES/t8"
  fs run "$TOPO" --set traffic.flits=$FLITS --set link.bogus=1 --out "$out"
  expect_bad_input "$out" "--set link.bogus" "unknown key"
}

t_set_bad_probability() {
  local out="$RES/t9"
  fs run "$TOPO" --set traffic.flits=$FLITS --set link.channel.error_bad=2 --out "$out"
  expect_bad_input "$out" "--set link.channel.error_bad"
}

t_bad_policy() {
  local out="$RES/t10"
  fs run "$TOPO" --set traffic.flits=$FLITS --policy nonsense --out "$out"
  expect_bad_input "$out" "nonsense" "policy"
}

t_bad_studies() {
  local s line out
  # unknown key in the study section
  s="$FIXTURES/study-unknown-key.yaml"
  out="$RES/t11a"
  line=$(grep -n '^  repeats:' "$s" | cut -d: -f1)
  fs sweep "$s" --jobs 2 --out "$out"
  expect_bad_input "$out" "$s:$line:" "study.repeats" "unknown key"
  # fabric file that does not exist (named relative to the study file)
  s="$FIXTURES/study-missing-fabric.yaml"
  out="$RES/t11b"
  line=$(grep -n '^  fabric:' "$s" | cut -d: -f1)
  fs sweep "$s" --jobs 2 --out "$out"
  expect_bad_input "$out" "$s:$line:" "study.fabric" "no-such-fabric.yaml"
  # unknown policy
  s="$FIXTURES/study-unknown-policy.yaml"
  out="$RES/t11c"
  line=$(grep -n '^  policies:' "$s" | cut -d: -f1)
  fs sweep "$s" --jobs 2 --out "$out"
  expect_bad_input "$out" "$s:$line:" "study.policies" "nonsense"
}

# ------------------------------------------------------------ determinism ---

t_run_determinism() {
  local a="$RES/t12a" b="$RES/t12b" c="$RES/t12c" x
  for x in "$a" "$b"; do
    fs run "$TOPO" --seed 7 --set traffic.flits=$FLITS --quiet --out "$x"
    [[ $rc -eq 0 ]] || { note "run --seed 7 --out $x: exit $rc"; show_output; return; }
    [[ -s $x/result.json ]] || { note "$x/result.json missing or empty"; return; }
  done
  cmp -- "$a/result.json" "$b/result.json" >/dev/null ||
    note "same fabric and seed gave different result.json: $(cmp -- "$a/result.json" "$b/result.json" 2>&1)"
  fs run "$TOPO" --seed 8 --set traffic.flits=$FLITS --quiet --out "$c"
  [[ $rc -eq 0 ]] || { note "run --seed 8: exit $rc"; show_output; return; }
  if cmp -s -- "$a/result.json" "$c/result.json"; then
    note "seeds 7 and 8 gave byte-identical result.json"
  else
    # More than the echoed seed must differ: the simulation itself depends on it.
    python3 - "$a/result.json" "$c/result.json" <<'EOF' || note "seeds 7 and 8 differ only in config.seed"
import json, sys
a, c = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, c):
    d["config"].pop("seed", None)
sys.exit(0 if a != c else 1)
EOF
  fi
}

SWEEP_STUDY="$FIXTURES/small-sweep.yaml"
SW1="$RES/sweep1"
SW2="$RES/sweep2"

t_sweep_determinism() {
  local x header lines
  fs sweep "$SWEEP_STUDY" --jobs 2 --out "$SW1"
  [[ $rc -eq 0 ]] || { note "sweep --jobs 2 --out $SW1: exit $rc"; show_output; return; }
  fs sweep "$SWEEP_STUDY" --jobs 1 --out "$SW2"
  [[ $rc -eq 0 ]] || { note "sweep --jobs 1 --out $SW2: exit $rc"; show_output; return; }
  for x in results.csv summary.json; do
    [[ -s $SW1/$x && -s $SW2/$x ]] || { note "$x missing in $SW1 or $SW2"; return; }
    cmp -- "$SW1/$x" "$SW2/$x" >/dev/null || note "$x differs between the two sweeps: $(cmp -- "$SW1/$x" "$SW2/$x" 2>&1)"
  done
  header=$(head -n 1 "$SW1/results.csv")
  [[ $header == "policy,seed,goodput_gbps,p99_us,replayed_flits,fec_bytes,control_bytes,terminal_failures,first_attempt_errors,delivered_flits" ]] ||
    note "results.csv header is '$header'"
  lines=$(wc -l <"$SW1/results.csv")
  [[ $lines -eq 7 ]] || note "results.csv has $lines lines, expected 7 (header + 2 policies x 3 seeds)"
  local why
  why=$(python3 - "$SW1/summary.json" 2>&1 <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
g = s.get("groups")
if not isinstance(g, dict) or set(g) != {"fixed-strong", "preface"}:
    sys.exit("groups is %r, expected both policies" % (sorted(g) if isinstance(g, dict) else g,))
d = s.get("paired_deltas")
if not isinstance(d, list) or len(d) != 2:
    sys.exit("paired_deltas has length %s, expected 2" % (len(d) if isinstance(d, list) else d,))
EOF
  ) || note "summary.json: $why"
}

t_sweep_resume() {
  local before after
  [[ -s $SW1/results.csv ]] || { note "no previous sweep in $SW1 (check 13 failed)"; return; }
  cp -- "$SW1/results.csv" "$TMP/prev.csv"
  cp -- "$SW1/summary.json" "$TMP/prev.json"
  before=$(mtimes "$SW1")
  [[ $(wc -l <<<"$before") -eq 6 ]] || note "expected 6 point result.json files, found: ${before//$'\n'/; }"
  sleep 1  # make a rewrite visible even on a coarse-grained file system
  fs sweep "$SWEEP_STUDY" --jobs 2 --out "$SW1"
  [[ $rc -eq 0 ]] || { note "resumed sweep: exit $rc"; show_output; return; }
  after=$(mtimes "$SW1")
  [[ $before == "$after" ]] || note "point result.json files were rewritten: before '${before//$'\n'/; }' after '${after//$'\n'/; }'"
  cmp -- "$TMP/prev.csv" "$SW1/results.csv" >/dev/null || note "results.csv changed on resume"
  cmp -- "$TMP/prev.json" "$SW1/summary.json" >/dev/null || note "summary.json changed on resume"
}

# ------------------------------------------------------------ happy paths ---

t_default_fabric() {
  local out="$RES/default"
XX
}

t_help() {
  fs run --help
  [[ $rc -eq 0 ]] || note "run --help: exit $rc"
  grep -q -- "--set" "$OUT" || note "run --help does not describe --set"
  ((bad == 0)) || show_output
  rm -rf -- "${WORK:?}"/* 2>/dev/null
}

# -------------------------------------------------- beyond the basic list ---

t_sweep_partial_resume() {
  # A point whose result.json is gone is re-run; the other points are reused.
  local victim="points/preface/s12/result.json" before after
  [[ -s $SW1/$victim ]] || { note "no previous sweep in $SW1"; return; }
  before=$(mtimes "$SW1" | grep -v -- " $victim\$")
  [[ $(wc -l <<<"$before") -eq 5 ]] || note "expected 5 other point result.json files, found: ${before//$'\n'/; }"
  rm -f -- "$SW1/$victim"
  sleep 1
  fs sweep "$SWEEP_STUDY" --jobs 2 --out "$SW1"
  [[ $rc -eq 0 ]] || { note "sweep after deleting $victim: exit $rc"; show_output; return; }
  [[ -s $SW1/$victim ]] || note "$victim was not re-created"
  after=$(mtimes "$SW1" | grep -v -- " $victim\$")
  [[ $before == "$after" ]] || note "other points were rewritten: before '${before//$'\n'/; }' after '${after//$'\n'/; }'"
  cmp -- "$TMP/prev.csv" "$SW1/results.csv" >/dev/null || note "results.csv differs after re-running one point"
  cmp -- "$TMP/prev.json" "$SW1/summary.json" >/dev/null || note "summary.json differs after re-running one point"
}

t_set_unknown_nested() {
  # The unknown key exists only because of --set: the message must blame
  # --set, not the fabric file (which has no such key).
  local out="$RES/t18"
  fs run "$TOPO" --set traffic.flits=$FLITS --set link.bogus.depth=1 --out "$out"
  expect_bad_input "$out" "error: --set link.bogus" "unknown key"
  if grep -qF -- "$TOPO" "$ERR"; then
    note "the message blames $TOPO, which has no key link.bogus"
  fi
}

t_multiline_value() {
  # A value containing a newline must still give a one-line message.
  local f="$FX/multiline.yaml" line out="$RES/t19"
  derive multiline.yaml 's|^  propagation: 20ns|  propagation: "20 ns\\nten"|' '^  propagation: "20 ns' || return
  fs run "$f" --set traffic.flits=$FLITS --out "$out"
  expect_bad_input "$out" "$f:$line:" "key 'link.propagation'"
}

# ---------------------------------------------------- bad fabric graphs ---
# An explicit fabric of three accelerators on one switch; each check breaks it
# one way and expects exit 2 naming the file, the line and the key.
write_tiny() {  # write_tiny NAME [sed-script]: $FX/NAME from the tiny fabric
  cat >"$FX/tiny.yaml" <<'YAML'
fabric:
  name: tiny
  kind: explicit
nodes:
  - {id: acc0, kind: accelerator}
  - {id: acc1, kind: accelerator}
  - {id: sw0, kind: ualink-switch}
  - {id: acc2, kind: accelerator}
links:
  - {a: acc0.0, b: sw0.0}
  - {a: acc1.0, b: sw0.1}
  - {a: acc2.0, b: sw0.2}
workload: {collective: allgather, algorithm: direct, size: 48KiB}
YAML
  if [[ -n ${2:-} ]]; then sed -e "$2" "$FX/tiny.yaml" >"$FX/$1"; else cp "$FX/tiny.yaml" "$FX/$1"; fi
}

t_tiny_ok() {
  write_tiny ok.yaml
  fs run "$FX/ok.yaml" --out "$RES/tiny"
  [[ $rc -eq 0 ]] || { note "valid explicit fabric: exit $rc"; show_output; return; }
  grep -q "allgather" "$RES/tiny/collectives.csv" || note "collectives.csv has no allgather row"
  fs check "$FX/ok.yaml" --dot "$RES/tiny.dot"
  [[ $rc -eq 0 ]] || { note "check: exit $rc"; show_output; return; }
  grep -q "diameter: 2" "$OUT" || { note "check summary has no 'diameter: 2'"; show_output; }
  grep -q "acc2" "$RES/tiny.dot" || note "DOT output does not name acc2"
}

t_dangling() {
  write_tiny dangling.yaml 's/b: sw0.2/b: sw9.2/'
  fs run "$FX/dangling.yaml" --out "$RES/dangling"
  expect_bad_input "$RES/dangling" "dangling.yaml:12:" "links[2].b" "dangling reference"
}

t_duplicate_id() {
  write_tiny dup.yaml 's/id: acc1,/id: acc0,/'
  fs run "$FX/dup.yaml" --out "$RES/dup"
  expect_bad_input "$RES/dup" "dup.yaml:6:" "nodes[1].id" "duplicate node id 'acc0'"
}

t_port_twice() {
  write_tiny twice.yaml 's/b: sw0.2/b: sw0.1/'
  fs run "$FX/twice.yaml" --out "$RES/twice"
  expect_bad_input "$RES/twice" "twice.yaml:12:" "links[2]" "used twice"
}

t_unreachable() {
  write_tiny unreach.yaml 's/  - {a: acc2.0, b: sw0.2}/  - {a: acc2.0, b: acc1.1}/; s/  - {a: acc1.0, b: sw0.1}/  - {a: acc1.0, b: acc2.1}/'
  fs run "$FX/unreach.yaml" --out "$RES/unreach"
  expect_bad_input "$RES/unreach" "unreach.yaml:" "unreachable"
}

t_unknown_kind() {
  write_tiny kind.yaml 's/kind: ualink-switch/kind: ualink-swich/'
  fs run "$FX/kind.yaml" --out "$RES/kind"
  expect_bad_input "$RES/kind" "kind.yaml:7:" "nodes[2]" "unknown node kind 'ualink-swich'"
}

t_ring_bad_window() {
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.window_reduced=40 --out "$RES/ringw"
  expect_bad_input "$RES/ringw" "--set defaults.link.window_reduced" "must not exceed"
}

t_terminal_failures_in_sweep() {
  local out="$RES/tf"
  fs sweep "$FIXTURES/terminal-failures.yaml" --jobs 2 --out "$out"
  [[ $rc -eq 0 ]] || { note "sweep with terminal failures: exit $rc"; show_output; return; }
  [[ $(wc -l <"$out/results.csv") -eq 7 ]] || note "results.csv should have 6 rows"
  # policy,seed,goodput_gbps,p99_us,...,terminal_failures,...: empty goodput and P99, terminal_failures 1
  grep -q '^fixed-strong,11,,,' "$out/results.csv" || note "a failed point's goodput/P99 are not empty"
  python3 - "$out/summary.json" <<'PY' || note "summary.json does not list the 6 incomplete points"
import json, sys
s = json.load(open(sys.argv[1]))
assert len(s["incomplete_points"]) == 6, s.get("incomplete_points")
assert s["groups"] is None and s["paired_deltas"] is None
PY
}

t_fabric_determinism() {
  local f="$ROOT/topologies/ualink-pod-64.yaml" sets=(--set fabric.accelerators=16 --set workload.size=256KiB)
  fs run "$f" "${sets[@]}" --seed 5 --quiet --out "$RES/fd1"
  [[ $rc -eq 0 ]] || { note "fabric run 1: exit $rc"; show_output; return; }
  fs run "$f" "${sets[@]}" --seed 5 --quiet --out "$RES/fd2"
  [[ $rc -eq 0 ]] || { note "fabric run 2: exit $rc"; show_output; return; }
  local x
  for x in result.json collectives.csv links.csv; do
    cmp -s "$RES/fd1/$x" "$RES/fd2/$x" || note "$x differs between two identical fabric runs"
  done
}

t_trace() {
  fs run "$TOPO" --set traffic.flits=500 --trace --quiet --out "$RES/trace"
  [[ $rc -eq 0 ]] || { note "run --trace: exit $rc"; show_output; return; }
  python3 - "$RES/trace/trace.json" <<'PY' || note "trace.json is not a trace-event file with one span per transmission"
import json, sys
j = json.load(open(sys.argv[1]))
spans = [e for e in j["traceEvents"] if e.get("ph") == "X"]
assert len(spans) >= 500, len(spans)            # every flit is transmitted at least once
assert all(e["dur"] > 0 and e["ts"] >= 0 for e in spans)
assert spans[0]["name"] == "seq 0", spans[0]
PY
}

# ------------------------------------------------------------------- main ---

check "unknown key in the fabric file: exit 2, file:line, key path, nothing written" t_unknown_key
check "rate with an unknown unit (400Gbps): exit 2, file:line, link.forward_rate" t_bad_unit
check "probability outside [0,1] (error_bad: 1.5): exit 2, file:line, link.channel.error_bad" t_bad_probability
check "negative rate (reverse_rate: -400Gb/s): exit 2, file:line, link.reverse_rate" t_negative_rate
check "W_R > W_H (window_reduced: 20): exit 2, file:line, link.window_reduced" t_window_order
check "missing fabric file: exit 2, names the path" t_missing_file
check "YAML syntax error: exit 2, file:line" t_yaml_syntax
check "--set link.bogus=1: exit 2, names --set link.bogus" t_set_unknown
check "--set link.channel.error_bad=2: exit 2, names --set link.channel.error_bad" t_set_bad_probability
check "--policy nonsense: exit 2" t_bad_policy
check "bad studies (unknown key, missing fabric, unknown policy): exit 2, file:line, key, no out dir" t_bad_studies
check "run is deterministic per seed (cmp result.json) and depends on the seed" t_run_determinism
check "sweep (2 policies x 3 seeds) is deterministic: results.csv/summary.json identical, layout" t_sweep_determinism
check "sweep resume reuses finished points (result.json untouched, results identical)" t_sweep_resume
check "run with no fabric argument from the repo root uses the default fabric" t_default_fabric
check "run --help exits 0" t_help
check "sweep resume re-runs only a point whose result.json is missing" t_sweep_partial_resume
check "--set of an unknown nested key (link.bogus.depth) is blamed on --set, not the file" t_set_unknown_nested
check "bad value containing a newline still gives exactly one stderr line" t_multiline_value

check "valid explicit fabric runs; check prints a summary and writes DOT" t_tiny_ok
check "explicit fabric, dangling link endpoint: exit 2, file:line, links[2].b" t_dangling
check "explicit fabric, duplicate node id: exit 2, file:line, nodes[1].id" t_duplicate_id
check "explicit fabric, port used twice: exit 2, file:line, links[2]" t_port_twice
check "explicit fabric, unreachable ranks: exit 2, names them" t_unreachable
check "explicit fabric, unknown node kind: exit 2, file:line, the kind" t_unknown_kind
check "ring fabric, W_R > W_H via --set: exit 2, names the override" t_ring_bad_window

# PCIe host (frank2.yaml): bad host files and impossible parameters.
FRANK="$ROOT/topologies/frank2.yaml"
write_frank() {  # NAME SED: frank2.yaml edited, ladders alongside
  sed -e "$2" "$FRANK" >"$FX/$1"
  mkdir -p "$FX/ladders" && cp "$ROOT"/topologies/ladders/*.yaml "$FX/ladders/"
  cmp -s "$FX/$1" "$FRANK" && note "fixture $1: sed '$2' did not change frank2.yaml"
}
t_host_window_longer_than_period() {
  write_frank win.yaml 's/    window: 175ms/    window: 2500ms/'
  fs run "$FX/win.yaml" --out "$RES/win"
  expect_bad_input "$RES/win" "win.yaml:" "mechanisms.read_stall.window" "longer than its period"
}
t_host_missing_bridge() {
  write_frank hb.yaml 's/{name: p1, host_bridge: "e0"}/{name: p1, host_bridge: "f0"}/'
  fs run "$FX/hb.yaml" --out "$RES/hb"
  expect_bad_input "$RES/hb" "hb.yaml:" "host_bridge" "no host bridge 'f0'"
}
t_host_gpu_on_missing_partition() {
  write_frank gp.yaml 's/{id: 16, partition: sw3.p1, lanes: 4}/{id: 16, partition: sw4.p1, lanes: 4}/'
  fs run "$FX/gp.yaml" --out "$RES/gp"
  expect_bad_input "$RES/gp" "gp.yaml:" "gpus[16].partition" "sw4.p1"
}
t_host_group_bad_gpu() {
  fs run "$FRANK" --set "workload.group=[0,4,8,17]" --out "$RES/grp"
  expect_bad_input "$RES/grp" "--set workload.group" "not a GPU"
}
t_host_unknown_transport() {
  fs run "$FRANK" --set workload.transport=pul --out "$RES/tr"
  expect_bad_input "$RES/tr" "workload.transport" "pull"
}
t_host_run_is_deterministic() {
  fs run "$FRANK" --quiet --set "workload.group=[0,4,8,12]" --set workload.ops=300 --set workload.transport=full --out "$RES/h1"
  [[ $rc -eq 0 ]] || note "run 1 exit $rc"
  fs run "$FRANK" --quiet --set "workload.group=[0,4,8,12]" --set workload.ops=300 --set workload.transport=full --out "$RES/h2"
  [[ $rc -eq 0 ]] || note "run 2 exit $rc"
  cmp -s "$RES/h1/result.json" "$RES/h2/result.json" || note "result.json differs between identical runs"
  grep -q '"drains"' "$RES/h1/result.json" || note "no drains counter in result.json"
}
check "pcie host, stall window longer than its period: exit 2, file:line, key" t_host_window_longer_than_period
check "pcie host, partition on a missing host bridge: exit 2, file:line, key" t_host_missing_bridge
check "pcie host, GPU on a missing partition: exit 2, file:line, key" t_host_gpu_on_missing_partition
check "pcie host, group naming a missing GPU: exit 2, names the override" t_host_group_bad_gpu
check "pcie host, misspelt transport: exit 2, lists the valid ones" t_host_unknown_transport
check "pcie host runs are byte-identical when repeated" t_host_run_is_deterministic

check "sweep whose points all end in terminal failures: tables written, no averages" t_terminal_failures_in_sweep

check "a switched-pod fabric run is byte-identical when repeated (result.json, collectives.csv, links.csv)" t_fabric_determinism
check "run --trace writes a Perfetto/Chrome trace with one span per transmission" t_trace

# ------------------------------------------------------ users' schedules ---
# tests/cli/fixtures/schedule-ring2.yaml runs schedules/allreduce-2.xml; the
# bad schedules beside it differ from it in the line their comment names.
SCHED_FAB="$FIXTURES/schedule-ring2.yaml"
SCHED_DIR="$FIXTURES/schedules"

t_schedule_runs() {
  local out="$RES/sched-ok" f
  for f in allreduce-2.xml allreduce-2.yaml; do
    rm -rf -- "$out"
    fs run "$SCHED_FAB" --set "workload.schedule=schedules/$f" --quiet --out "$out"
    [[ $rc -eq 0 ]] || { note "$f: exit $rc"; show_output; continue; }
    grep -q '^allreduce,schedule:allreduce-2[a-z-]*,2,65536,16384,float,sum,.*,true$' "$out/collectives.csv" ||
      note "$f: collectives.csv has no correct schedule row: $(tail -1 "$out/collectives.csv")"
    [[ $(wc -l <"$out/steps.csv") -eq 9 ]] || note "$f: steps.csv should have 8 steps"
    [[ $(wc -l <"$out/threadblocks.csv") -eq 3 ]] || note "$f: threadblocks.csv should have 2 threadblocks"
    grep -q '"critical_path"' "$out/result.json" || note "$f: result.json has no critical path"
  done
}

t_schedule_bad_files() {
  local spec name line what out
  # file:line:what
  for spec in "malformed.xml:10:malformed XML" "unknown-type.xml:6:unknown step type 'rrx'" \
              "unknown-buffer.xml:7:unknown buffer srcbuf=\"x\"" "offset-outside.xml:5:lie outside buffer i" \
              "unmatched-send.xml:7:no receive matches it" "count-mismatch.xml:16:moves 2 chunks, the receive 1" \
              "dep-cycle.xml:7:dependency cycle on rank 0" "unknown-key.yaml:13:unknown key 'recieve'"; do
    name=${spec%%:*}
    line=${spec#*:}
    what=${line#*:}
    line=${line%%:*}
    out="$RES/sched-$name"
    fs run "$SCHED_FAB" --set "workload.schedule=schedules/$name" --out "$out"
    expect_bad_input "$out" "$SCHED_DIR/$name:$line: " "$what" "workload.schedule"
  done
}

t_schedule_ngpus() {
  fs run "$SCHED_FAB" --set fabric.accelerators=4 --out "$RES/sched-ngpus"
  expect_bad_input "$RES/sched-ngpus" "schedule-ring2.yaml:10:" "allreduce-2.xml:2: " "ngpus=2" "4 accelerators"
}

t_schedule_coll() {
  fs run "$SCHED_FAB" --set workload.collective=allgather --out "$RES/sched-coll"
  expect_bad_input "$RES/sched-coll" "--set workload.collective" "allreduce-2.xml:2: " "coll 'allreduce' disagrees"
}

t_schedule_missing() {
  fs run "$SCHED_FAB" --set workload.schedule=schedules/nonexistent.xml --out "$RES/sched-missing"
  expect_bad_input "$RES/sched-missing" "--set workload.schedule" "nonexistent.xml' not found"
}

t_schedule_wrong_result() {
  fs run "$SCHED_FAB" --set workload.schedule=schedules/wrong-result.xml --quiet --out "$RES/sched-wrong"
  [[ $rc -eq 1 ]] || note "exit $rc, expected 1"
  grep -qF "rank 0 chunk 0 of its output" "$ERR" || { note "stderr does not name rank 0 chunk 0"; show_output; }
  grep -q ',false$' "$RES/sched-wrong/collectives.csv" || note "collectives.csv does not say correct=false"
}

t_schedule_deadlock() {
  fs run "$SCHED_FAB" --set workload.schedule=schedules/deadlock.xml --quiet --out "$RES/sched-dead"
  [[ $rc -eq 3 ]] || note "exit $rc, expected 3"
  grep -qF "deadlock" "$ERR" || note "stderr does not say deadlock"
  grep -qF "acc0 waits for schedule rank 0:" "$ERR" || note "stderr does not name acc0 / schedule rank 0"
  grep -qF "threadblock 0 step 0 (rrc): waits for message 0 from rank 1" "$ERR" ||
    note "stderr does not name rank 0's threadblock and step"
  grep -qF "threadblock 0 step 0 (rrc): waits for message 0 from rank 0" "$ERR" ||
    note "stderr does not name rank 1's threadblock and step"
  [[ ! -e $RES/sched-dead ]] || note "a deadlocked run wrote its output directory"
  ((bad == 0)) || show_output
}

# issue: the shipped 8-rank ring schedule on ring8 at 8 MiB lands within 1 % of
# the built-in ring algorithm (same fabric, same seed), with exact results.
t_schedule_ring_vs_builtin() {
  local tb ts
  fs run "$ROOT/topologies/ring8.yaml" --quiet --out "$RES/ring-builtin"
  [[ $rc -eq 0 ]] || { note "built-in ring: exit $rc"; show_output; return; }
  fs run "$ROOT/topologies/ring8.yaml" --set workload.algorithm=schedule \
    --set workload.schedule=schedules/ring-allreduce-8.xml --quiet --out "$RES/ring-sched"
  [[ $rc -eq 0 ]] || { note "ring schedule: exit $rc"; show_output; return; }
  tb=$(tail -1 "$RES/ring-builtin/collectives.csv" | cut -d, -f8)
  ts=$(tail -1 "$RES/ring-sched/collectives.csv" | cut -d, -f8)
  grep -q ',8388608,.*,true$' "$RES/ring-sched/collectives.csv" || note "schedule row not 8 MiB and correct"
  python3 -c "import sys; b, s = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if abs(s / b - 1) <= 0.01 else 1)" \
    "$tb" "$ts" || note "schedule $ts us vs built-in ring $tb us: more than 1 % apart"
}

# With a threadblock rate the GPU, not the link, limits: two channels (two
# threadblocks per rank) finish the ring in well under the time of one.
t_schedule_channels_matter() {
  local t1 t2
  fs run "$ROOT/topologies/ring8.yaml" --set workload.algorithm=schedule --set workload.schedule=schedules/ring-allreduce-8.xml \
    --set defaults.accelerator.threadblock_rate=20GB/s --quiet --out "$RES/tb1"
  t1=$(tail -1 "$RES/tb1/collectives.csv" | cut -d, -f8)
  fs run "$ROOT/topologies/ring8.yaml" --set workload.algorithm=schedule --set workload.schedule=schedules/ring-allreduce-8-c2.xml \
    --set defaults.accelerator.threadblock_rate=20GB/s --quiet --out "$RES/tb2"
  t2=$(tail -1 "$RES/tb2/collectives.csv" | cut -d, -f8)
  python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if b < 0.7 * a else 1)" "$t1" "$t2" ||
    note "one channel $t1 us, two channels $t2 us: two should be much faster under a threadblock rate"
}

# workload.schedule as a sweep axis; an edited schedule file re-runs its points (nothing stale).
t_schedule_sweep_axis() {
  local d="$TMP/sched-study" out="$RES/sched-sweep" m1 m2
  mkdir -p "$d/schedules"
  cp "$SCHED_DIR/allreduce-2.xml" "$SCHED_DIR/allreduce-2.yaml" "$d/schedules/"
  cp "$SCHED_FAB" "$d/fabric.yaml"
  cat >"$d/study.yaml" <<'YAML'
study:
  name: sched-axis
  fabric: fabric.yaml
  policies: [preface]
  seeds: {first: 1, count: 1}
  grid:
    workload.schedule: [schedules/allreduce-2.xml, schedules/allreduce-2.yaml]
YAML
  fs sweep "$d/study.yaml" --jobs 2 --out "$out"
  [[ $rc -eq 0 ]] || { note "sweep: exit $rc"; show_output; return; }
  [[ $(wc -l <"$out/results.csv") -eq 3 ]] || note "results.csv should have 2 rows"
  grep -q '^workload.schedule=schedules/allreduce-2.xml,' "$out/results.csv" || note "no row for the XML schedule"
  grep -q '^workload.schedule=schedules/allreduce-2.yaml,' "$out/results.csv" || note "no row for the YAML schedule"
  m1=$(mtimes "$out")
  sleep 1
  fs sweep "$d/study.yaml" --jobs 2 --out "$out"
  [[ $(mtimes "$out") == "$m1" ]] || note "an unchanged study re-ran points"
  sed -i 's/name: allreduce-2-yaml/name: allreduce-2-edited/' "$d/schedules/allreduce-2.yaml"
  fs sweep "$d/study.yaml" --jobs 2 --out "$out"
  [[ $rc -eq 0 ]] || { note "sweep after the edit: exit $rc"; show_output; return; }
  m2=$(mtimes "$out")
  [[ $(grep -c allreduce-2.xml <<<"$m2") -eq 1 && $(grep allreduce-2.xml <<<"$m1") == $(grep allreduce-2.xml <<<"$m2") ]] ||
    note "the XML point re-ran although its schedule did not change"
  [[ $(grep allreduce-2.yaml <<<"$m1" | cut -d' ' -f1) != $(grep allreduce-2.yaml <<<"$m2" | cut -d' ' -f1) ]] ||
    note "the YAML point was reused although its schedule file changed"
}

check "8-rank ring schedule on ring8 at 8 MiB within 1 % of the built-in ring, exact" t_schedule_ring_vs_builtin
t_schedule_trace() {
  fs run "$SCHED_FAB" --trace --quiet --out "$RES/sched-trace"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  python3 - "$RES/sched-trace/trace.json" <<'PY' || note "trace.json lacks the rank x threadblock tracks or their step spans"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name"}
procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
steps = [e for e in ev if e.get("ph") == "X" and e.get("cat", "").startswith("schedule")]
assert procs.get(100) == "schedule rank 0 (acc0)" and procs.get(101) == "schedule rank 1 (acc1)", procs
assert threads.get((100, 0)) == "threadblock 0 (send 1 recv 1 chan 0)", threads
assert len(steps) == 8, len(steps)  # 2 ranks x 1 threadblock x 4 steps
assert sum(1 for e in steps if "critical" in e["cat"]) >= 3
PY
}

check "workload.schedule as a sweep grid axis; an edited schedule re-runs its points" t_schedule_sweep_axis
# An explicit fabric (two accelerators behind a switch), ranks mapped by node id.
t_schedule_explicit_rank_map() {
  cat >"$FX/sched-explicit.yaml" <<YAML
fabric: {name: sched-explicit, kind: explicit}
nodes:
  - {id: gpuA, kind: accelerator}
  - {id: sw0, kind: ualink-switch}
  - {id: gpuB, kind: accelerator}
links:
  - {a: gpuA.0, b: sw0.0}
  - {a: gpuB.0, b: sw0.1}
workload:
  algorithm: schedule
  schedule: $SCHED_DIR/allreduce-2.xml
  rank_map: [gpuB, gpuA]
  size: 64KiB
YAML
  fs run "$FX/sched-explicit.yaml" --quiet --out "$RES/sched-explicit"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  grep -q ',true$' "$RES/sched-explicit/collectives.csv" || note "not correct on the explicit fabric"
  grep -q '^0,gpuB,' "$RES/sched-explicit/steps.csv" || note "schedule rank 0 did not run on gpuB"
  sed 's/rank_map: \[gpuB, gpuA\]/rank_map: [gpuB, 1]/' "$FX/sched-explicit.yaml" >"$FX/sched-dup.yaml"
  fs run "$FX/sched-dup.yaml" --out "$RES/sched-dup"
  expect_bad_input "$RES/sched-dup" "sched-dup.yaml:" "workload.rank_map" "listed twice"
}

check "schedule run --trace: one track per rank x threadblock, one span per step" t_schedule_trace
check "schedule on an explicit fabric with rank_map by node id; a rank listed twice is exit 2" t_schedule_explicit_rank_map
check "threadblock rate: a 2-channel ring schedule beats the 1-channel one" t_schedule_channels_matter
check "schedule (MSCCL XML and native YAML) runs, correct, steps.csv / threadblocks.csv / critical path" t_schedule_runs
check "bad schedules (malformed XML, unknown type / buffer / key, offset outside, unmatched send, count mismatch, cycle): exit 2, file:line" t_schedule_bad_files
check "schedule ngpus differs from the fabric's ranks: exit 2, both files" t_schedule_ngpus
check "schedule coll disagrees with workload.collective: exit 2" t_schedule_coll
check "missing schedule file: exit 2" t_schedule_missing
check "schedule that computes the wrong result: exit 1 naming rank and chunk" t_schedule_wrong_result
check "schedule that deadlocks: exit 3, diagnosis names rank, threadblock and step" t_schedule_deadlock

echo "$passed passed, $failed failed"
((failed == 0))
