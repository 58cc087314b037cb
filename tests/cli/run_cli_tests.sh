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

check() {  # check "description" function [args...]; CLI_ONLY=ERE runs only matching checks
  local desc=$1
  shift
  [[ -z ${CLI_ONLY:-} || $desc =~ $CLI_ONLY ]] || return 0
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
  run_in "$ROOT" run --out "$out" --set workload.size=64KiB
  [[ $rc -eq 0 ]] || { note "run (no fabric) from $ROOT: exit $rc"; show_output; return; }
  grep -q "ring8" "$OUT" || { note "stdout does not name the default fabric ring8"; show_output; }
  [[ -s $out/result.json ]] || note "$out/result.json missing"
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

# Global address map: check prints it (declared base kept, the others in rank
# order, 4 KiB aligned); overlapping or misaligned addresses are exit 2 at the
# node's address key; a tlm-initiator passes check and is a clear exit 2 for run.
t_address_map() {
  write_tiny amap.yaml 's/{id: acc1, kind: accelerator}/{id: acc1, kind: accelerator, address: 0x40000000}/'
  fs check "$FX/amap.yaml" --dot "$RES/amap.dot"
  [[ $rc -eq 0 ]] || { note "check: exit $rc"; show_output; return; }
  grep -q "global address map (name, base, size):" "$OUT" || { note "check prints no address map"; show_output; }
  grep -Eq "^  acc1 +0x000040000000  " "$OUT" || { note "acc1 not at its declared 0x40000000"; show_output; }
  grep -Eq "^  acc0 +0x000000000000  " "$OUT" || { note "acc0 not assigned at 0"; show_output; }
  grep -Eq "^  acc2 +0x0000000[0-9a-f]{2}000  " "$OUT" || { note "acc2 not assigned after acc0, 4 KiB aligned"; show_output; }
  write_tiny aover.yaml 's/{id: acc1, kind: accelerator}/{id: acc1, kind: accelerator, address: 0x0}/; s/{id: acc0, kind: accelerator}/{id: acc0, kind: accelerator, address: 0x1000}/'
  fs check "$FX/aover.yaml" --dot "$RES/aover.dot"
  expect_bad_input "$RES/aover.dot" "aover.yaml:6:" "nodes[1].address" "overlaps the memory of acc0"
  write_tiny amis.yaml 's/{id: acc1, kind: accelerator}/{id: acc1, kind: accelerator, address: 0x1234}/'
  fs run "$FX/amis.yaml" --out "$RES/amis"
  expect_bad_input "$RES/amis" "amis.yaml:6:" "nodes[1].address" "not aligned"
  write_tiny ainit.yaml 's/  - {id: acc2, kind: accelerator}/  - {id: acc2, kind: accelerator}\n  - {id: cpu0, kind: tlm-initiator}/; s/  - {a: acc2.0, b: sw0.2}/  - {a: acc2.0, b: sw0.2}\n  - {a: cpu0.0, b: sw0.3}/'
  fs check "$FX/ainit.yaml" --dot "$RES/ainit.dot"
  [[ $rc -eq 0 ]] || { note "check with a tlm-initiator: exit $rc"; show_output; return; }
  grep -q "tlm-initiators (target socket bound by user code): cpu0" "$OUT" || { note "check does not list cpu0"; show_output; }
  fs run "$FX/ainit.yaml" --out "$RES/ainit"
  expect_bad_input "$RES/ainit" "ainit.yaml:" "nodes[4].id" "tlm-initiator"
}

t_dangling() {
  write_tiny dangling.yaml 's/b: sw0.2/b: sw9.2/'
  fs run "$FX/dangling.yaml" --out "$RES/dangling"
  expect_bad_input "$RES/dangling" "dangling.yaml:12:" "links[2].b" "dangling reference"
}

t_one_accelerator() {
  # one accelerator left (the others made switches): named at nodes, with its line
  write_tiny one.yaml 's/{id: acc1, kind: accelerator}/{id: acc1, kind: ualink-switch}/; s/{id: acc2, kind: accelerator}/{id: acc2, kind: ualink-switch}/'
  fs run "$FX/one.yaml" --out "$RES/one"
  expect_bad_input "$RES/one" "one.yaml:5:" "'nodes'" "lists 1 accelerator; a collective needs at least 2"
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


# ------------------------------------------- outputs a user can trust ---
# Issue 8: resume rule, stale tables, run identity, output folders, command
# line surprises, axes in results.csv, Ctrl-C.

# lad_study NAME: a PCIe decode study whose points pick transports from a
# ladder file; fabric, ladders and study copied under $FX/NAME/.
lad_study() {
  local d="$FX/$1"
  mkdir -p "$d/ladders"
  cp "$ROOT/topologies/frank2.yaml" "$d/"
  cp "$ROOT"/topologies/ladders/*.yaml "$d/ladders/"
  cat >"$d/study.yaml" <<'YAML'
study:
  name: cli-ladder
  fabric: frank2.yaml
  seeds: {first: 1, count: 2}
  columns: [group, selection, picks, seed, ops, mean_us]
  metrics: [ops, mean_us]
  set: {workload.mode: decode, decode.selection: ladder, workload.duration: 20ms}
YAML
}

t_resume_ladder_changed() {
  local d="$FX/lad1" out="$RES/lad1"
  lad_study lad1
  fs sweep "$d/study.yaml" --jobs 2 --out "$out"
  [[ $rc -eq 0 ]] || { note "first sweep: exit $rc"; show_output; return; }
  grep -q '81920B=full_phased' "$out/results.csv" || { note "the ladder's 80 KiB pick full_phased is not in results.csv"; return; }
  sed -i 's/{max: 110KiB,  transport: full_phased}/{max: 110KiB,  transport: full}/' "$d/ladders/frank2-quadrant-crossing.yaml"
  fs sweep "$d/study.yaml" --jobs 2 --out "$out"
  [[ $rc -eq 0 ]] || { note "resumed sweep after editing the ladder: exit $rc"; show_output; return; }
  grep -q '81920B=full,' "$out/results.csv" || note "results.csv still holds the old ladder's pick: $(sed -n 2p "$out/results.csv")"
  grep -qF "0 reused, 2 to run (2 $d/ladders/frank2-quadrant-crossing.yaml changed)" "$OUT" ||
    { note "the sweep does not say that the ladder's change reruns both points"; show_output; }
}

t_resume_rejects_edited_and_foreign_results() {
  # SW1 is the finished small sweep: a hand-edited goodput, and a result.json
  # stamped as finished but made by another build, are both rerun.
  local a="$SW1/points/preface/s11" b="$SW1/points/fixed-strong/s12"
  [[ -s $a/result.json && -s $b/result.json ]] || { note "no finished sweep in $SW1"; return; }
  cp -- "$SW1/results.csv" "$TMP/ok.csv"
  python3 - "$a/result.json" "$b/result.json" <<'PY' || { note "cannot edit the point results"; return; }
import json, sys, hashlib
a, b = sys.argv[1:3]
j = json.load(open(a)); j["row"]["goodput_gbps"] = 999.0
open(a, "w").write(json.dumps(j, indent=2) + "\n")
j = json.load(open(b))
if "run" in j: j["run"]["program"]["build_id"] = "0" * 40
j["row"]["goodput_gbps"] = 998.0
text = json.dumps(j, indent=2) + "\n"
open(b, "w").write(text)
def fnv(data):
    h = 14695981039346656037  # FNV-1a 64 offset basis
    for c in data:
        h = ((h ^ c) * 1099511628211) % (1 << 64)
    return h
args = open(b.replace("result.json", "args.txt"), "rb").read()
open(b.replace("result.json", "result.stamp"), "w").write("fnv1a64 %016x\nargs %016x\n" % (fnv(text.encode()), fnv(args)))
PY
  fs sweep "$SWEEP_STUDY" --jobs 2 --out "$SW1"
  [[ $rc -eq 0 ]] || { note "resumed sweep: exit $rc"; show_output; return; }
  cmp -s -- "$TMP/ok.csv" "$SW1/results.csv" || note "results.csv took an edited or foreign result: $(grep -E '99[89]\.0' "$SW1/results.csv")"
  grep -qF "6 points, 4 reused, 2 to run" "$OUT" || { note "expected 4 reused, 2 to run"; show_output; }
  grep -qF "result.json was modified after the run" "$OUT" || note "no reason given for the edited point"
  grep -qF "made by another build of fabricsim" "$OUT" || note "no reason given for the foreign point"
  # A finished point's result and stamp copied over another point's: that
  # point is rerun (the stamp names the arguments of the point that wrote it).
  cp -- "$SW1/results.csv" "$TMP/ok.csv"
  cp -- "$SW1/points/preface/s11/result.json" "$SW1/points/preface/s11/result.stamp" "$SW1/points/preface/s12/"
  fs sweep "$SWEEP_STUDY" --jobs 2 --out "$SW1"
  [[ $rc -eq 0 ]] || { note "resumed sweep after the copy: exit $rc"; show_output; return; }
  grep -qF "6 points, 5 reused, 1 to run" "$OUT" || { note "expected 5 reused, 1 to run after the copy"; show_output; }
  grep -qF "made by another point" "$OUT" || note "no reason given for the copied point"
  cmp -s -- "$TMP/ok.csv" "$SW1/results.csv" || note "results.csv took the copied result"
}

t_sweep_fresh() {
  local before after
  [[ -s $SW1/results.csv ]] || { note "no finished sweep in $SW1"; return; }
  before=$(mtimes "$SW1")
  sleep 1
  fs sweep "$SWEEP_STUDY" --jobs 2 --out "$SW1" --fresh
  [[ $rc -eq 0 ]] || { note "sweep --fresh: exit $rc"; show_output; return; }
  after=$(mtimes "$SW1")
  local same
  same=$(comm -12 <(sort <<<"$before") <(sort <<<"$after") | wc -l)
  [[ $same -eq 0 ]] || note "--fresh left $same point result.json files untouched"
  grep -qF "6 points, 0 reused, 6 to run (6 --fresh)" "$OUT" || { note "--fresh does not say so"; show_output; }
  cmp -s -- "$TMP/prev.csv" "$SW1/results.csv" || note "results.csv differs after --fresh"
}

t_failed_sweep_leaves_no_tables() {
  local out="$RES/failsweep"
  fs sweep "$SWEEP_STUDY" --jobs 2 --out "$out"
  [[ $rc -eq 0 && -s $out/results.csv ]] || { note "first sweep: exit $rc"; show_output; return; }
  # Make one point fail on the rerun: its result.json.tmp cannot be created.
  rm -f -- "$out/points/preface/s13/result.json"
  mkdir -p "$out/points/preface/s13/result.json.tmp/blocker"
  fs sweep "$SWEEP_STUDY" --jobs 2 --out "$out"
  [[ $rc -eq 3 ]] || note "sweep with a failing point: exit $rc, expected 3"
  [[ ! -e $out/results.csv && ! -e $out/summary.json ]] ||
    note "a failed sweep left results.csv / summary.json: $(ls "$out")"
  rm -rf -- "$out/points/preface/s13/result.json.tmp"
}

t_run_out_identity() {
  local out="$RES/ident" f="$ROOT/topologies/ring8.yaml"
  fs run "$f" --set workload.size=64KiB --seed 4 --trace --quiet --out "$out"
  [[ $rc -eq 0 ]] || { note "run 1: exit $rc"; show_output; return; }
  [[ -s $out/trace.json ]] || { note "run 1 wrote no trace.json"; return; }
  fs run "$f" --set workload.size=128KiB --seed 5 --quiet --out "$out"
  [[ $rc -eq 0 ]] || { note "run 2: exit $rc"; show_output; return; }
  [[ ! -e $out/trace.json ]] || note "the first run's trace.json is still beside the second run's outputs"
  local why
  why=$(python3 - "$out" <<'PY' 2>&1
import csv, json, sys
d = sys.argv[1]
r = json.load(open(d + "/result.json"))["run"]
assert r["seed"] == 5 and len(r["config_hash"]) == 16, r
assert r["id"] == "seed5-config" + r["config_hash"], r
assert r["program"]["name"] == "fabricsim" and r["program"]["build_id"], r
for name in ("collectives.csv", "links.csv"):
    rows = list(csv.DictReader(open(d + "/" + name)))
    assert rows and all(x["run_id"] == r["id"] for x in rows), (name, rows[:1])
PY
  ) || note "identity: $why"
  fs run "$f" --set workload.size=64KiB --seed 4 --trace --quiet --out "$out"
  python3 - "$out" <<'PY' || note "trace.json does not carry the run's identity"
import json, sys
d = sys.argv[1]
assert json.load(open(d + "/trace.json"))["otherData"]["run"]["id"] == json.load(open(d + "/result.json"))["run"]["id"]
PY
}

t_run_out_unwritable() {
  : >"$RES/plainfile"
  fs run "$TOPO" --set traffic.flits=$FLITS --out "$RES/plainfile/sub"
  expect_bad_input "$RES/plainfile/sub" "--out" "$RES/plainfile/sub"
  [[ ! -s $OUT ]] || note "something was simulated before the unwritable --out was found: $(head -c 200 "$OUT")"
}

t_run_output_is_a_folder() {
  # An output file's name taken by a folder: exit 2 before simulating, nothing written, the folder kept.
  mkdir -p "$RES/outdir/trace.json/keep"
  fs run "$ROOT/topologies/ring8.yaml" --set workload.size=64KiB --trace --out "$RES/outdir"
  [[ $rc -eq 2 ]] || note "exit $rc, expected 2"
  grep -qF "'trace.json' there is not a file" "$ERR" || note "stderr: $(head -c 300 "$ERR")"
  [[ ! -s $OUT ]] || note "something was simulated: $(head -c 200 "$OUT")"
  [[ -d $RES/outdir/trace.json/keep ]] || note "the folder named trace.json was removed"
  [[ ! -e $RES/outdir/result.json && ! -e $RES/outdir/collectives.csv ]] || note "outputs were written"
}

t_check_dot_dir() {
  write_tiny dotdir.yaml
  mkdir -p "$RES/dotdir"
  fs check "$FX/dotdir.yaml" --dot "$RES/dotdir"
  [[ $rc -eq 0 ]] || { note "check --dot DIR: exit $rc"; show_output; }
  [[ ! -e $RES/dotdir.tmp ]] || note "check --dot DIR left DIR.tmp"
  [[ -s $RES/dotdir/tiny.dot ]] || note "check --dot DIR did not write DIR/tiny.dot"
  # --dot DIR/ (a folder that does not exist yet) is a folder: created, DIR/tiny.dot written.
  fs check "$FX/dotdir.yaml" --dot "$RES/newdot/sub/"
  [[ $rc -eq 0 && -s $RES/newdot/sub/tiny.dot ]] || note "check --dot NEWDIR/: exit $rc, no NEWDIR/tiny.dot"
  # A default DOT path that cannot be written (out is a file) says why and does not blame --dot.
  touch "$WORK/out"
  (cd "$WORK" && exec "$BIN" check "$ROOT/topologies/ring8.yaml") >"$OUT" 2>"$ERR"
  rc=$?
  [[ $rc -eq 2 ]] || note "a default DOT path under a file named out: exit $rc"
  grep -qF "error: the DOT file: cannot create the folder out: Not a directory" "$ERR" ||
    note "no reason, or --dot blamed: $(head -c 300 "$ERR")"
  rm -rf -- "${WORK:?}/out"
  # A fabric name of 300 bytes (the DOT file's name) or with a control character: bad input.
  fs check "$ROOT/topologies/ring8.yaml" --set "fabric.name=$(printf 'x%.0s' {1..300})" --dot "$RES/longname/"
  expect_bad_input "$RES/longname" "--set fabric.name: a name of 1 to 100 bytes with no control character" "got 300 bytes"
  fs check "$ROOT/topologies/ring8.yaml" --set "fabric.name=a$(printf '\x01')b" --dot "$RES/ctlname/"
  expect_bad_input "$RES/ctlname" "--set fabric.name:" "with a control character"
}

t_set_before_fabric() {
  local out="$RES/setfirst"
  fs run --set traffic.flits=1500 "$TOPO" --quiet --out "$out"
  [[ $rc -eq 0 ]] || { note "run --set k=v FABRIC: exit $rc"; show_output; return; }
  grep -q '"delivered_flits": 1500' "$out/result.json" || note "the --set before the fabric was not applied"
}

t_seed_policy_conflicts() {
  fs run "$TOPO" --set traffic.flits=$FLITS --seed 3 --set run.seed=4 --out "$RES/c1"
  expect_bad_input "$RES/c1" "--seed" "--set run.seed"
  fs run "$TOPO" --set traffic.flits=$FLITS --set link.policy.name=preface --policy fixed-strong --out "$RES/c2"
  expect_bad_input "$RES/c2" "--policy" "link.policy.name"
}

t_study_sets_seed() {
  local s="$FX/study-seed.yaml" line
  cat >"$s" <<YAML
study:
  name: cli-study-seed
  fabric: $TOPO
  policies: [preface]
  seeds: {first: 1, count: 1}
  set:
    traffic.flits: 500
    run.seed: 5
YAML
  line=$(grep -n '^  set:' "$s" | cut -d: -f1)
  fs sweep "$s" --out "$RES/sseed"
  expect_bad_input "$RES/sseed" "$s:" "study.set" "run.seed" "seeds"
}

# A bad value in a study's set names the study file's line of that entry;
# a scalar over the map holding the policy key is refused up front.
t_study_set_lines() {
  local s="$FX/study-setline.yaml"
  cat >"$s" <<YAML
study:
  name: cli-study-setline
  fabric: $TOPO
  policies: [preface]
  seeds: {first: 1, count: 1}
  set:
    traffic.flits: 500
    link.propagation: 5parsecs
YAML
  fs sweep "$s" --out "$RES/ssetline"
  expect_bad_input "$RES/ssetline" "$s:8:5: study.set: key 'link.propagation'" "parsecs"
  cat >"$s" <<YAML
study:
  name: cli-study-setline
  fabric: $TOPO
  seeds: {first: 1, count: 1}
  grid:
    link.policy: [preface, fixed-strong]
YAML
  fs sweep "$s" --out "$RES/ssetline"
  expect_bad_input "$RES/ssetline" "$s:6:" "study.grid" "'link.policy' would replace the map that holds link.policy.name" "policies: [...]"
  cat >"$s" <<YAML
study:
  name: cli-study-setline
  fabric: $TOPO
  policies: [preface]
  seeds: {first: 1, count: 1}
  variants:
    - name: near
      set: {traffic.flits: 500}
    - name: far
      set:
        traffic.flits: 500
        link.propagation: -3ns
YAML
  fs sweep "$s" --out "$RES/ssetline"
  expect_bad_input "$RES/ssetline" "$s:12:9: study.variants[far].set: key 'link.propagation'"
}

# Found by a new-user pass: empty option values, duplicate columns, empty
# lists and unknown commands are bad input (exit 2, one line, nothing written).
t_empty_and_duplicate_inputs() {
  local s="$FX/study-dup.yaml"
  dup_head() { printf 'study:\n  name: cli-study-dup\n  fabric: %s\n  policies: [preface]\n  seeds: {first: 1, count: 1}\n' "$TOPO"; }
  # bad_study BODY PATTERN...: the head and BODY (printf %b escapes) are bad input naming every PATTERN
  bad_study() {
    local body=$1
    shift
    { dup_head; printf '%b\n' "$body"; } >"$s"
    fs sweep "$s" --out "$RES/sdup"
    expect_bad_input "$RES/sdup" "$@"
  }
  fs sweep "$SWEEP_STUDY" --shard "" --out "$RES/shempty"
  expect_bad_input "$RES/shempty" "--shard" "empty value"
  fs sweep "$SWEEP_STUDY" --out ""
  expect_bad_input "$RES/shempty" "--out" "empty value"
  bad_study '  columns: [policy, seed, goodput_gbps, goodput_gbps]' "$s:6:" "study.columns" "'goodput_gbps' is listed twice"
  bad_study '  variants: []' "$s:6:" "study.variants" "the list is empty"
  fs runn --help
  expect_bad_input "$RES/sdup" "unknown command 'runn'"
  fs run "$TOPO" --seed "" --out "$RES/sdup"
  expect_bad_input "$RES/sdup" "--seed" "empty value"
  bad_study '  metrics: []' "$s:6:" "study.metrics" "the list is empty"
  bad_study '  columns: []' "$s:6:" "study.columns" "the list is empty"
  bad_study '  set: {traffic.flits: 500}\n  grid: {traffic.flits: [400, 600]}' "study.grid" \
    "'traffic.flits' is also in study.set (line 6)"
  # A grid key that a variant also sets; more points than a plan can hold
  # (refused before any is made: 2 x 100000 seeds x 8 values).
  bad_study '  grid: {traffic.flits: [400, 600]}\n  variants:\n    - {name: v1, set: {traffic.flits: 500}}' "$s:6:" "study.grid" "'traffic.flits' is also set by variant 'v1' (line 8)"
  # the same in map form; a map that holds other keys only is no conflict
  bad_study '  grid: {traffic.flits: [400, 600]}\n  variants:\n    - {name: v1, set: {traffic: {flits: 5}}}' "$s:6:" "study.grid" "'traffic.flits' is also set by variant 'v1' (line 8)"
  { dup_head; printf '  set: {traffic: {period: 10ns}}\n  grid: {traffic.flits: [400, 600]}\n'; } >"$s"
  fs sweep "$s" --collect --out "$RES/sdup"
  [[ $rc -eq 3 ]] || { note "a set of traffic.period beside a grid of traffic.flits: exit $rc, expected 3 (points missing)"; show_output; }
  # a grid takes single values (a list-valued setting goes into variants)
  bad_study '  grid: {link.fec_profiles: [[], []]}' "$s:6:" "study.grid" "item 0 (line 6) is a list, not a single value"
  bad_study '  grid: {traffic.flits: [400, ~]}' "$s:6:" "study.grid" "item 1 (line 6) has no value"
  cat >"$s" <<YAML
study:
  name: cli-study-dup
  fabric: $TOPO
  policies: [preface, fixed-strong]
  seeds: {first: 1, count: 100000}
  grid: {traffic.flits: [100, 200, 300, 400, 500, 600, 700, 800]}
YAML
  fs sweep "$s" --collect --out "$RES/sdup"
  expect_bad_input "$RES/sdup" "$s:6:" "study.grid" "more than 1000000 points"
}

t_set_list_element() {
  write_tiny lst.yaml
  fs check "$FX/lst.yaml" --set 'links[2].b=sw9.2' --dot "$RES/lst.dot"
  expect_bad_input "$RES/lst.dot" "--set links[2].b" "dangling reference"
  fs check "$FX/lst.yaml" --set 'links[3].b=sw0.3' --dot "$RES/lst.dot"
  expect_bad_input "$RES/lst.dot" "--set links[3].b" "past the end"
  local e
  for e in 'sw0. 2' 'sw0.+2' 'sw0.65536'; do  # the port: digits only, 0..65535
    fs check "$FX/lst.yaml" --set "links[2].b=$e" --dot "$RES/lst.dot"
    expect_bad_input "$RES/lst.dot" "--set links[2].b" "is not NODE.PORT" "port 0..65535"
  done
  fs check "$FX/lst.yaml" --set 'links[2].b=sw0.7' --dot "$RES/lst.dot"
  [[ $rc -eq 0 ]] || { note "check --set links[2].b=sw0.7: exit $rc"; show_output; return; }
  grep -qF -- '3--2 [label="0-7"]' "$RES/lst.dot" || note "DOT does not show acc2 on sw0 port 7: $(grep -- -- "$RES/lst.dot" | tr '\n' ' ')"
}

t_study_name_escape() {
  local s="$FX/study-escape.yaml"
  cat >"$s" <<YAML
study:
  name: ../../..
  fabric: $TOPO
  policies: [preface]
  seeds: {first: 1, count: 1}
  set: {traffic.flits: 500}
YAML
  (cd "$WORK" && mkdir -p a/b && cd a/b && exec timeout "$TMO" "$BIN" sweep "$s") >"$OUT" 2>"$ERR"
  rc=$?
  rm -rf -- "${WORK:?}/a"
  expect_bad_input "$WORK/points" "study.name" "../../.."
  [[ ! -e $WORK/points && ! -e $TMP/points ]] || note "the sweep wrote outside out/"
  # An empty or blank name would write straight into out/.
  local n
  for n in '""' '"   "' '" x"'; do
    sed "s|name: \.\./\.\./\.\.|name: $n|" "$s" >"$FX/study-blank.yaml"
    (cd "$WORK" && exec timeout "$TMO" "$BIN" sweep "$FX/study-blank.yaml") >"$OUT" 2>"$ERR"
    rc=$?
    expect_bad_input "$WORK/out/points" "study-blank.yaml:2:" "study.name" "plain folder name"
  done
}

t_explicit_columns_keep_axis() {
  local s="$FX/study-axis.yaml" out="$RES/axis"
  cat >"$s" <<YAML
study:
  name: cli-axis
  fabric: $TOPO
  policies: [preface]
  seeds: {first: 1, count: 2}
  columns: [policy, seed, goodput_gbps]
  metrics: [goodput_gbps]
  set: {traffic.flits: 800}
  grid:
    link.channel.error_bad: [0.3, 0.6]
YAML
  fs sweep "$s" --jobs 2 --out "$out"
  [[ $rc -eq 0 ]] || { note "sweep: exit $rc"; show_output; return; }
  [[ $(head -n 1 "$out/results.csv") == "variant,policy,seed,goodput_gbps" ]] ||
    note "results.csv header is '$(head -n 1 "$out/results.csv")', expected the variant column first"
  [[ $(cut -d, -f1-3 "$out/results.csv" | sort -u | wc -l) -eq 5 ]] || note "rows cannot be told apart: $(cat "$out/results.csv")"
  # A fabric study can list what ran and whether it was right.
  cat >"$s" <<YAML
study:
  name: cli-fabric-row
  fabric: $ROOT/topologies/ring8.yaml
  policies: [preface]
  seeds: {first: 1, count: 1}
  columns: [collective, algorithm, correct, policy, seed, time_us]
  metrics: [time_us]
  set: {workload.size: 64KiB}
YAML
  fs sweep "$s" --out "$RES/frow"
  [[ $rc -eq 0 ]] || { note "fabric study listing collective, algorithm, correct: exit $rc"; show_output; return; }
  grep -q '^allreduce,ring,true,preface,1,' "$RES/frow/results.csv" || note "fabric row: $(cat "$RES/frow/results.csv")"
}

# interrupt CMD...: start fabricsim in its own process group with SIGINT at
# its default (as from a terminal), wait until WAIT_FOR (a glob) exists or
# WAIT_GONE (a file) is gone, then send SIGINT to the whole group (Ctrl-C),
# or with TO_PARENT=1 to fabricsim alone (kill -INT PID); sets rc.
interrupt() {
  WAIT_FOR=${WAIT_FOR:-} WAIT_GONE=${WAIT_GONE:-} TO_PARENT=${TO_PARENT:-} MID_NEXT=${MID_NEXT:-} python3 - "$BIN" "$@" >"$OUT" 2>"$ERR" <<'PY'
import glob, os, signal, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], start_new_session=True,
                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
                     stdout=sys.stdout, stderr=sys.stderr)
w, g, t0 = os.environ.get("WAIT_FOR"), os.environ.get("WAIT_GONE"), time.time()
while time.time() - t0 < 60 and p.poll() is None:
    if (w and glob.glob(w)) or (g and not os.path.exists(g)):
        # MID_NEXT: the condition marks the end of one sweep point; wait half
        # as long again, so the next point is past its start-up (signal
        # handlers installed) on a fast build and under the sanitizers alike.
        time.sleep((time.time() - t0) / 2 if os.environ.get("MID_NEXT") else 0.05)
        break
    time.sleep(0.01)
if p.poll() is None:
    if os.environ.get("TO_PARENT"): os.kill(p.pid, signal.SIGINT)
    else: os.killpg(p.pid, signal.SIGINT)
try:
    sys.exit(p.wait(timeout=60))
except subprocess.TimeoutExpired:
    os.killpg(p.pid, signal.SIGKILL)
    sys.exit(124)
PY
  rc=$?
}

t_interrupt_sweep() {
  local s="$FX/study-long.yaml" out="$RES/intr"
  cat >"$s" <<YAML
study:
  name: cli-interrupt
  fabric: $TOPO
  policies: [fixed-strong, preface]
  seeds: {first: 1, count: 10}
  set: {traffic.flits: 3000000}
YAML
  MID_NEXT=1 WAIT_FOR="$out/points/*/s*/result.stamp" interrupt sweep "$s" --jobs 1 --out "$out"
  [[ $rc -eq 130 ]] || note "interrupted sweep: exit $rc, expected 130"
  [[ $(wc -l <"$ERR") -eq 1 ]] || note "stderr has $(wc -l <"$ERR") lines, expected 1"
  grep -q '^interrupted (SIGINT): sweep cli-interrupt stopped' "$ERR" || note "no 'interrupted' line"
  grep -q 'kept' "$ERR" || note "the line does not say what was kept"
  [[ ! -e $out/results.csv ]] || note "an interrupted sweep wrote results.csv"
  [[ -z $(find "$out" -name '*.tmp') ]] || note "half-written files: $(find "$out" -name '*.tmp')"
  # The running point was stopped, not waited for.
  grep -lq '^interrupted (SIGINT): run of' "$out"/points/*/s*/run.log || note "no running point was interrupted"
  ((bad == 0)) || { show_output; return; }
  # Signalling the sweep alone (kill -INT PID) stops its running point too.
  # (In the middle of the second point, as above: a point signalled before its
  # handler is installed, e.g. under the sanitizers on a loaded machine, dies
  # without the line.)
  TO_PARENT=1 MID_NEXT=1 WAIT_FOR="$out-p/points/*/s*/result.stamp" interrupt sweep "$s" --jobs 1 --out "$out-p"
  [[ $rc -eq 130 ]] || note "sweep interrupted by kill -INT: exit $rc, expected 130"
  grep -lq '^interrupted (SIGINT): run of' "$out-p"/points/*/s*/run.log || note "kill -INT of the sweep did not reach its running point"
  ((bad == 0)) || { show_output; return; }
  fs sweep "$s" --jobs 2 --out "$out"
  [[ $rc -eq 0 ]] || { note "rerun after the interrupt: exit $rc"; show_output; return; }
  grep -qE '20 points, [1-9][0-9]* reused' "$OUT" || { note "the rerun did not resume"; show_output; }
  [[ $(wc -l <"$out/results.csv") -eq 21 ]] || note "results.csv after the resume has $(wc -l <"$out/results.csv") lines"
}

t_interrupt_run() {
  local out="$RES/intr-run"
  fs run "$TOPO" --set traffic.flits=1000 --quiet --out "$out"   # a previous run's outputs
  # Interrupted once the run has cleared the folder (it then simulates for seconds).
  WAIT_GONE="$out/result.json" interrupt run "$TOPO" --set traffic.flits=50000000 --quiet --out "$out"
  [[ $rc -eq 130 ]] || note "interrupted run: exit $rc, expected 130"
  [[ $(wc -l <"$ERR") -eq 1 ]] || note "stderr has $(wc -l <"$ERR") lines, expected 1"
  grep -q '^interrupted (SIGINT): run of .* nothing written' "$ERR" || note "no 'interrupted' line saying what was kept"
  [[ ! -e $out/result.json ]] || note "the previous run's result.json is still in $out"
  [[ -z $(find "$out" -name '*.tmp') ]] || note "half-written files: $(find "$out" -name '*.tmp')"
  # A folder the run created is removed again.
  WAIT_FOR="$RES/intr-run-new/x" interrupt run "$TOPO" --set traffic.flits=50000000 --quiet --out "$RES/intr-run-new/x"
  [[ $rc -eq 130 ]] || note "interrupted run with a new --out: exit $rc, expected 130"
  [[ ! -e $RES/intr-run-new ]] || note "the interrupted run left the --out folders it created"
  ((bad == 0)) || show_output
}

# --------------------------------------------------- sweeps on a cluster ---
# Issue 12: mpirun and batch-array shares give the tables of a local sweep.

t_mpi_sweep() {
  local out="$RES/mpi"
  # A point's `fabricsim run` started by a worker rank inherits the MPI
  # environment (and the sweep's marker: its parent's pid) and must still explain bad input in
  # its run.log.
  (cd "$WORK" && OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=3 FABRICSIM_SWEEP_POINT=$$ exec "$BIN" run "$TOPO" --set link.bogus=1 --out "$RES/mpi-bad") >"$OUT" 2>"$ERR"
  rc=$?
  expect_bad_input "$RES/mpi-bad" "--set link.bogus"
  # `mpirun -np 3 fabricsim run` itself would run one simulation three
  # times: rank 0 refuses it (exit 2, nothing written), the others silently.
  (cd "$WORK" && OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=3 exec "$BIN" run "$TOPO" --out "$RES/mpi-run") >"$OUT" 2>"$ERR"
  rc=$?
  expect_bad_input "$RES/mpi-run" "mpirun started it on 3 ranks" "fabricsim sweep"
  (cd "$WORK" && OMPI_COMM_WORLD_RANK=2 OMPI_COMM_WORLD_SIZE=3 exec "$BIN" run "$TOPO" --out "$RES/mpi-run") >"$OUT" 2>"$ERR"
  rc=$?
  [[ $rc -eq 2 && ! -s $ERR && ! -e $RES/mpi-run ]] || { note "rank 2 of a run under mpirun: exit $rc, stderr $(wc -c <"$ERR") bytes"; show_output; }
  if ! command -v mpirun >/dev/null; then echo "# skip: mpirun not installed"; return; fi
  [[ -s $SW2/results.csv ]] || { note "no local sweep in $SW2"; return; }
  # Under the sanitizer build, OpenMPI's own start-up allocations (MCA
  # components it unloads before exit) show as leaks: leak checks off for
  # the MPI ranks only (ASAN_OPTIONS adds to the binary's built-in options).
  (cd "$WORK" && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" exec timeout "$TMO" mpirun -np 3 --oversubscribe "$BIN" sweep "$SWEEP_STUDY" --out "$out") >"$OUT" 2>"$ERR"
  rc=$?
  [[ $rc -eq 0 ]] || { note "mpirun -np 3 sweep: exit $rc"; show_output; return; }
  grep -qF "over 2 MPI ranks" "$OUT" || { note "the sweep did not run over 2 worker ranks"; show_output; }
  grep -qE "points run per MPI rank 1\.\.2: [0-9]+, [0-9]+" "$OUT" || { note "no per-rank count"; show_output; }
  local x
  for x in results.csv summary.json; do
    cmp -s -- "$SW2/$x" "$out/$x" || note "$x under mpirun differs from the local sweep: $(cmp -- "$SW2/$x" "$out/$x" 2>&1)"
  done
  [[ $(grep -c "^sweep cli-small-sweep: 6 points" "$OUT") -eq 1 ]] || note "more than one rank printed the sweep line"
}

t_shards_collect() {
  local out="$RES/shards" i x
  [[ -s $SW2/results.csv ]] || { note "no local sweep in $SW2"; return; }
  fs sweep "$SWEEP_STUDY" --shard 1/3 --out "$out"
  [[ $rc -eq 0 ]] || { note "--shard 1/3: exit $rc"; show_output; return; }
  [[ ! -e $out/results.csv ]] || note "a share wrote results.csv"
  fs sweep "$SWEEP_STUDY" --collect --out "$out"
  [[ $rc -eq 3 ]] || note "--collect with shares 2 and 3 missing: exit $rc, expected 3"
  grep -qF "4 of 6 points are missing or stale" "$ERR" || { note "--collect does not say what is missing"; show_output; }
  [[ ! -e $out/results.csv ]] || note "--collect wrote results.csv with shares missing"
  for i in 2 3; do
    fs sweep "$SWEEP_STUDY" --shard $i/3 --jobs 1 --out "$out"
    [[ $rc -eq 0 ]] || { note "--shard $i/3: exit $rc"; show_output; return; }
  done
  fs sweep "$SWEEP_STUDY" --collect --out "$out"
  [[ $rc -eq 0 ]] || { note "--collect: exit $rc"; show_output; return; }
  for x in results.csv summary.json; do
    cmp -s -- "$SW2/$x" "$out/$x" || note "$x from shares differs from the local sweep: $(cmp -- "$SW2/$x" "$out/$x" 2>&1)"
  done
  # A stale share (its ladder, fabric or program changed, or a result edited) is refused.
  echo " " >>"$out/points/preface/s12/result.json"
  fs sweep "$SWEEP_STUDY" --collect --out "$out"
  [[ $rc -eq 3 ]] || note "--collect with an edited point: exit $rc, expected 3"
  grep -qF "1 result.json was modified" "$ERR" || { note "--collect does not name the stale point"; show_output; }
  [[ ! -e $out/results.csv ]] || note "--collect left results.csv beside a stale point"
  fs sweep "$SWEEP_STUDY" --shard 4/3 --out "$out"
  expect_bad_input "$RES/nonexistent" "--shard '4/3'"
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
check "global address map: check prints it; overlap / misalignment / unbound tlm-initiator are exit 2" t_address_map
check "explicit fabric, dangling link endpoint: exit 2, file:line, links[2].b" t_dangling
check "explicit fabric with one accelerator: exit 2 at nodes, file:line" t_one_accelerator
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
  # a quadrant twice in the order: named there, not on the stagger
  fs run "$FRANK" --set 'mechanisms.read_stall.order=[0,0,1,2]' --out "$RES/win"
  expect_bad_input "$RES/win" "--set mechanisms.read_stall.order" "quadrant 0 is listed twice"
  fs run "$FRANK" --set fabric.link.tlp_overhead=1MiB --out "$RES/win"
  expect_bad_input "$RES/win" "--set fabric.link.tlp_overhead" "0..128 B"
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
# Global address map of a PCIe host: check prints every GPU and host memory
# (declared bases kept, the others first fit in GPU-id order, 4 KiB aligned);
# overlapping or misaligned addresses are exit 2 at the address key, for check
# and for run (before any output).
t_host_address_map() {
  fs check "$FRANK" --dot "$RES/hmap.dot"
  [[ $rc -eq 0 ]] || { note "check: exit $rc"; show_output; return; }
  grep -q "global address map (name, base, size):" "$OUT" || { note "check prints no address map"; show_output; }
  grep -Eq "^  gpu0 +0x000000000000  [0-9]+ B" "$OUT" || { note "gpu0 not assigned at 0"; show_output; }
  grep -Eq "^  gpu16 +0x0000006[0-9a-f]{2}000  " "$OUT" || { note "gpu16 not after gpu15, 4 KiB aligned"; show_output; }
  grep -Eq "^  host_memory +0x[0-9a-f]{9}000  268435456 B" "$OUT" || { note "host memory not in the map"; show_output; }
  write_frank hmapd.yaml 's/host_memory: {size: 256MiB}/host_memory: {size: 256MiB, address: 1GiB}/; s/{id: 5, partition: sw1.p0}/{id: 5, partition: sw1.p0, address: 0x80000000}/'
  fs check "$FX/hmapd.yaml" --dot "$RES/hmapd.dot"
  [[ $rc -eq 0 ]] || { note "check with declared addresses: exit $rc"; show_output; return; }
  grep -Eq "^  host_memory +0x000040000000  268435456 B" "$OUT" || { note "host memory not at its declared 1 GiB"; show_output; }
  grep -Eq "^  gpu5 +0x000080000000  " "$OUT" || { note "gpu5 not at its declared 0x80000000"; show_output; }
  grep -Eq "^  gpu6 +0x0000001f4000  " "$OUT" || { note "gpu6 not first fit after gpu4"; show_output; }
  write_frank hover.yaml 's/{id: 1, partition: sw0.p0}/{id: 1, partition: sw0.p0, address: 0x0}/; s/{id: 0, partition: sw0.p0}/{id: 0, partition: sw0.p0, address: 0x1000}/'
  fs check "$FX/hover.yaml" --dot "$RES/hover.dot"
  expect_bad_input "$RES/hover.dot" "hover.yaml:43:" "fabric.gpus[1].address" "overlaps the memory of gpu0"
  fs run "$FX/hover.yaml" --out "$RES/hover"
  expect_bad_input "$RES/hover" "hover.yaml:43:" "fabric.gpus[1].address" "overlaps the memory of gpu0"
  write_frank hmis.yaml 's/host_memory: {size: 256MiB}/host_memory: {size: 256MiB, address: 0x1234}/'
  fs run "$FX/hmis.yaml" --out "$RES/hmis"
  expect_bad_input "$RES/hmis" "hmis.yaml:59:" "fabric.host_memory.address" "not aligned"
  fs check "$FRANK" --set fabric.address_base=0x3000 --dot "$RES/hbase.dot"
  [[ $rc -eq 0 ]] || { note "check with fabric.address_base: exit $rc"; show_output; return; }
  grep -Eq "^  gpu0 +0x000000003000  " "$OUT" || { note "gpu0 not at fabric.address_base"; show_output; }
}
check "pcie host, stall window longer than its period, a quadrant twice in the order, absurd TLP overhead: exit 2, file:line, key" t_host_window_longer_than_period
check "pcie host, global address map: check prints it; overlap / misalignment are exit 2 at the key" t_host_address_map
check "pcie host, partition on a missing host bridge: exit 2, file:line, key" t_host_missing_bridge
check "pcie host, GPU on a missing partition: exit 2, file:line, key" t_host_gpu_on_missing_partition
check "pcie host, group naming a missing GPU: exit 2, names the override" t_host_group_bad_gpu
check "pcie host, misspelt transport: exit 2, lists the valid ones" t_host_unknown_transport
# A host file with only its tree and a workload: every decode key has a
# default (decode.candidates was the 14 transports, probes included, and
# the check after it rejected its own default: exit 2 on every such file).
t_host_minimal_file() {
  cat >"$FX/min-host.yaml" <<'YAML'
fabric:
  name: minhost
  kind: pcie-host
  host_bridges:
    - {bus: "00", quadrant: 0}
    - {bus: "40", quadrant: 1}
  switches:
    - name: sw0
      partitions: [{name: p0, host_bridge: "00"}, {name: p1, host_bridge: "40"}]
  gpus:
    - {id: 0, partition: sw0.p0}
    - {id: 1, partition: sw0.p0}
    - {id: 2, partition: sw0.p1}
    - {id: 3, partition: sw0.p1}
workload:
  ops: 3
YAML
  fs run "$FX/min-host.yaml" --quiet --out "$RES/min-host"
  [[ $rc -eq 0 ]] || { note "transport run: exit $rc"; show_output; return; }
  fs run "$FX/min-host.yaml" --set workload.mode=decode --set workload.ops=1 --quiet --out "$RES/min-host-decode"
  [[ $rc -eq 0 ]] || { note "decode run with the default candidates: exit $rc"; show_output; return; }
  python3 - "$RES/min-host-decode/result.json" <<'PY' || note "the decode race did not run the 12 AllReduce transports"
import json, re, sys
race = " ".join(json.load(open(sys.argv[1]))["decode"]["race"])  # "81920B: pull=13.25/13.34us(150) ..."
names = set(re.findall(r" ([a-z_]+)=", race))
assert len(names) == 12, names
assert "pull" in names and "nccl_ll" in names and "read_ring" not in names and "write_all" not in names, names
PY
}

check "pcie host runs are byte-identical when repeated" t_host_run_is_deterministic
check "pcie host file without decode keys: runs (transport and decode), the race takes the 12 AllReduce transports" t_host_minimal_file

check "sweep whose points all end in terminal failures: tables written, no averages" t_terminal_failures_in_sweep

t_bench() {
  # bench times `fabricsim run` in child processes; against itself the outputs must be identical.
  fs bench "$TOPO" --set traffic.flits=$FLITS --repeat 2 --against "$BIN"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  grep -qE "^this binary: median [0-9.]+ s wall, [0-9.]+ s CPU; [0-9]+ flit transmissions: [0-9.]+ M/s per wall-second" "$OUT" ||
    { note "no 'this binary' summary line"; show_output; }
  grep -qE "^ratio \(against / this\): [0-9.]+x wall, [0-9.]+x CPU; outputs byte-identical$" "$OUT" ||
    { note "no ratio line with identical outputs"; show_output; }
  grep -qE "^bare link-engine loop .*: [0-9]+ flit transmissions in [0-9.]+ s" "$OUT" || note "no bare engine line"
  [[ -z $(ls -A "$WORK") ]] || note "bench wrote into the working directory: $(ls -A "$WORK" | tr '\n' ' ')"
  fs bench "$FRANK" --repeat 1
  expect_bad_input "$RES/none" "pcie-host"
  fs bench "$TOPO" --set link.window_hgh=4
  expect_bad_input "$RES/none" "window_hgh"
  # --against a program that is not fabricsim, or a folder: exit 2, no temporary folder left
  local before after
  before=$(ls -d /tmp/fabricsim-bench.* 2>/dev/null | sort)
  fs bench "$TOPO" --set traffic.flits=200 --repeat 1 --against /bin/true
  [[ $rc -eq 2 ]] || note "--against /bin/true: exit $rc, expected 2"
  grep -q "is /bin/true a fabricsim binary" "$ERR" || note "--against /bin/true: no diagnosis"
  after=$(ls -d /tmp/fabricsim-bench.* 2>/dev/null | sort)
  [[ $before == "$after" ]] || note "bench left a temporary folder: $(comm -13 <(echo "$before") <(echo "$after"))"
  fs bench "$TOPO" --against "$(dirname "$BIN")"
  expect_bad_input "$RES/none" "--against" "not an executable file"
}

check "a switched-pod fabric run is byte-identical when repeated (result.json, collectives.csv, links.csv)" t_fabric_determinism
check "bench times fabricsim run against a binary, outputs identical; bad input exit 2" t_bench
check "run --trace writes a Perfetto/Chrome trace with one span per transmission" t_trace

# ------------------------------------------- values a user can trust ---
# Node kinds, node ids, sizes and memory that `run` cannot build are rejected
# at load by `check` and `run` alike (exit 2, file:line:key, nothing written);
# values beyond the documented limits likewise; a link that went down leaves
# `correct` "not checked".
t_foreign_node_kind() {
  write_tiny foreign.yaml 's/kind: ualink-switch/kind: host-bridge/'
  fs check "$FX/foreign.yaml" --dot "$RES/foreign.dot"
  expect_bad_input "$RES/foreign.dot" "foreign.yaml:7:" "nodes[2].kind" "host-bridge"
  fs run "$FX/foreign.yaml" --out "$RES/foreign"
  expect_bad_input "$RES/foreign" "foreign.yaml:7:" "nodes[2].kind" "host-bridge"
}
t_node_id_chars() {
  local id name k=0
  for id in 'acc 1' 'acc,1' 'acc.1'; do
    name="id$((++k)).yaml"
    write_tiny "$name" "s/id: acc1,/id: \"$id\",/; s/a: acc1.0,/a: \"$id.0\",/"
    fs check "$FX/$name" --dot "$RES/idc.dot"
    expect_bad_input "$RES/idc.dot" "$name:6:" "nodes[1].id" "'$id'"
    fs run "$FX/$name" --out "$RES/idc"
    expect_bad_input "$RES/idc" "$name:6:" "nodes[1].id" "'$id'"
  done
}
t_size_4gib() {
  fs run "$ROOT/topologies/ring8.yaml" --set workload.size=4GiB --set workload.data=false --out "$RES/s4g"
  expect_bad_input "$RES/s4g" "--set workload.size" "4 GiB"
  fs check "$ROOT/topologies/ring8.yaml" --set workload.size=4GiB --dot "$RES/s4g.dot"
  expect_bad_input "$RES/s4g.dot" "--set workload.size" "4 GiB"
}
t_memory_estimate() {
  # 1,024 accelerators x 3 GiB of buffers each: no test machine holds that.
  fs check "$ROOT/topologies/ualink-pod-1024.yaml" --set workload.data=true --set workload.size=1GiB --dot "$RES/mem.dot"
  expect_bad_input "$RES/mem.dot" "workload.size" "GiB of accelerator memory" "workload.data: false"
  fs run "$ROOT/topologies/ualink-pod-1024.yaml" --set workload.data=true --set workload.size=1GiB --out "$RES/mem"
  expect_bad_input "$RES/mem" "workload.size" "GiB of accelerator memory" "workload.data: false"
}
t_link_down_not_checked() {
  # Every flit fails: the link goes down, a result (exit 0) without goodput and without a verdict.
  local down=(--set link.retry_limit=3 --set link.channel.error_good=1 --set link.channel.error_bad=1
    --set link.channel.magnitude_good=30 --set link.channel.magnitude_bad=30)
  fs run "$TOPO" --set traffic.flits=$FLITS "${down[@]}" --out "$RES/ld"
  [[ $rc -eq 0 ]] || { note "link-pair link down: exit $rc"; show_output; return; }
  grep -q "link went down" "$OUT" || { note "summary does not say the link went down"; show_output; }
  grep -qi "goodput [0-9]" "$OUT" && { note "summary prints a goodput for a link that went down"; show_output; }
  python3 - "$RES/ld/result.json" <<'PY' || note "result.json metrics carry a goodput for a link that went down"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["metrics"]["goodput_gbps"] is None and j["row"]["goodput_gbps"] is None, j["metrics"]
PY
  local ring=(--set workload.size=64KiB --set defaults.link.retry_limit=3 --set defaults.link.channel.error_good=1
    --set defaults.link.channel.error_bad=1 --set defaults.link.channel.magnitude_good=30
    --set defaults.link.channel.magnitude_bad=30)
  fs run "$ROOT/topologies/ring8.yaml" "${ring[@]}" --out "$RES/ldr"
  [[ $rc -eq 0 ]] || { note "ring link down: exit $rc"; show_output; return; }
  python3 - "$RES/ldr/collectives.csv" <<'PY' || note "collectives.csv: correct is not 'not checked', or a time cell is not empty"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and rows[-1]["correct"] == "not checked", rows
# no time: empty cells (as in a study's results.csv), never "nan"
assert all(rows[-1][k] == "" for k in ("time_us", "algbw_GBps", "busbw_GBps")), rows
PY
  python3 - "$RES/ldr/result.json" <<'PY' || note "result.json collective.correct is not 'not checked'"
import json, sys
assert json.load(open(sys.argv[1]))["collective"]["correct"] == "not checked"
PY
  grep -q "not checked" "$OUT" || { note "summary line does not say 'not checked'"; show_output; }
  grep -qw "false" "$OUT" && { note "summary line says false"; show_output; }
  grep -qw "nan" "$OUT" && { note "summary line prints nan for the time of a collective that did not complete"; show_output; }
}
t_alias_bomb() {
  # Nine levels of ten aliases (10^9 paths, under 1 KB): rejected at once, not after minutes.
  local f="$FX/bomb.yaml" l k
  { echo "fabric: {kind: ring}"; echo "a0: &a0 [x]"
    for l in 1 2 3 4 5 6 7 8 9; do
      printf 'a%d: &a%d [*a%d' "$l" "$l" $((l - 1))
      for k in 2 3 4 5 6 7 8 9 10; do printf ', *a%d' $((l - 1)); done
      echo "]"
    done; } >"$f"
  local start=$SECONDS
  TMO=20 fs check "$f" --dot "$RES/bomb.dot"
  expect_bad_input "$RES/bomb.dot" "bomb.yaml:2:1:" "key 'a0': unknown key"
  ((SECONDS - start < 10)) || note "check took $((SECONDS - start)) s"
}
t_value_limits() {
  # Rates that overflowed the integer-picosecond conversion (exit 0, a made-up goodput) are bad input.
  local r f
  for r in 1e-21b/s 1e30Gb/s; do
    f="rate$((++nrate)).yaml"
    derive "$f" "s|^  forward_rate: 400Gb/s|  forward_rate: $r|" '^  forward_rate:' || return
    fs run "$FX/$f" --set traffic.flits=$FLITS --out "$RES/rate"
    expect_bad_input "$RES/rate" "$f:$line:" "key 'link.forward_rate'" "outside the limits"
  done
  sed -e 's|reduce_rate: 2TB/s |reduce_rate: 1e-21b/s|' "$ROOT/topologies/ring8.yaml" >"$FX/reduce.yaml"
  fs check "$FX/reduce.yaml" --dot "$RES/reduce.dot"
  expect_bad_input "$RES/reduce.dot" "reduce.yaml:13:" "key 'defaults.accelerator.reduce_rate'" "outside the limits"
  fs run "$TOPO" --set link.flit=16B --set link.forward_rate=1000Tb/s --out "$RES/rate0"
  expect_bad_input "$RES/rate0" "--set link.forward_rate" "wire time must lie in [1 ps, 1e17 ps]"
}
nrate=0
check "rates outside [1 Mb/s, 1 Pb/s] and flits whose wire time rounds to 0 ps: exit 2, file:line, key" t_value_limits
check "YAML alias bomb (nine levels of ten aliases): check rejects it at once" t_alias_bomb
check "a link that went down: correct 'not checked' (CSV, JSON, summary); link-pair summary prints no goodput" t_link_down_not_checked
check "explicit fabric, host-bridge node: check and run exit 2, file:line, nodes[2].kind" t_foreign_node_kind
check "explicit fabric, node ids with a space, comma or dot: exit 2, file:line, nodes[1].id" t_node_id_chars
check "UALink fabric, workload.size of 4 GiB: check and run exit 2 naming workload.size" t_size_4gib
check "real data that cannot fit in memory: exit 2 with the estimate and the hint workload.data: false" t_memory_estimate
# ----------------------------------------- end values a user can trust ---
check "sweep resume reruns points whose ladder file changed, and says why" t_resume_ladder_changed
check "sweep resume reruns a hand-edited result.json and one made by another build" t_resume_rejects_edited_and_foreign_results
check "sweep --fresh reruns every point" t_sweep_fresh
check "a failed sweep leaves no results.csv / summary.json from before" t_failed_sweep_leaves_no_tables
check "run --out: every output carries the run's identity; a previous run's outputs are removed" t_run_out_identity
check "run --out that cannot be written: exit 2 before simulating" t_run_out_unwritable
check "run whose output file name is taken by a folder: exit 2 before simulating, the folder kept" t_run_output_is_a_folder
t_null_values() {
  # A key written without a value is an error, never its default.
  sed -e 's/^  accelerators: 16/  accelerators:/' "$ROOT/topologies/ring16.yaml" >"$FX/nullacc.yaml"
  cmp -s "$FX/nullacc.yaml" "$ROOT/topologies/ring16.yaml" && note "fixture nullacc.yaml unchanged"
  fs run "$FX/nullacc.yaml" --out "$RES/nullacc"
  expect_bad_input "$RES/nullacc" "nullacc.yaml:8:" "fabric.accelerators" "has no value"
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.forward_rate=200Gb/s --set defaults.link.forward_rate=null \
    --out "$RES/nullrate"
  expect_bad_input "$RES/nullrate" "--set defaults.link.forward_rate" "has no value"
  fs run "$ROOT/topologies/ring8.yaml" --set 'run.seed=~' --out "$RES/nullseed"
  expect_bad_input "$RES/nullseed" "run.seed" "has no value"
}
check "a key written without a value (empty, ~, null) in a file or --set: exit 2, file:line:key" t_null_values
t_text_metric() {
  cat >"$FX/textmetric.yaml" <<EOF2
study:
  name: textmetric
  fabric: $ROOT/topologies/ring8.yaml
  seeds: {first: 1, count: 1}
  columns: [policy, seed, algorithm, time_us]
  metrics: [time_us, algorithm]
EOF2
  fs sweep "$FX/textmetric.yaml" --out "$RES/textmetric"
  expect_bad_input "$RES/textmetric" "textmetric.yaml:6:" "study.metrics" "'algorithm' is text"
  # A RIFL run writes ber and mtbf_years as text (1e-06, n/a).
  local m
  for m in ber mtbf_years; do
    cat >"$FX/textmetric-$m.yaml" <<EOF2
study:
  name: textmetric-$m
  fabric: $ROOT/topologies/rifl-link.yaml
  seeds: {first: 1, count: 1}
  set: {traffic.bytes: 1MB}
  columns: [ber, bandwidth_ratio, mtbf_years]
  metrics: [$m]
  grid: {rifl.channel.ber: [1e-9]}
EOF2
    fs sweep "$FX/textmetric-$m.yaml" --out "$RES/textmetric-$m"
    expect_bad_input "$RES/textmetric-$m" "textmetric-$m.yaml:7:" "study.metrics" "'$m' is text"
  done
}
# The Gilbert-Elliott channel: no BER applies, so no analytic ratio or MTBF from one.
t_rifl_ge_estimates() {
  fs run "$ROOT/topologies/rifl-link.yaml" --set rifl.channel.model=gilbert-elliott --set traffic.bytes=1MB --out "$RES/rifl-ge"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  grep -qF "Gilbert-Elliott channel," "$OUT" || note "the summary does not name the channel"
  grep -qF "(analytic n/a)" "$OUT" || note "the summary shows an analytic ratio"
  python3 - "$RES/rifl-ge/result.json" <<'PY' || note "result.json row: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['row'])" "$RES/rifl-ge/result.json")"
import json, sys
r = json.load(open(sys.argv[1]))
w = r["row"]
sys.exit(0 if w["ber"] == "" and w["analytic_bandwidth_ratio"] is None and w["mtbf_years"] == "n/a" and "analytic" not in r else 1)
PY
}
check "rifl-link on the Gilbert-Elliott channel: no BER, analytic ratio or MTBF shown as if a BER applied" t_rifl_ge_estimates
# RIFL extremes: a frame slot below the fabric's 1 ps step (it hung), lanes
# whose buffers outgrow the machine (the kernel killed the run), and a zero
# one-way delay (the derived buffer failed its own bound).
t_rifl_extremes() {
  fs run "$ROOT/topologies/ring8.yaml" --set workload.size=64KiB --set defaults.link.protocol=rifl \
    --set defaults.link.rifl.lanes=1 --set defaults.link.forward_rate=300Tb/s --out "$RES/rx-slot"
  expect_bad_input "$RES/rx-slot" "--set defaults.link.forward_rate: a RIFL frame slot of 0.853 ps" "below the fabric's 1 ps time step"
  fs run "$ROOT/topologies/ring8.yaml" --set fabric.accelerators=512 --set workload.size=64KiB \
    --set defaults.link.protocol=rifl --set defaults.link.rifl.lanes=64 --set defaults.link.forward_rate=1Pb/s --out "$RES/rx-mem"
  expect_bad_input "$RES/rx-mem" "--set defaults.link.rifl.lanes: key 'defaults.link.rifl': the RIFL links need about" "(512 links x 64 lanes; retransmit buffer 1048576 frames" "this machine has available"
  fs run "$ROOT/topologies/rifl-link.yaml" --set traffic.bytes=1MB --set rifl.cable_length_m=0 --set rifl.transceiver_latency=0ns --quiet --out "$RES/rx-zero"
  [[ $rc -eq 0 ]] && grep -q '"retransmit_buffer_frames": 64' "$RES/rx-zero/result.json" || note "zero one-way delay: exit $rc, or B is not 64"
}
check "RIFL extremes: a frame slot under 1 ps and lanes that need more memory than the machine are exit 2; a zero one-way delay runs with B = 64" t_rifl_extremes
# A grid value the fabric rejects names the study file's line of that value.
t_grid_value_line() {
  cat >"$FX/grid-bad.yaml" <<EOF2
study:
  name: grid-bad
  fabric: $ROOT/topologies/rifl-link.yaml
  seeds: {first: 1, count: 1}
  set: {traffic.bytes: 1MB}
  grid:
    rifl.channel.ber: [1e-9,
                       0.7]
EOF2
  fs sweep "$FX/grid-bad.yaml" --out "$RES/grid-bad"
  expect_bad_input "$RES/grid-bad" "grid-bad.yaml:8:24: study.grid: key 'rifl.channel.ber': value 0.7 outside [0, 0.5]"
}
check "a grid value out of range: exit 2 naming the study file's line of the value" t_grid_value_line
check "a text column (algorithm; a RIFL run's ber, mtbf_years) as a study metric: exit 2 before any point runs" t_text_metric
# check takes run's --seed and --policy, so it accepts exactly what run accepts.
t_check_seed_policy() {
  fs check "$ROOT/topologies/ring8.yaml" --seed 7 --policy preface --dot "$RES/csp/"
  [[ $rc -eq 0 && -s $RES/csp/ring8.dot ]] || note "check --seed 7 --policy preface: exit $rc"
  fs check "$ROOT/topologies/ring8.yaml" --policy bogus --dot "$RES/csp-bad/"
  expect_bad_input "$RES/csp-bad" "--policy: key 'defaults.link.policy.name': 'bogus' is not one of: fixed-strong,"
  fs check "$ROOT/topologies/rifl-link.yaml" --policy preface
  expect_bad_input "$RES/csp-rifl" "--policy: a rifl-link fabric has no FEC policy"
  fs check "$ROOT/topologies/ring8.yaml" --seed 2 --set run.seed=3 --dot "$RES/csp-both/"
  expect_bad_input "$RES/csp-both" "--seed and --set run.seed both set run.seed; give only one of them"
}
check "check takes run's --seed and --policy: a bad policy, a policy on a RIFL link, --seed with --set run.seed are exit 2 as under run" t_check_seed_policy
check "check --dot DIR (or a new DIR/) writes DIR/NAME.dot and leaves no DIR.tmp; an unwritable default DOT path says why; a fabric name over 100 bytes or with a control character is bad input" t_check_dot_dir
check "run --set k=v FABRIC.yaml: the fabric is not taken as another --set" t_set_before_fabric
check "--seed / --policy together with a --set of the same key: exit 2" t_seed_policy_conflicts
check "a study's set of run.seed: exit 2 pointing to seeds" t_study_sets_seed
check "a bad value in a study's set names its line; a scalar over the policy's map is refused" t_study_set_lines
check "empty option values, duplicate columns, empty lists, a key in set (or a variant) and grid, too many points, unknown commands: exit 2" t_empty_and_duplicate_inputs
check "--set addresses list items as links[2].b" t_set_list_element
# A device as an input file is an error, not an endless read.
t_device_inputs() {
  fs check /dev/zero
  [[ $rc -eq 2 ]] || note "check /dev/zero: exit $rc, expected 2"
  grep -qF "/dev/zero: more than 256 MiB" "$ERR" || note "no size message: $(cat "$ERR")"
  fs run "$ROOT/topologies/ring8.yaml" --set workload.algorithm=schedule --set workload.schedule=/dev/zero --out "$RES/devzero"
  expect_bad_input "$RES/devzero" "--set workload.schedule" "not a regular file"
}
check "a device (/dev/zero) as the fabric or the schedule: exit 2, no endless read" t_device_inputs
check "a study named ../../.., \"\" or \"   \" cannot write outside out/<name>: exit 2" t_study_name_escape
check "explicit columns: the variant axis stays in results.csv; fabric rows carry collective, algorithm, correct" t_explicit_columns_keep_axis
check "Ctrl-C during a sweep: one line, exit 130, no tables, no half-written file, rerun resumes" t_interrupt_sweep
check "Ctrl-C during a run: one line, exit 130, nothing stale left" t_interrupt_run
check "mpirun -np 3 sweep: results.csv and summary.json byte-identical to the local sweep" t_mpi_sweep
check "sweep --shard 1..3/3 then --collect: byte-identical tables; missing or stale shares refused" t_shards_collect
# --- RIFL link experiment (fabric.kind: rifl-link) ---------------------------
RIFL="$ROOT/topologies/rifl-link.yaml"
write_rifl() {  # write_rifl NAME SED-SCRIPT: $FX/NAME = rifl-link.yaml edited
  sed -e "$2" "$RIFL" >"$FX/$1"
  cmp -s "$FX/$1" "$RIFL" && note "fixture $1: sed '$2' did not change rifl-link.yaml"
}
t_rifl_bad_input() {
  write_rifl rfb.yaml 's/^  frame_bits: 256 /  frame_bits: 200 /'
  fs run "$FX/rfb.yaml" --out "$RES/rfb"
  expect_bad_input "$RES/rfb" "rfb.yaml:" "rifl.frame_bits" "unsupported frame size"
  write_rifl rl0.yaml 's/^  lanes: 4 /  lanes: 0 /'
  fs run "$FX/rl0.yaml" --out "$RES/rl0"
  expect_bad_input "$RES/rl0" "rl0.yaml:" "rifl.lanes"
  write_rifl rber.yaml 's/^    ber: 1e-9 /    ber: 0.6 /'
  fs run "$FX/rber.yaml" --out "$RES/rber"
  expect_bad_input "$RES/rber" "rber.yaml:" "rifl.channel.ber" "outside"
  write_rifl ron.yaml 's/^  fc_on: 0 /  fc_on: 100 /; s/^  fc_off: 0 /  fc_off: 200 /'
  fs run "$FX/ron.yaml" --out "$RES/ron"
  expect_bad_input "$RES/ron" "ron.yaml:" "rifl.fc_on" "above the release (OFF)"
  write_rifl rfc.yaml 's/^  fc_buffer: 0 /  fc_buffer: 300 /'
  fs run "$FX/rfc.yaml" --out "$RES/rfc"
  expect_bad_input "$RES/rfc" "rfc.yaml:" "rifl.fc_buffer" "round-trip bound"
  write_rifl rrb.yaml 's/^  retransmit_buffer: 0 /  retransmit_buffer: 32 /'
  fs run "$FX/rrb.yaml" --out "$RES/rrb"
  expect_bad_input "$RES/rrb" "rrb.yaml:" "rifl.retransmit_buffer" "round trip"
  fs run "$RIFL" --policy preface --out "$RES/rpol"
  expect_bad_input "$RES/rpol" "--policy"
  # more packets than the per-packet records allow: refused before any is drawn
  write_rifl rbig.yaml 's/^  bytes: .*/  bytes: 1PB/'
  fs run "$FX/rbig.yaml" --out "$RES/rbig"
  expect_bad_input "$RES/rbig" "rbig.yaml:" "traffic.bytes" "at most 2^27 packets"
  # the key that breaks a rule is the one named (found by a new-user pass)
  fs run "$RIFL" --set traffic.payload_max=1PiB --out "$RES/rbig"
  expect_bad_input "$RES/rbig" "--set traffic.payload_max" "payload_max <= 16 MiB"
  fs run "$RIFL" --set 'rifl.fec_profiles=[{name: X, overhead: 100%, decode_delay: 1s, correctable: 100000}]' \
    --set rifl.fec=X --out "$RES/rbig"
  expect_bad_input "$RES/rbig" "--set rifl.fec" "one-way delay of" "FEC"
}
t_rifl_hopeless_ber_diagnosis() {
  fs run "$RIFL" --set rifl.channel.ber=0.05 --set traffic.bytes=10MB --quiet --out "$RES/rhop"
  [[ $rc -eq 3 ]] || note "exit status $rc, expected 3"
  grep -q "RIFL link: " "$ERR" || note "no diagnosis on stderr"
  [[ ! -e $RES/rhop/result.json ]] || note "result.json written for a run that could not finish"
}
# A UALink link pair that cannot deliver (BER 0.5, retries practically
# unbounded) stops at its watchdog with a diagnosis naming the key behind it;
# nothing written. At the default retry limit the link goes down instead: a
# result, whose channel line speaks of the independent wire, not a burst chain.
t_link_watchdog_diagnosis() {
  fs run "$TOPO" --set link.channel.model=independent --set link.channel.ber=0.5 --set link.retry_limit=1000000 \
    --set traffic.flits=100 --set run.deadline=20us --out "$RES/lwd"
  [[ $rc -eq 3 ]] || note "exit status $rc, expected 3"
  grep -q "watchdog deadline of 20 us simulated (0 flits delivered of the 100 offered by then; the key run.deadline sets it)" "$ERR" ||
    { note "no watchdog diagnosis on stderr"; show_output; }
  ! grep -q "In file:" "$ERR" || note "SystemC report location in the user's message"
  # a stream longer than one burst stops at the deadline, not at a later burst
  fs run "$TOPO" --set link.channel.model=independent --set link.channel.ber=0.5 --set link.retry_limit=1000000 \
    --set traffic.flits=10000 --set run.deadline=20us --out "$RES/lwd"
  [[ $rc -eq 3 ]] || note "10000 flits: exit status $rc, expected 3"
  grep -q "status=deadline exceeded t=19[0-9][0-9][0-9]" "$ERR" || { note "did not stop at the 20-us deadline"; show_output; }
  [[ ! -e $RES/lwd/result.json ]] || note "result.json written for a run that could not finish"
  fs run "$TOPO" --set link.channel.model=independent --set link.channel.ber=0.5 --set traffic.flits=100 \
    --out "$RES/lwd2"
  [[ $rc -eq 0 ]] || { note "link-down run: exit $rc"; show_output; return; }
  grep -q "terminal failures 1" "$OUT" || note "the link did not go down"
  grep -q "channel independent at BER 0.5: [1-9][0-9]* bit errors in [1-9][0-9]* wire bits" "$OUT" ||
    { note "no independent channel line"; show_output; }
  ! grep -q "channel estimate" "$OUT" || note "a burst-chain estimate printed for the independent channel"
}
t_rifl_determinism_and_trace() {
  fs run "$RIFL" --set rifl.channel.ber=1e-5 --set traffic.bytes=4MB --quiet --trace --out "$RES/r1"
  [[ $rc -eq 0 ]] || { note "run 1 exit $rc"; show_output; return; }
  fs run "$RIFL" --set rifl.channel.ber=1e-5 --set traffic.bytes=4MB --quiet --trace --out "$RES/r2"
  cmp -s "$RES/r1/result.json" "$RES/r2/result.json" || note "result.json differs between identical runs"
  cmp -s "$RES/r1/trace.json" "$RES/r2/trace.json" || note "trace.json differs between identical runs"
  grep -q '"retransmission: ' "$RES/r1/trace.json" || note "no retransmission span in trace.json"
  grep -q '"bandwidth_ratio"' "$RES/r1/result.json" || note "no bandwidth_ratio in result.json"
}
t_rifl_sweep_costliest_first() {
  cat >"$FX/rorder.yaml" <<EOF
study:
  name: rorder
  fabric: $RIFL
  seeds: {first: 1, count: 1}
  columns: [ber, bandwidth_ratio, retransmitted_frames]
  metrics: [bandwidth_ratio, retransmitted_frames]
  set: {traffic.bytes: 1MB}
  grid:
    rifl.channel.ber: [1e-9, 1e-5, 1e-6]
EOF
  fs sweep "$FX/rorder.yaml" --jobs 2 --out "$RES/rord2"
  [[ $rc -eq 0 ]] || { note "sweep --jobs 2: exit $rc"; show_output; return; }
  grep -qF "costliest points first" "$OUT" || { note "no costliest-first line with --jobs 2"; show_output; }
  grep -qF "first $RES/rord2/points/c001-rifl.channel.ber=1e-5/s1," "$OUT" ||
    { note "the BER 1e-5 point does not start first"; show_output; }
  fs sweep "$FX/rorder.yaml" --jobs 1 --out "$RES/rord1"
  [[ $rc -eq 0 ]] || { note "sweep --jobs 1: exit $rc"; show_output; return; }
  grep -qF "costliest points first" "$OUT" && note "--jobs 1 reorders the points"
  cmp -s "$RES/rord1/results.csv" "$RES/rord2/results.csv" || note "results.csv depends on the start order"
  [[ $(cut -d, -f1 "$RES/rord2/results.csv" | tr '\n' ' ') == "ber 1e-09 1e-05 1e-06 " ]] ||
    note "results.csv rows not in the study's order: $(cut -d, -f1 "$RES/rord2/results.csv" | tr '\n' ' ')"
}
check "rifl link: unsupported frame, 0 lanes, BER, ON/OFF, buffers, --policy, too many packets: exit 2, file:line, key" t_rifl_bad_input
check "rifl link: a BER at which the link cannot progress ends with a diagnosis (exit 3)" t_rifl_hopeless_ber_diagnosis
check "link pair: a stream that cannot complete stops at the watchdog with a diagnosis (exit 3)" t_link_watchdog_diagnosis
check "rifl link runs are byte-identical when repeated; --trace shows retransmissions" t_rifl_determinism_and_trace
check "rifl sweep with --jobs 2 starts the costliest point first; results.csv keeps the study's order" t_rifl_sweep_costliest_first
# ------------------------------------------------------ users' schedules ---
# tests/cli/fixtures/schedule-ring2.yaml runs schedules/allreduce-2.xml; the
# bad schedules beside it differ from it in the line their comment names.
SCHED_FAB="$FIXTURES/schedule-ring2.yaml"
SCHED_DIR="$FIXTURES/schedules"

t_schedule_runs() {
  local out="$RES/sched-ok" f
  # allreduce-2-inplace.xml: in place as msccl-tools writes it (o_chunks=0, every step on buffer i).
  for f in allreduce-2.xml allreduce-2.yaml allreduce-2-inplace.xml; do
    rm -rf -- "$out"
    fs run "$SCHED_FAB" --set "workload.schedule=schedules/$f" --quiet --out "$out"
    [[ $rc -eq 0 ]] || { note "$f: exit $rc"; show_output; continue; }
    grep -q '^allreduce,schedule:allreduce-2[a-z-]*,2,65536,16384,float,sum,.*,true,[^,]*$' "$out/collectives.csv" ||
      note "$f: collectives.csv has no correct schedule row: $(tail -1 "$out/collectives.csv")"
    [[ $(wc -l <"$out/steps.csv") -eq 9 ]] || note "$f: steps.csv should have 8 steps"
    [[ $(wc -l <"$out/threadblocks.csv") -eq 3 ]] || note "$f: threadblocks.csv should have 2 threadblocks"
    grep -q '"critical_path"' "$out/result.json" || note "$f: result.json has no critical path"
  done
}

# steps.csv landed_us: a send's data had landed at the peer, so it is never
# after the matching receive became ready, and equals it where the receive
# waited for that message (it was the time the sender's thread next moved).
t_schedule_landed() {
  local out="$RES/sched-landed"
  fs run "$ROOT/topologies/ring8.yaml" --set workload.algorithm=schedule --set workload.schedule=schedules/ring-allreduce-8.xml \
    --set workload.size=1MiB --quiet --out "$out"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  python3 - "$out/steps.csv" <<'PY' || note "steps.csv: a send landed after its receive was ready, or none equal"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
recv_types = {"r", "rcs", "rrs", "rrc", "rrcs"}
tb = {}
for r in rows:
    tb.setdefault((int(r["rank"]), int(r["threadblock"])), []).append(r)
pairs = 0
equal = 0
for (g, t), steps in tb.items():
    steps.sort(key=lambda r: int(r["step"]))
    p, c = int(steps[0]["send"]), steps[0]["channel"]
    if p < 0:
        continue
    sends = [r for r in steps if r["landed_us"] != ""]
    rt = min(k for k, v in tb.items() if k[0] == p and int(v[0]["recv"]) == g and v[0]["channel"] == c)
    recvs = [r for r in sorted(tb[rt], key=lambda r: int(r["step"])) if r["type"] in recv_types]
    assert len(sends) == len(recvs), (g, t, len(sends), len(recvs))
    for s_, r_ in zip(sends, recvs):
        landed, ready = float(s_["landed_us"]), float(r_["ready_us"])
        assert landed <= ready + 1e-9, (g, t, s_["step"], landed, r_["rank"], r_["step"], ready)
        pairs += 1
        equal += abs(landed - ready) < 1e-9
assert pairs == 8 * 14 and equal > pairs // 2, (pairs, equal)
PY
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

# A dependency on a step that says hasdep="0" (MSCCL's runtimes would not
# signal it): the first three warnings and a count, under run (stderr) and
# check (its report); the run is exact all the same.
t_schedule_hasdep_warning() {
  local x="$FX/hasdep0.xml"
  sed 's/hasdep="1"/hasdep="0"/g' "$ROOT/topologies/schedules/allpairs-allreduce-8.xml" >"$x"
  local sched=(--set workload.algorithm=schedule --set "workload.schedule=$x" --set workload.size=64KiB)
  fs run "$ROOT/topologies/ring8.yaml" "${sched[@]}" --quiet --out "$RES/hasdep"
  [[ $rc -eq 0 ]] || { note "run: exit $rc"; show_output; return; }
  [[ $(grep -c 'says hasdep="0" but step' "$ERR") -eq 3 ]] || { note "run: not 3 hasdep warnings"; show_output; }
  grep -q "warning: ... and 53 more like these in $x" "$ERR" || { note "run: no count of the rest"; show_output; }
  grep -q ",true," "$RES/hasdep/collectives.csv" || note "the run is not correct"
  fs check "$ROOT/topologies/ring8.yaml" "${sched[@]}" --dot "$RES/hasdep.dot"
  [[ $rc -eq 0 ]] || { note "check: exit $rc"; show_output; return; }
  [[ $(grep -c 'says hasdep="0" but step' "$OUT") -eq 3 ]] || { note "check: not 3 hasdep warnings"; show_output; }
  fs check "$ROOT/topologies/ring8.yaml" --set workload.algorithm=schedule \
    --set workload.schedule=schedules/allpairs-allreduce-8.xml --dot "$RES/hasdep.dot"
  ! grep -q "says hasdep" "$OUT" "$ERR" || note "a warning for the file as msccl-tools wrote it"
}

# Older MSCCL files write neither ngpus nor coll: the rank count is the <gpu>
# count, the collective the workload's (and without one: exit 2, the <algo> line).
t_schedule_old_format() {
  local out="$RES/sched-old"
  fs run "$SCHED_FAB" --set workload.schedule=schedules/allreduce-2-old.xml --out "$out"
  expect_bad_input "$out" "--set workload.schedule" "allreduce-2-old.xml:2: <algo> lacks attribute 'coll'" \
    "give workload.collective"
  fs run "$SCHED_FAB" --set workload.schedule=schedules/allreduce-2-old.xml --set workload.collective=allreduce \
    --quiet --out "$out"
  [[ $rc -eq 0 ]] || { note "with workload.collective: exit $rc"; show_output; return; }
  grep -q '^allreduce,schedule:allreduce-2,2,65536,16384,float,sum,.*,true,[^,]*$' "$out/collectives.csv" ||
    note "no correct schedule row: $(tail -1 "$out/collectives.csv")"
  fs run "$SCHED_FAB" --set workload.schedule=schedules/allreduce-2-old.xml --set workload.collective=sendrecv \
    --out "$RES/sched-old-sr"
  expect_bad_input "$RES/sched-old-sr" "--set workload.collective" "sendrecv is not one"
}

# coll="custom" (a pattern with no standard definition, as msccl-tools allows):
# it runs, correct is n/a, exit 0; custom without a schedule is exit 2.
t_schedule_custom() {
  local out="$RES/sched-custom"
  fs run "$SCHED_FAB" --set fabric.accelerators=3 --set workload.schedule=schedules/forward-3.xml --quiet --out "$out"
  [[ $rc -eq 0 ]] || { note "custom schedule: exit $rc"; show_output; return; }
  grep -q '^custom,schedule:forward-3,3,65536,16384,float,none,[0-9.]*,[0-9.]*,[0-9.]*,n/a,[^,]*$' "$out/collectives.csv" ||
    note "no custom row with correct n/a: $(tail -1 "$out/collectives.csv")"
  fs run "$SCHED_FAB" --set fabric.accelerators=3 --set workload.algorithm=ring --set workload.collective=custom \
    --out "$RES/sched-custom-ring"
  expect_bad_input "$RES/sched-custom-ring" "--set workload.algorithm" "not one of: schedule"
}

t_schedule_missing() {
  fs run "$SCHED_FAB" --set workload.schedule=schedules/nonexistent.xml --out "$RES/sched-missing"
  expect_bad_input "$RES/sched-missing" "--set workload.schedule" "nonexistent.xml' not found"
}

t_schedule_wrong_result() {
  fs run "$SCHED_FAB" --set workload.schedule=schedules/wrong-result.xml --quiet --out "$RES/sched-wrong"
  [[ $rc -eq 1 ]] || note "exit $rc, expected 1"
  grep -qF "rank 0 chunk 0 of its output" "$ERR" || { note "stderr does not name rank 0 chunk 0"; show_output; }
  grep -q ',false,[^,]*$' "$RES/sched-wrong/collectives.csv" || note "collectives.csv does not say correct=false"
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
  [[ ! -e $RES/sched-dead ]] || note "a deadlocked run left the --out folder it created"
  # Folders it created (nested) go; a folder that was there before stays.
  fs run "$SCHED_FAB" --set workload.schedule=schedules/deadlock.xml --quiet --out "$RES/sched-dead-new/a/b"
  [[ $rc -eq 3 ]] || note "nested --out: exit $rc, expected 3"
  [[ ! -e $RES/sched-dead-new ]] || note "a deadlocked run left the nested folders it created"
  mkdir -p "$RES/sched-dead-old"
  fs run "$SCHED_FAB" --set workload.schedule=schedules/deadlock.xml --quiet --out "$RES/sched-dead-old/c"
  [[ $rc -eq 3 ]] || note "existing parent: exit $rc, expected 3"
  [[ -d $RES/sched-dead-old && ! -e $RES/sched-dead-old/c ]] || note "the existing parent went, or the new folder stayed"
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
  grep -q ',8388608,.*,true,[^,]*$' "$RES/ring-sched/collectives.csv" || note "schedule row not 8 MiB and correct"
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
  grep -q ',true,[^,]*$' "$RES/sched-explicit/collectives.csv" || note "not correct on the explicit fabric"
  grep -q '^0,gpuB,' "$RES/sched-explicit/steps.csv" || note "schedule rank 0 did not run on gpuB"
  # result.json echoes every node's ports (declared, or as many as its links
  # use) and each accelerator's flags
  python3 - "$RES/sched-explicit/result.json" <<'PY' || note "result.json config.nodes lacks ports / flags"
import json, sys
n = {x["id"]: x for x in json.load(open(sys.argv[1]))["config"]["nodes"]}
assert n["gpuA"]["ports"] == 1 and n["sw0"]["ports"] == 2 and n["gpuA"]["flags"] >= 8, n
PY
  sed 's/rank_map: \[gpuB, gpuA\]/rank_map: [gpuB, 1]/' "$FX/sched-explicit.yaml" >"$FX/sched-dup.yaml"
  fs run "$FX/sched-dup.yaml" --out "$RES/sched-dup"
  expect_bad_input "$RES/sched-dup" "sched-dup.yaml:" "workload.rank_map" "listed twice"
}

check "schedule run --trace: one track per rank x threadblock, one span per step" t_schedule_trace
check "schedule on an explicit fabric with rank_map by node id; a rank listed twice is exit 2" t_schedule_explicit_rank_map
check "threadblock rate: a 2-channel ring schedule beats the 1-channel one" t_schedule_channels_matter
check "schedule (MSCCL XML, in place with o_chunks=0, native YAML) runs, correct, steps.csv / threadblocks.csv / critical path" t_schedule_runs
check "schedule steps.csv: a send's landed_us is when its data landed (never after the matching receive is ready)" t_schedule_landed
check "bad schedules (malformed XML, unknown type / buffer / key, offset outside, unmatched send, count mismatch, cycle): exit 2, file:line" t_schedule_bad_files
check "schedule ngpus differs from the fabric's ranks: exit 2, both files" t_schedule_ngpus
check "schedule coll disagrees with workload.collective: exit 2" t_schedule_coll
check "schedule: a dependency on a step with hasdep=\"0\" is a warning under run and check" t_schedule_hasdep_warning
check "custom schedule (coll=custom): runs, correct n/a; custom without a schedule: exit 2" t_schedule_custom
check "older MSCCL schedule without ngpus / coll: the GPU count and workload.collective; neither: exit 2" t_schedule_old_format
check "missing schedule file: exit 2" t_schedule_missing
check "schedule that computes the wrong result: exit 1 naming rank and chunk" t_schedule_wrong_result
check "schedule that deadlocks: exit 3, diagnosis names rank, threadblock and step" t_schedule_deadlock

t_study_fabric_name_too_long() {
  # A fabric path the filesystem rejects (a name over NAME_MAX) is "not found",
  # exit 2 naming study.fabric, not a raw filesystem error (a fuzz finding).
  local s="$FX/study-long-fabric.yaml" long
  long=$(printf 'x%.0s' $(seq 300))
  printf 'study:\n  name: longname\n  fabric: %s.yaml\n  policies: [preface]\n  seeds: {first: 1, count: 1}\n' "$long" >"$s"
  fs sweep "$s" --jobs 1 --out "$RES/study-long"
  expect_bad_input "$RES/study-long" "$s:3:" "study.fabric" "not found"
}
check "study fabric path longer than a file name may be: exit 2 naming study.fabric" t_study_fabric_name_too_long

t_check_every_shipped_fabric() {
  # `check` accepts every fabric file we ship, whatever its kind (rifl-link was exit 2).
  local f
  for f in "$ROOT"/topologies/*.yaml; do
    fs check "$f" --dot "$RES/check-all"
    [[ $rc -eq 0 ]] || { note "check $(basename "$f"): exit $rc: $(head -c 300 "$ERR")"; }
  done
}
check "check accepts every shipped fabric file (every fabric.kind)" t_check_every_shipped_fabric
# ------------------------------------------------ schedules on a PCIe host ---
# frank1: eight GPUs behind one switch partition; frank2: four quadrants.
HOST_SCHED=(--set workload.algorithm=schedule --set workload.size=8MiB --set 'workload.group=[0,1,2,3,4,5,6,7]')

# The 8-rank ring on frank1: real bytes, correct, the same reports as on a
# UALink fabric, and a time set by the PCIe link: half the lanes take about
# 1.9 times as long (14 messages at half the rate, 7 reductions unchanged).
t_host_schedule_runs() {
  local t16 t8
  fs run "$ROOT/topologies/frank1.yaml" "${HOST_SCHED[@]}" --set workload.schedule=schedules/ring-allreduce-8.xml \
    --trace --quiet --out "$RES/host-sched"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  grep -q '^allreduce,schedule:ring-allreduce-8,8,8388608,2097152,float,sum,.*,true,[^,]*$' "$RES/host-sched/collectives.csv" ||
    note "collectives.csv has no correct schedule row: $(tail -1 "$RES/host-sched/collectives.csv")"
  [[ $(wc -l <"$RES/host-sched/steps.csv") -eq 121 ]] || note "steps.csv should have 8 x 15 steps"
  [[ $(wc -l <"$RES/host-sched/threadblocks.csv") -eq 9 ]] || note "threadblocks.csv should have 8 threadblocks"
  grep -q '^0,gpu0,0,0,s,1,7,0,1,1048576,' "$RES/host-sched/steps.csv" || note "steps.csv: rank 0's first send not on gpu0"
  python3 - "$RES/host-sched/result.json" "$RES/host-sched/trace.json" <<'PY' || note "result.json / trace.json lack the schedule's reports"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["correct"] is True and r["collective"]["correct"] is True, r["correct"]
assert len(r["schedule"]["critical_path"]) == 15, r["schedule"]
assert r["row"]["transport"] == "schedule:ring-allreduce-8" and r["row"]["time_us"] > 0, r["row"]
ev = json.load(open(sys.argv[2]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
threads = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "M" and e.get("name") == "thread_name" and e["pid"] >= 100}
steps = [e for e in ev if e.get("ph") == "X" and e.get("cat", "").startswith("schedule")]
assert procs.get(100) == "schedule rank 0 (gpu0)" and procs.get(107) == "schedule rank 7 (gpu7)", procs
assert len(threads) == 8 and len(steps) == 120, (len(threads), len(steps))
PY
  fs run "$ROOT/topologies/frank1.yaml" "${HOST_SCHED[@]}" --set workload.schedule=schedules/ring-allreduce-8.xml \
    --set fabric.link.lanes=8 --quiet --out "$RES/host-sched-x8"
  [[ $rc -eq 0 ]] || { note "x8: exit $rc"; show_output; return; }
  t16=$(tail -1 "$RES/host-sched/collectives.csv" | cut -d, -f8)
  t8=$(tail -1 "$RES/host-sched-x8/collectives.csv" | cut -d, -f8)
  python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if 1.75 < b / a < 1.95 else 1)" "$t16" "$t8" ||
    note "x16 $t16 us, x8 $t8 us: expected x8 about 1.86 times x16"
}

# gpu.threadblock_rate on a host: the GPU, not the PCIe link, limits, so the
# 2-channel ring (two threadblocks per rank) beats the 1-channel one.
t_host_schedule_channels_matter() {
  local t1 t2
  fs run "$ROOT/topologies/frank1.yaml" "${HOST_SCHED[@]}" --set workload.schedule=schedules/ring-allreduce-8.xml \
    --set gpu.threadblock_rate=20GB/s --quiet --out "$RES/host-tb1"
  t1=$(tail -1 "$RES/host-tb1/collectives.csv" | cut -d, -f8)
  fs run "$ROOT/topologies/frank1.yaml" "${HOST_SCHED[@]}" --set workload.schedule=schedules/ring-allreduce-8-c2.xml \
    --set gpu.threadblock_rate=20GB/s --quiet --out "$RES/host-tb2"
  t2=$(tail -1 "$RES/host-tb2/collectives.csv" | cut -d, -f8)
  grep -q ',true,[^,]*$' "$RES/host-tb2/collectives.csv" || note "2-channel ring not correct"
  python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if b < 0.7 * a else 1)" "$t1" "$t2" ||
    note "one channel $t1 us, two channels $t2 us: two should be much faster under a threadblock rate"
}

# `check` names the schedule it validated, on a host and on a UALink fabric.
t_schedule_check_line() {
  fs check "$ROOT/topologies/frank1.yaml" "${HOST_SCHED[@]}" --set workload.schedule=schedules/ring-allreduce-8.xml --dot "$TMP"
  [[ $rc -eq 0 ]] || { note "host check: exit $rc"; show_output; return; }
  grep -qF "schedule ring-allreduce-8 (" "$OUT" || note "host check does not name the schedule"
  grep -qF "allreduce on 8 ranks, 8 threadblocks, 120 steps, 112 messages; at 8388608 B each rank needs 31457280 B" "$OUT" ||
    note "host check: wrong schedule counts: $(grep schedule "$OUT")"
  fs check "$SCHED_FAB" --dot "$TMP"
  [[ $rc -eq 0 ]] || { note "fabric check: exit $rc"; show_output; return; }
  grep -qF "schedule allreduce-2 (" "$OUT" || note "fabric check does not name the schedule"
  grep -qF "allreduce on 2 ranks, 2 threadblocks, 8 steps, 4 messages" "$OUT" || note "fabric check: wrong counts"
}

# Bad combinations on a host: exit 2 naming file, line and key, nothing written.
t_host_schedule_bad() {
  fs run "$ROOT/topologies/frank1.yaml" --set workload.algorithm=schedule --set workload.schedule=schedules/ring-allreduce-8.xml \
    --out "$RES/host-sched-group"
  expect_bad_input "$RES/host-sched-group" "frank1.yaml:68:" "workload.group" "ring-allreduce-8.xml:2: " \
    "ngpus=8 ranks, the group lists 4 GPUs"
  fs run "$ROOT/topologies/frank1.yaml" --set workload.algorithm=schedule --set 'workload.group=[0,1]' \
    --set "workload.schedule=$SCHED_DIR/unknown-type.xml" --out "$RES/host-sched-type"
  expect_bad_input "$RES/host-sched-type" "--set workload.schedule" "$SCHED_DIR/unknown-type.xml:6: " "unknown step type 'rrx'"
  fs run "$ROOT/topologies/frank2.yaml" "${HOST_SCHED[@]}" --set workload.schedule=schedules/ring-allreduce-8.xml \
    --set workload.mode=decode --out "$RES/host-sched-decode"
  expect_bad_input "$RES/host-sched-decode" "--set workload.mode" "not a schedule"
}

# A wrong schedule is exit 1 naming rank and chunk; a deadlocking one exit 3 naming what each GPU waits for.
t_host_schedule_wrong_and_deadlock() {
  fs run "$ROOT/topologies/frank1.yaml" --set workload.algorithm=schedule --set 'workload.group=[0,1]' --set workload.size=64KiB \
    --set "workload.schedule=$SCHED_DIR/wrong-result.xml" --quiet --out "$RES/host-sched-wrong"
  [[ $rc -eq 1 ]] || note "wrong result: exit $rc, expected 1"
  grep -qF "rank 0 chunk 0 of its output" "$ERR" || { note "stderr does not name rank 0 chunk 0"; show_output; }
  grep -q ',false,[^,]*$' "$RES/host-sched-wrong/collectives.csv" || note "collectives.csv does not say correct=false"
  fs run "$ROOT/topologies/frank1.yaml" --set workload.algorithm=schedule --set 'workload.group=[0,1]' --set workload.size=64KiB \
    --set "workload.schedule=$SCHED_DIR/deadlock.xml" --quiet --out "$RES/host-sched-dead"
  [[ $rc -eq 3 ]] || note "deadlock: exit $rc, expected 3"
  grep -qF "gpu0 waits for schedule rank 0:" "$ERR" || note "stderr does not name gpu0 / schedule rank 0"
  grep -qF "threadblock 0 step 0 (rrc): waits for message 0 from rank 1" "$ERR" || note "stderr does not name the step"
  [[ ! -e $RES/host-sched-dead/result.json ]] || note "a deadlocked run wrote outputs"
}

# A host study sweeping schedules (the schedule columns of a host row).
t_host_schedule_sweep() {
  local d="$TMP/host-sched-study" out="$RES/host-sched-sweep"
  mkdir -p "$d"
  cat >"$d/study.yaml" <<YAML
study:
  name: host-sched-axis
  fabric: $ROOT/topologies/frank1.yaml
  columns: [group, algorithm, size_bytes, time_us, busbw_GBps, correct]
  metrics: [time_us]
  set:
    workload.algorithm: schedule
    workload.group: "[0,1,2,3,4,5,6,7]"
  grid:
    workload.schedule: [schedules/ring-allreduce-8.xml, schedules/allpairs-allreduce-8.yaml]
    workload.size: [1MiB]
YAML
  fs sweep "$d/study.yaml" --jobs 2 --out "$out"
  [[ $rc -eq 0 ]] || { note "sweep: exit $rc"; show_output; return; }
  [[ $(wc -l <"$out/results.csv") -eq 3 ]] || note "results.csv should have 2 rows"
  grep -q ',schedule:ring-allreduce-8,1048576,[0-9.]*,[0-9.]*,true' "$out/results.csv" || note "no correct ring row: $(cat "$out/results.csv")"
  grep -q ',schedule:allpairs-allreduce-8,1048576,[0-9.]*,[0-9.]*,true' "$out/results.csv" || note "no correct allpairs row"
}

check "schedule on a PCIe host (frank1): correct, steps/threadblocks/critical path/trace, time set by the link lanes" t_host_schedule_runs
check "schedule on a PCIe host, bad combinations (ranks vs group, bad file, decode): exit 2, file:line:key" t_host_schedule_bad
check "schedule on a PCIe host: wrong result exit 1, deadlock exit 3" t_host_schedule_wrong_and_deadlock
check "a host study sweeps schedules" t_host_schedule_sweep
check "check names the schedule: ranks, threadblocks, steps, messages, memory" t_schedule_check_line
check "gpu.threadblock_rate on a host: a 2-channel ring schedule beats the 1-channel one" t_host_schedule_channels_matter

t_rifl_unknown_key() {
  # An unknown key under rifl: was accepted (the section was never finished).
  fs run "$ROOT/topologies/rifl-link.yaml" --set rifl.bogus=1 --out "$RES/rifl-bogus"
  expect_bad_input "$RES/rifl-bogus" "--set rifl.bogus" "unknown key 'rifl.bogus'"
}
check "rifl-link: an unknown key under rifl: is exit 2" t_rifl_unknown_key

# --- UALink replay vs RIFL on the same error streams (link-protocols) --------
t_protocols_bad_input() {
  sed -e 's/^  fec: none /  fec: bogus /' "$ROOT/topologies/link-protocols-rifl.yaml" >"$FX/rfec.yaml"
  cmp -s "$FX/rfec.yaml" "$ROOT/topologies/link-protocols-rifl.yaml" && note "fixture rfec.yaml unchanged"
  fs run "$FX/rfec.yaml" --out "$RES/rfec"
  expect_bad_input "$RES/rfec" "rfec.yaml:" "rifl.fec" "bogus"
  sed -e 's/^    model: gilbert-elliott .*/    model: independent\n    ber: 2/' "$ROOT/topologies/link-protocols-ualink.yaml" >"$FX/uber.yaml"
  cmp -s "$FX/uber.yaml" "$ROOT/topologies/link-protocols-ualink.yaml" && note "fixture uber.yaml unchanged"
  fs run "$FX/uber.yaml" --out "$RES/uber"
  expect_bad_input "$RES/uber" "uber.yaml:" "link.channel.ber"
  fs run "$ROOT/topologies/link-protocols-ualink.yaml" --set link.channel.ber=1e-9 --out "$RES/uber2"
  expect_bad_input "$RES/uber2" "link.channel.ber" "model: independent"
}
t_protocols_quick_study() {
  fs sweep "$ROOT/topologies/studies/link-protocols-quick.yaml" --jobs 2 --out "$RES/lpq"
  [[ $rc -eq 0 ]] || { note "sweep exit $rc"; show_output; return; }
  local why
  why=$(python3 - "$RES/lpq/results.csv" 2>&1 <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
hdr = open(sys.argv[1]).readline().strip()
if hdr != "protocol,channel,wire_ber,seed,goodput_gbps,p99_latency_ns,retransmitted_bytes,reverse_bytes":
    sys.exit("header is " + hdr)
P = {"ualink-fixed-strong", "ualink-preface", "rifl", "rifl+LIGHT"}
if len(rows) != 16 or {r["protocol"] for r in rows} != P:
    sys.exit("expected 16 rows over %s, got %d rows over %s" % (P, len(rows), {r["protocol"] for r in rows}))
at = {(r["protocol"], r["channel"], r["wire_ber"]): r for r in rows}
g = lambda p, b, k="goodput_gbps", ch="independent": float(at[(p, ch, b)][k])
wire = 400.0
# Capacities from the framing alone (no error at 1e-9 is likely in 1e8 bits):
strong = wire / 1.0625                 # a 640-B flit occupies 680 B under STRONG
rifl = wire * 640 / (22 * 32)          # a 640-B packet occupies 22 frames of 32 B (30 B payload each)
light = rifl * 5120 / 5248             # + 128 parity bits per 5120-bit codeword
for name, got, cap in [("ualink-fixed-strong", g("ualink-fixed-strong", "1e-09"), strong),
                       ("rifl", g("rifl", "1e-09"), rifl), ("rifl+LIGHT", g("rifl+LIGHT", "1e-09"), light)]:
    if not (0.99 * cap <= got <= cap * 1.0001):
        sys.exit("%s goodput at 1e-9 is %.3f, its framing allows %.3f" % (name, got, cap))
if not g("ualink-fixed-strong", "1e-09") > g("rifl", "1e-09"):
    sys.exit("fixed-strong's 6.25 %% overhead should beat RIFL's 640/704 framing at 1e-9")
# One-way wire latency at 1e-9: UALink 13.6 ns wire + 20 ns + 12 ns decode;
# RIFL 22 frames of 0.64 ns + 32 slots of delay (20 ns rounded up to slots).
if abs(g("ualink-fixed-strong", "1e-09", "p99_latency_ns") - 45.6) > 0.01:
    sys.exit("fixed-strong P99 at 1e-9 is %s, expected 45.6 ns" % g("ualink-fixed-strong", "1e-09", "p99_latency_ns"))
if abs(g("rifl", "1e-09", "p99_latency_ns") - 54 * 0.64) > 0.01:
    sys.exit("RIFL P99 at 1e-9 is %s, expected 34.56 ns" % g("rifl", "1e-09", "p99_latency_ns"))
for b in ["1e-09", "1e-07"]:  # (at 1e-5 RIFL's request frames outgrow the ACKs)
    # UALink acknowledges every flit with a 640-B control flit; RIFL sends requests only on errors
    # (a few recoveries at these BERs in 1e8 bits).
    if not g("ualink-fixed-strong", b, "reverse_bytes") >= 20000 * 640:
        sys.exit("UALink reverse bytes at %s below one ACK flit per flit" % b)
    if not g("rifl", b, "reverse_bytes") < g("ualink-fixed-strong", b, "reverse_bytes"):
        sys.exit("RIFL reverse bytes at %s not below UALink's" % b)
# STRONG corrects 15 symbols: at 1e-5 (0.05 symbol errors per flit) nothing is replayed;
# RIFL without FEC replays (a frame error every ~400 frames); LIGHT corrects every codeword
# (P(>= 5 symbol errors) ~ 3e-9 per codeword).
if g("ualink-fixed-strong", "1e-05", "retransmitted_bytes") != 0: sys.exit("fixed-strong replayed at 1e-5")
if not g("rifl", "1e-05", "retransmitted_bytes") > 0: sys.exit("RIFL did not replay at 1e-5")
if g("rifl+LIGHT", "1e-05", "retransmitted_bytes") != 0: sys.exit("RIFL+LIGHT replayed at 1e-5")
if not g("rifl+LIGHT", "1e-05") > g("rifl", "1e-05"): sys.exit("LIGHT FEC does not help RIFL at 1e-5")
ge = [r for r in rows if r["channel"] == "gilbert-elliott"]
if len(ge) != 4 or any(r["wire_ber"] for r in ge): sys.exit("burst-channel rows: %r" % ge)
PY
  ) || note "results.csv: $why"
}
t_protocols_bad_study() {
  # A variant of another run kind needs the study's columns; a rifl-link variant takes no policies.
  cat >"$FX/mix1.yaml" <<EOF2
study:
  name: mix1
  fabric: $ROOT/topologies/link-protocols-ualink.yaml
  seeds: {first: 1, count: 1}
  variants:
    - {name: r, fabric: $ROOT/topologies/link-protocols-rifl.yaml}
EOF2
  fs sweep "$FX/mix1.yaml" --out "$RES/mix1"
  expect_bad_input "$RES/mix1" "mix1.yaml:6:" "fabric" "columns"
  cat >"$FX/mix2.yaml" <<EOF2
study:
  name: mix2
  fabric: $ROOT/topologies/link-protocols-ualink.yaml
  seeds: {first: 1, count: 1}
  columns: [protocol, seed, goodput_gbps]
  metrics: [goodput_gbps]
  variants:
    - {name: r, fabric: $ROOT/topologies/link-protocols-rifl.yaml, policies: [preface]}
EOF2
  fs sweep "$FX/mix2.yaml" --out "$RES/mix2"
  expect_bad_input "$RES/mix2" "mix2.yaml:8:" "policies" "no link policy"
  cat >"$FX/mix3.yaml" <<EOF2
study:
  name: mix3
  fabric: $ROOT/topologies/link-protocols-ualink.yaml
  seeds: {first: 1, count: 1}
  columns: [protocol, seed, p99_us]
  metrics: [p99_us]
  variants:
    - {name: r, fabric: $ROOT/topologies/link-protocols-rifl.yaml}
EOF2
  fs sweep "$FX/mix3.yaml" --out "$RES/mix3"
  expect_bad_input "$RES/mix3" "mix3.yaml:8:" "'p99_us' is not a result column of a rifl-link run"
  # A variant's name is a folder name under points/: no separator or control character.
  local k=4 vname
  for vname in '"../up"' '"a/b"' '"two\nlines"' '".hidden"' "$(printf 'v%.0s' {1..101})"; do
    cat >"$FX/mix$k.yaml" <<EOF2
study:
  name: mix$k
  fabric: $ROOT/topologies/link-protocols-ualink.yaml
  seeds: {first: 1, count: 1}
  variants:
    - {name: ok}
    - {name: $vname}
EOF2
    fs sweep "$FX/mix$k.yaml" --out "$RES/mix$k"
    expect_bad_input "$RES/mix$k" "mix$k.yaml:7:" "study.variants[1].name" "plain folder name"
    k=$((k + 1))
  done
}
check "study variants of another run kind: columns required and checked, no policies on rifl-link, folder-safe names: exit 2, file:line:key" t_protocols_bad_study
t_seed_dependent_axis_column() {
  # A listed non-metric column that changes with the seed: a warning naming it,
  # and a seed column so that each row says which seed it is.
  cat >"$FX/sdax.yaml" <<EOF2
study:
  name: sdax
  fabric: $ROOT/topologies/rifl-link.yaml
  seeds: {first: 1, count: 2}
  set: {traffic.bytes: 2MB, rifl.channel.ber: 1e-6}
  columns: [ber, goodput_gbps, bandwidth_ratio]
  metrics: [bandwidth_ratio]
EOF2
  fs sweep "$FX/sdax.yaml" --out "$RES/sdax"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  grep -q "warning: column 'goodput_gbps' differs between seeds" "$ERR" || note "no warning naming goodput_gbps"
  [[ $(head -n 1 "$RES/sdax/results.csv") == seed,ber,goodput_gbps,bandwidth_ratio ]] ||
    note "header: $(head -n 1 "$RES/sdax/results.csv")"
  [[ $(cut -d, -f1 "$RES/sdax/results.csv" | tail -n +2 | tr '\n' ' ') == "1 2 " ]] || note "seed column: $(cat "$RES/sdax/results.csv")"
  # A result, not an axis: one cell of both seeds, the per-seed values beside it.
  python3 - "$RES/sdax/summary.json" "$RES/sdax/results.csv" <<'PY' || note "summary.json: $(head -c 600 "$RES/sdax/summary.json")"
import csv, json, sys
s = json.load(open(sys.argv[1]))
rows = list(csv.DictReader(open(sys.argv[2])))
assert "cells" not in s and "goodput_gbps" not in s, "split into cells, or goodput_gbps kept as an axis"
assert s["groups"]["none"]["n"] == 2, s["groups"]["none"]["n"]
got = [(e["seed"], e["value"]) for e in s["per_seed"]["goodput_gbps"]]
want = [(int(r["seed"]), float(r["goodput_gbps"])) for r in rows]
assert [g[0] for g in got] == [w[0] for w in want] and all(abs(g[1] - w[1]) <= 1e-3 * abs(w[1]) for g, w in zip(got, want)), (got, want)
PY
}
check "a listed column that changes with the seed: warning naming it, a seed column, one cell with its per-seed values" t_seed_dependent_axis_column
t_grid_duplicate_value() {
  cat >"$FX/gdup.yaml" <<EOF2
study:
  name: gdup
  fabric: $ROOT/topologies/ring8.yaml
  seeds: {first: 1, count: 1}
  grid: {fabric.accelerators: [8, 16, 8]}
EOF2
  fs sweep "$FX/gdup.yaml" --out "$RES/gdup"
  expect_bad_input "$RES/gdup" "gdup.yaml:5:" "study.grid" "lists the value '8' twice"
  # a boolean and a file path written two ways are one value too
  sed 's/grid: .*/grid: {workload.verify: [true, yes]}/' "$FX/gdup.yaml" >"$FX/gdupb.yaml"
  fs sweep "$FX/gdupb.yaml" --out "$RES/gdup"
  expect_bad_input "$RES/gdup" "gdupb.yaml:5:" "study.grid" "'true'" "'yes'" "the same value written two ways"
  sed 's|grid: .*|grid: {workload.schedule: [schedules/ring-allreduce-8.xml, ./schedules/../schedules/ring-allreduce-8.xml]}|' \
    "$FX/gdup.yaml" >"$FX/gdupp.yaml"
  fs sweep "$FX/gdupp.yaml" --out "$RES/gdup"
  expect_bad_input "$RES/gdup" "gdupp.yaml:5:" "study.grid" "the same value written two ways"
  # an absolute path and one relative to the fabric file, or a symbolic link, naming the same file
  ln -sf "$ROOT/topologies/schedules/ring-allreduce-8.xml" "$FX/link-to-ring8.xml"
  sed "s|grid: .*|grid: {workload.schedule: [schedules/ring-allreduce-8.xml, $ROOT/topologies/schedules/ring-allreduce-8.xml]}|" \
    "$FX/gdup.yaml" >"$FX/gdupa.yaml"
  fs sweep "$FX/gdupa.yaml" --out "$RES/gdup"
  expect_bad_input "$RES/gdup" "gdupa.yaml:5:" "study.grid" "the same value written two ways"
  sed "s|grid: .*|grid: {workload.schedule: [$FX/link-to-ring8.xml, schedules/ring-allreduce-8.xml]}|" \
    "$FX/gdup.yaml" >"$FX/gdupl.yaml"
  fs sweep "$FX/gdupl.yaml" --out "$RES/gdup"
  expect_bad_input "$RES/gdup" "gdupl.yaml:5:" "study.grid" "the same value written two ways"
}
check "a grid value listed twice: exit 2, file:line, key" t_grid_duplicate_value
t_out_not_created_leaves_nothing() {
  # An --out whose last name is too long: exit 2, and none of the folders
  # created on the way to it is left; --collect into a missing folder creates none.
  local long
  long=$(printf 'x%.0s' {1..300})
  fs run "$TOPO" --quiet --out "$RES/o1/sub/$long"
  [[ $rc -eq 2 ]] || note "run: exit $rc, expected 2"
  [[ ! -e $RES/o1 ]] || note "run left $(find "$RES/o1" | head -3 | tr '\n' ' ')"
  fs sweep "$SWEEP_STUDY" --out "$RES/o2/sub/$long"
  [[ $rc -eq 2 ]] || note "sweep: exit $rc, expected 2"
  [[ ! -e $RES/o2 ]] || note "sweep left $(find "$RES/o2" | head -3 | tr '\n' ' ')"
  fs sweep "$SWEEP_STUDY" --collect --out "$RES/o3/none"
  [[ $rc -eq 3 ]] || note "--collect: exit $rc, expected 3"
  [[ ! -e $RES/o3 ]] || note "--collect created $RES/o3"
}
check "an --out that cannot be created, or --collect into a missing folder, leaves no folder" t_out_not_created_leaves_nothing
t_per_variant_metrics() {
  # A link leg and a collective leg in one study: each variant's own metrics,
  # the other leg's cells empty, each cell summarised on its variant's metrics.
  cat >"$FX/legs.yaml" <<EOF2
study:
  name: legs
  fabric: $ROOT/topologies/link-protocols-ualink.yaml
  policies: [fixed-strong, preface]
  seeds: {first: 1, count: 2}
  columns: [variant, protocol, seed, goodput_gbps, time_us]
  metrics: [goodput_gbps]
  variants:
    - {name: link, set: {traffic.flits: 2000}}
    - {name: ring, fabric: $ROOT/topologies/ring8.yaml, metrics: [time_us], set: {workload.size: 64KiB, workload.data: false}}
EOF2
  fs sweep "$FX/legs.yaml" --jobs 2 --out "$RES/legs"
  [[ $rc -eq 0 ]] || { note "sweep exit $rc"; show_output; return; }
  local why
  why=$(python3 - "$RES/legs" 2>&1 <<'PY'
import csv, json, sys
d = sys.argv[1]
hdr = open(d + "/results.csv").readline().strip()
if hdr != "variant,protocol,seed,goodput_gbps,time_us": sys.exit("header is " + hdr)
rows = list(csv.DictReader(open(d + "/results.csv")))
if len(rows) != 8: sys.exit("expected 8 rows, got %d" % len(rows))
for r in rows:
    link = r["variant"] == "link"
    if link and not (r["time_us"] == "" and float(r["goodput_gbps"]) > 0): sys.exit("link row %r" % r)
    if not link and not (r["goodput_gbps"] == "" and float(r["time_us"]) > 0): sys.exit("ring row %r" % r)
s = json.load(open(d + "/summary.json"))
if s["metrics"] != ["goodput_gbps", "time_us"]: sys.exit("summary metrics %r" % s["metrics"])
cells = {c["variant"]: c for c in s["cells"]}
if set(cells) != {"link", "ring"}: sys.exit("cells %r" % list(cells))
if "metrics" in cells["link"] or cells["ring"]["metrics"] != ["time_us"]: sys.exit("cell metrics")
for v, m in [("link", "goodput_gbps"), ("ring", "time_us")]:
    g = cells[v]["groups"]
    if set(g) != {"fixed-strong", "preface"} or any(g[p]["n"] != 2 for p in g): sys.exit("%s groups %r" % (v, g))
    if set(g["preface"]["metrics"]) != {m}: sys.exit("%s summarised %r" % (v, list(g["preface"]["metrics"])))
    mean = sum(float(r[m]) for r in rows if r["variant"] == v and r["protocol"] == "ualink-preface") / 2
    if abs(g["preface"]["metrics"][m]["mean"] - mean) > 1e-3: sys.exit("%s mean %r vs rows %r" % (v, g, mean))
    if cells[v]["protocol_of_group"] != {"fixed-strong": "ualink-fixed-strong", "preface": "ualink-preface"}:
        sys.exit("protocol_of_group %r" % cells[v]["protocol_of_group"])
    if len(cells[v]["paired_deltas"]) != 2: sys.exit("%s paired deltas (both orders)" % v)
PY
  ) || note "legs: $why"
  # Bad input: a variant metric that is not a column; one its run kind's rows lack.
  sed -e 's/metrics: \[time_us\]/metrics: [busbw_GBps]/' "$FX/legs.yaml" >"$FX/legs2.yaml"
  fs sweep "$FX/legs2.yaml" --out "$RES/legs2"
  expect_bad_input "$RES/legs2" "legs2.yaml:10:" "metrics" "busbw_GBps" "not one of the columns"
  sed -e 's/metrics: \[time_us\]/metrics: [time_us, goodput_gbps]/' "$FX/legs.yaml" >"$FX/legs3.yaml"
  fs sweep "$FX/legs3.yaml" --out "$RES/legs3"
  expect_bad_input "$RES/legs3" "legs3.yaml:10:" "variants[1].metrics" "'goodput_gbps' is not a result column of a ring run"
}
check "a study of a link leg and a collective leg: per-variant metrics, the other leg's cells empty; bad metrics exit 2" t_per_variant_metrics
check "link-protocols: rifl.fec: bogus, link.channel.ber: 2, ber without model independent: exit 2, file:line:key" t_protocols_bad_input
check "link-protocols-quick: protocol column, goodput and latency as the framing implies, RIFL's reverse bytes below UALink's" t_protocols_quick_study
# --- RIFL links in fabrics (link.protocol: rifl) ------------------------------
t_rifl_fabric_runs() {
  local out="$RES/rifl-ring8"
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=rifl --set workload.size=1MiB --quiet --out "$out"
  [[ $rc -eq 0 ]] || { note "exit $rc, expected 0"; show_output; return; }
  grep -q '^allreduce,ring,8,1048576,262144,float,sum,[0-9.]*,[0-9.]*,[0-9.]*,true,[^,]*$' "$out/collectives.csv" ||
    note "collectives.csv has no correct row: $(tail -1 "$out/collectives.csv")"
  grep -q '"rifl_links"' "$out/result.json" || note "result.json has no rifl_links"
  grep -q '"protocol": "rifl"' "$out/result.json" || note "result.json does not echo the protocol"
  # The row names the protocol, channel and BER of every link (the protocol study's columns).
  python3 - "$out/result.json" <<'PY' || note "result.json row: protocol / channel / wire_ber not rifl / independent / 0"
import json, sys
r = json.load(open(sys.argv[1]))["row"]
sys.exit(0 if (r["protocol"], r["channel"], r["wire_ber"]) == ("rifl", "independent", "0") else 1)
PY
  # The light FEC below RIFL corrects what the CRC would otherwise send back:
  # at BER 1e-5 frames are retransmitted without it and none with LIGHT.
  local f
  for f in none LIGHT; do
    fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=rifl --set defaults.link.rifl.fec=$f \
      --set defaults.link.rifl.channel.ber=1e-5 --set workload.size=64KiB --quiet --out "$out-$f"
    [[ $rc -eq 0 ]] || { note "fec $f: exit $rc"; show_output; return; }
  done
  python3 - "$out-none/result.json" "$out-LIGHT/result.json" <<'PY' || note "RIFL at 1e-5: retransmissions without FEC, none with LIGHT, protocol rifl / rifl+LIGHT"
import json, sys
a, b = (json.load(open(f))["row"] for f in sys.argv[1:3])
ok = a["protocol"] == "rifl" and b["protocol"] == "rifl+LIGHT" and a["replayed_flits"] > 0 and b["replayed_flits"] == 0
ok = ok and a["time_us"] > b["time_us"] and a["wire_ber"] == b["wire_ber"] == "1e-05"
# the errors the FEC hid are in its codeword counters (there was no trace of them)
na, nb = (json.load(open(f))["rifl_links"] for f in sys.argv[1:3])
ok = ok and all("fec" not in d for d in na) and sum(d["fec"]["codewords_corrected"] for d in nb) > 0
ok = ok and all(d["fec"]["codewords_failed"] == 0 and d["hit_frames"] == 0 for d in nb)
sys.exit(0 if ok else 1)
PY
  [[ $(wc -l <"$out/links.csv") -eq 17 ]] || note "links.csv should have 16 directions"
  # Other collectives over RIFL links are exact too.
  local c ca
  for ca in reduce_scatter:ring allgather:ring alltoall:direct broadcast:ring allreduce:tree; do
    c=${ca%%:*}
    fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=rifl --set workload.collective=$c \
      --set workload.algorithm=${ca#*:} --set workload.size=256KiB --quiet --out "$RES/rifl-$c"
    [[ $rc -eq 0 ]] || { note "$c: exit $rc"; show_output; continue; }
    grep -q ',true,[^,]*$' "$RES/rifl-$c/collectives.csv" || note "$c: not correct: $(tail -1 "$RES/rifl-$c/collectives.csv")"
  done
}
t_rifl_fabric_bad_input() {
  local f
  # A link's own lane count with skews inherited for another: exit 2, not silently dropped.
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=rifl --set 'defaults.link.rifl.lane_skew=[0ns,1ns,2ns,3ns]' \
    --set 'link_overrides=[{index: 2, link: {rifl: {lanes: 2}}}]' --out "$RES/rfskew"
  expect_bad_input "$RES/rfskew" "link_overrides[0].link.rifl.lanes" "inherits lists 4 values"
  fs run "$ROOT/topologies/ring8.yaml" \
    --set 'link_overrides=[{index: 2, link: {propagation: 30ns}}, {index: 2, link: {propagation: 40ns}}]' \
    --out "$RES/rfskew"
  expect_bad_input "$RES/rfskew" "link_overrides[1].index" "link 2 is already overridden by link_overrides[0]"
  # Lane skew beyond the model's limit (2^19 slots one way): exit 2 in the link experiment too.
  fs check "$ROOT/topologies/rifl-link.yaml" --set 'rifl.lane_skew=[0ns,2ns,0ns,50ms]'
  [[ $rc -eq 2 ]] && grep -qF "beyond the model's limit of 2^19 slots" "$ERR" || note "50 ms of lane skew: exit $rc $(cat "$ERR")"
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=bogus --out "$RES/rfp"
  expect_bad_input "$RES/rfp" "--set defaults.link.protocol" "'bogus' is not one of: ualink, rifl"
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=rifl --set defaults.link.rifl.bogus=1 --out "$RES/rfk"
  expect_bad_input "$RES/rfk" "--set defaults.link.rifl.bogus" "unknown key 'defaults.link.rifl.bogus'"
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=rifl --set defaults.link.rifl.lane_rate=25Gb/s \
    --out "$RES/rfr"
  expect_bad_input "$RES/rfr" "defaults.link.rifl.lane_rate" "forward_rate / rifl.lanes"
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=rifl --set defaults.link.rifl.retransmit_buffer=64 \
    --out "$RES/rfb"
  expect_bad_input "$RES/rfb" "defaults.link.rifl.retransmit_buffer" "round trip bound"
  # A per-link overlay of a RIFL link with a UALink-only key (an FEC policy).
  f="$FX/rifl-policy.yaml"
  { cat "$ROOT/topologies/ring8.yaml"; printf 'link_overrides:\n  - index: 3\n    link:\n      protocol: rifl\n      policy: {name: fixed-strong}\n'; } >"$f"
  fs run "$f" --out "$RES/rfpol"
  expect_bad_input "$RES/rfpol" "rifl-policy.yaml:$(($(wc -l <"$ROOT/topologies/ring8.yaml") + 5)):" \
    "link_overrides[0].link.policy" "protocol: rifl"
  # rifl: on a link that stays ualink.
  f="$FX/rifl-on-ualink.yaml"
  { cat "$ROOT/topologies/ring8.yaml"; printf 'link_overrides:\n  - index: 1\n    link:\n      rifl: {lanes: 2}\n'; } >"$f"
  fs run "$f" --out "$RES/rfu"
  expect_bad_input "$RES/rfu" "rifl-on-ualink.yaml:" "link_overrides[0].link.rifl" "protocol: rifl"
}
t_rifl_fabric_no_progress() {
  fs run "$ROOT/topologies/ring8.yaml" --set fabric.accelerators=2 --set defaults.link.protocol=rifl \
    --set defaults.link.rifl.channel.ber=0.01 --set workload.size=64KiB --quiet --out "$RES/rfstall"
  [[ $rc -eq 3 ]] || note "exit status $rc, expected 3"
  grep -q "makes no progress" "$ERR" || { note "no diagnosis on stderr"; show_output; }
  [[ ! -e $RES/rfstall/result.json ]] || note "result.json written for a run that could not finish"
}
check "ring8 with --set defaults.link.protocol=rifl: exit 0, every collective correct, rifl_links in result.json" t_rifl_fabric_runs
check "RIFL links: bad protocol, unknown rifl key, lane_rate, small buffer, UALink-only key, rifl: on ualink: exit 2, file:line:key" t_rifl_fabric_bad_input
check "a RIFL link that cannot progress ends the fabric run with a diagnosis (exit 3)" t_rifl_fabric_no_progress
t_rifl_defaults_without_rifl_links() {
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.link.rifl.lanes=4 --out "$RES/rifldef"
  expect_bad_input "$RES/rifldef" "--set defaults.link.rifl.lanes" "no link of this fabric has protocol: rifl"
}
check "defaults.link.rifl on a fabric without RIFL links (it would configure nothing): exit 2" t_rifl_defaults_without_rifl_links
t_rifl_fabric_trace() {
  # --trace on RIFL links: one span per recovery; together they replay exactly
  # the frames result.json counts as retransmitted; the run is unchanged by tracing.
  # At 1e-6 some recoveries are still open when the run ends: spans ending there.
  local ber
  for ber in 1e-7 1e-6; do
  local a=(run "$ROOT/topologies/ring8.yaml" --set defaults.link.protocol=rifl --set defaults.link.rifl.channel.ber=$ber
    --set workload.size=1MiB --quiet)
  fs "${a[@]}" --trace --out "$RES/rtr1"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  fs "${a[@]}" --out "$RES/rtr2"
  cmp -s "$RES/rtr1/collectives.csv" "$RES/rtr2/collectives.csv" || note "collectives.csv differs with --trace"
  cmp -s "$RES/rtr1/links.csv" "$RES/rtr2/links.csv" || note "links.csv differs with --trace"
  local why
  why=$(python3 - "$RES/rtr1" "$ber" 2>&1 <<'PY'
import json, sys
d = sys.argv[1]
r = json.load(open(d + "/result.json"))
ev = json.load(open(d + "/trace.json"))["traceEvents"]
spans = [e for e in ev if e.get("cat") == "retransmit"]
names = {e["tid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("pid") == 2 and e["name"] == "thread_name"}
want = sum(l["retransmitted_frames"] for l in r["rifl_links"])
if not spans or want == 0: sys.exit("no recoveries to trace (%d spans, %d frames)" % (len(spans), want))
got = sum(e["args"]["replayed_frames"] for e in spans)
if got != want: sys.exit("spans replay %d frames, result.json retransmitted %d" % (got, want))
for e in spans:
    a = e["args"]
    n = names.get(e["tid"])
    if n != "%s lane %d %s" % (a["link"], a["lane"], a["direction"]): sys.exit("track %r named %r" % (e["tid"], n))
    if not (e["pid"] == 2 and (e["dur"] > 0 or a["open_at_end"]) and 0 <= e["ts"]): sys.exit("span %r" % e)
if len(spans) > sum(l["retrans_entries"] for l in r["rifl_links"]): sys.exit("more spans than entries into Retrans")
if sys.argv[2] == "1e-6" and not any(e["args"]["open_at_end"] for e in spans): sys.exit("no recovery open at the end")
PY
  ) || note "trace at BER $ber: $why"
  done
}
check "--trace on RIFL fabric links: a span per recovery, replaying exactly the retransmitted frames; results unchanged" t_rifl_fabric_trace

# Input text: a byte that is not UTF-8 (a Latin-1 name) in a fabric file, a
# --set value or a schedule is exit 2 at load naming file:line or the --set,
# before anything runs (it used to surface as a JSON error after the run, exit
# 1, with the CSV tables written); a study is refused the same way. A file with
# a second YAML document, a --set map with a key twice, and an XML attribute
# given twice were read as their first part without a word.
t_input_text_rules() {
  local ff=$'\xff'  # (not "bad": the harness's failure flag)
  printf 'fabric:\n  name: "ring%s8"\n  kind: ring\n  accelerators: 8\n' "$ff" >"$FX/latin1.yaml"
  fs run "$FX/latin1.yaml" --out "$RES/latin1"
  expect_bad_input "$RES/latin1" "latin1.yaml:2:14: byte 0xff is not UTF-8"
  fs run "$ROOT/topologies/ring8.yaml" --set "fabric.name=ring$ff" --out "$RES/latin1-set"
  expect_bad_input "$RES/latin1-set" "--set fabric.name: byte 0xff at position 17"
  fs check "$ROOT/topologies/ring8.yaml" --set "fabric.name=ring$ff" --dot "$RES/latin1.dot"
  expect_bad_input "$RES/latin1.dot" "--set fabric.name: byte 0xff"
  printf 'study:\n  name: "t%s"\n  fabric: %s\n' "$ff" "$ROOT/topologies/ring8.yaml" >"$FX/latin1-study.yaml"
  fs sweep "$FX/latin1-study.yaml" --out "$RES/latin1-study"
  expect_bad_input "$RES/latin1-study" "latin1-study.yaml:2:11: byte 0xff is not UTF-8"
  sed "s/<algo name=\"\\([^\"]*\\)\"/<algo name=\"\\1$ff\"/" "$SCHED_DIR/allreduce-2.xml" >"$FX/latin1.xml"
  cmp -s "$FX/latin1.xml" "$SCHED_DIR/allreduce-2.xml" && note "fixture latin1.xml: the sed did not apply"
  fs run "$SCHED_FAB" --set "workload.schedule=$FX/latin1.xml" --out "$RES/latin1-xml"
  expect_bad_input "$RES/latin1-xml" "latin1.xml:2:24: byte 0xff is not UTF-8" "workload.schedule"

  { cat "$ROOT/topologies/ring8.yaml"; echo "---"; echo "fabric: {name: x, kind: bogus}"; } >"$FX/two-docs.yaml"
  fs run "$FX/two-docs.yaml" --out "$RES/two-docs"
  expect_bad_input "$RES/two-docs" "two-docs.yaml: holds more than one YAML document (the second begins at line"
  fs run "$ROOT/topologies/ring8.yaml" --set 'workload={size: 64KiB, size: 1B}' --out "$RES/set-dup"
  expect_bad_input "$RES/set-dup" "--set workload: key 'workload.size': duplicate key"
  sed 's/<tb id="0" send="1"/<tb id="0" send="1" send="0"/' "$SCHED_DIR/allreduce-2.xml" >"$FX/dup-attr.xml"
  cmp -s "$FX/dup-attr.xml" "$SCHED_DIR/allreduce-2.xml" && note "fixture dup-attr.xml: the sed did not apply"
  fs run "$SCHED_FAB" --set "workload.schedule=$FX/dup-attr.xml" --out "$RES/dup-attr"
  expect_bad_input "$RES/dup-attr" "dup-attr.xml:" "<tb> gives attribute 'send' twice"

  # A path may hold any bytes: result.json writes U+FFFD for the bad one.
  cp "$ROOT/topologies/ring8.yaml" "$FX/ring$ff.yaml"
  fs run "$FX/ring$ff.yaml" --set workload.size=64KiB --quiet --out "$RES/latin1-path"
  [[ $rc -eq 0 ]] || { note "a fabric file whose name is not UTF-8: exit $rc"; show_output; return; }
  grep -q "ring"$'\xef\xbf\xbd'".yaml" "$RES/latin1-path/result.json" || note "result.json does not name the file with U+FFFD"
}
check "not UTF-8 in a file, a --set or a schedule, a second YAML document, a --set map key twice, an XML attribute twice: exit 2" t_input_text_rules

# Keys blamed where the user wrote them, and values no run can use.
t_input_blame_and_limits() {
  fs run "$ROOT/topologies/ring8.yaml" --set 'link_overrides=[{index: 1, link: {flit: 320B}}]' --out "$RES/ovr-flit"
  expect_bad_input "$RES/ovr-flit" "--set link_overrides: key 'link_overrides[0].link'" "uses 320 B"
  fs run "$ROOT/topologies/ring8.yaml" --set defaults.accelerator.memory=1KiB --out "$RES/mem"
  expect_bad_input "$RES/mem" "--set defaults.accelerator.memory: the collective needs" "acc0 has 1024 B"
  fs run "$ROOT/topologies/link-primary.yaml" --set 'link.fec_profiles[0].overhead=100%' --out "$RES/fec-order"
  expect_bad_input "$RES/fec-order" "key 'link.fec_profiles[1]'" "'LIGHT' (2.5 % overhead, 4 symbols) follows fec_profiles[0] 'LOW' (100 %"
  fs run "$ROOT/topologies/link-primary.yaml" --set run.deadline=0ns --out "$RES/dl0"
  expect_bad_input "$RES/dl0" "--set run.deadline: must be above 0"
  fs run "$ROOT/topologies/ring8.yaml" --set run.deadline=0ns --out "$RES/dl0-ring"
  expect_bad_input "$RES/dl0-ring" "--set run.deadline: must be above 0"
  fs run "$ROOT/topologies/ring8.yaml" --set fabric.accelerators=3.5 --out "$RES/acc35"
  expect_bad_input "$RES/acc35" "expected a whole number in [2, 4096], got '3.5'"
  fs run "$ROOT/topologies/studies/ring-allreduce.yaml" --out "$RES/study-as-fabric"
  expect_bad_input "$RES/study-as-fabric" "key 'study': this file is a study, not a fabric: run it with \`fabricsim sweep FILE\`"
  fs run "$ROOT/topologies/ladders/frank2-switch-local.yaml" --out "$RES/ladder-as-fabric"
  expect_bad_input "$RES/ladder-as-fabric" "frank2-switch-local.yaml:5:3: key 'ladder': this file is a ladder, not a fabric"
  fs run "$ROOT/topologies/ring8.yaml" --seed 18446744073709551616 --out "$RES/seed-2-64"
  expect_bad_input "$RES/seed-2-64" "expected a whole number in [0, 2^64 - 1], got '18446744073709551616'"
  fs sweep "$ROOT/topologies/ring8.yaml" --out "$RES/fabric-as-study"
  expect_bad_input "$RES/fabric-as-study" "key 'fabric': this file is a fabric, not a study: run it with \`fabricsim run FILE\`"
  sed 's/^study:/stduy:/' "$ROOT/topologies/studies/ring-allreduce.yaml" >"$FX/stduy.yaml"
  fs sweep "$FX/stduy.yaml" --out "$RES/stduy"
  expect_bad_input "$RES/stduy" "stduy.yaml:" "key 'stduy': unknown key (did you mean 'study'?)"
  fs run "$ROOT/topologies/ring8.yaml" --set fabric.address_base=0xfffffffffffff000 --out "$RES/base"
  expect_bad_input "$RES/base" "--set fabric.address_base: no room for" "(placing acc0 from it)"
  { printf 'fabric:\n  name: big\n  kind: explicit\nnodes:\n'
    for i in $(seq 0 4096); do printf '  - {id: a%d, kind: accelerator}\n' "$i"; done; } >"$FX/bigexp.yaml"
  fs check "$FX/bigexp.yaml" --dot "$RES/bigexp/"
  expect_bad_input "$RES/bigexp" "bigexp.yaml:4101:" "key 'nodes[4096].kind': more than 4096 accelerators"
  fs run "$ROOT/topologies/ring8.yaml" --set "workload=$(printf '[%.0s' {1..5000})" --out "$RES/deepset"
  expect_bad_input "$RES/deepset" "--set workload: cannot parse value '[[[" "... (5000 bytes)': lists or maps nested more than"
  [[ $(wc -c <"$ERR") -lt 400 ]] || note "a 5000-byte --set value is echoed whole: $(wc -c <"$ERR") bytes"
  sed '/^  kind: ring/d' "$ROOT/topologies/ring8.yaml" >"$FX/nokind.yaml"
  fs run "$FX/nokind.yaml" --out "$RES/nokind"
  expect_bad_input "$RES/nokind" "key 'fabric.kind': required value is missing: one of link-pair, ring,"
  write_tiny lonely-switch.yaml 's/  - {id: sw0, kind: ualink-switch}/  - {id: sw0, kind: ualink-switch}\n  - {id: sw1, kind: ualink-switch}/'
  fs run "$FX/lonely-switch.yaml" --out "$RES/lonely-switch"
  expect_bad_input "$RES/lonely-switch" "lonely-switch.yaml:8:" "ualink-switch 'sw1' has no link"
  fs run --seed --out "$RES/no-seed" "$ROOT/topologies/ring8.yaml"
  expect_bad_input "$RES/no-seed" "--seed needs a value, not the option --out (fabricsim run --help"
  fs sweep "$ROOT/topologies/studies/ring-allreduce.yaml" --out "$RES/no-jobs" --jobs
  expect_bad_input "$RES/no-jobs" "--jobs needs a value (fabricsim sweep --help"
  touch "$FX/a-file"
  fs check "$ROOT/topologies/ring8.yaml" --dot "$FX/a-file/x.dot"
  expect_bad_input "$FX/a-file/x.dot" "--dot: cannot create the folder $FX/a-file: Not a directory"
  # a key of another fabric kind is named as such, not as an unknown key
  fs run "$ROOT/topologies/ring8.yaml" --set fabric.kind=link-pair --out "$RES/kind-lp"
  expect_bad_input "$RES/kind-lp" "ring8.yaml:8:" "key 'fabric.accelerators': a fabric of kind link-pair has no 'accelerators' (fabric.kind is 'link-pair'; 'accelerators' belongs to kind ring, switched-pod)"
  fs run "$ROOT/topologies/ring8.yaml" --set fabric.switches=4 --out "$RES/kind-sw"
  expect_bad_input "$RES/kind-sw" "--set fabric.switches: a fabric of kind ring has no 'switches'" "belongs to kind switched-pod, pcie-host)"
  fs run "$ROOT/topologies/frank1.yaml" --set fabric.accelerators=4 --out "$RES/kind-host"
  expect_bad_input "$RES/kind-host" "--set fabric.accelerators: a fabric of kind pcie-host has no 'accelerators'"
  sed '0,/s_chunks="0"/s//s_chunks="1000000"/' "$ROOT/topologies/schedules/ring-allreduce-8.xml" >"$FX/scratch-1m.xml"
  fs run "$ROOT/topologies/frank2.yaml" --set workload.algorithm=schedule --set "workload.schedule=$FX/scratch-1m.xml" \
    --set 'workload.group=[0,1,2,3,4,5,6,7]' --set workload.size=64KiB --out "$RES/scratch-1m"
  expect_bad_input "$RES/scratch-1m" "--set workload.schedule: real bytes need" "of buffers laid out by the schedule: input, output and scratch chunks"
  fs run "$ROOT/topologies/frank2.yaml" --set workload.mode=decode --set decode.selection=ladder --set decode.ladder=frank2.yaml --out "$RES/ladder-fabric"
  expect_bad_input "$RES/ladder-fabric" "frank2.yaml:9:3: key 'fabric': this file is a fabric, not a ladder" "(the ladder named by --set decode.ladder)"
  fs run "$ROOT/topologies/frank2.yaml" --set workload.ops=1000000000000 --out "$RES/ops-huge"
  expect_bad_input "$RES/ops-huge" "--set workload.ops: value 1000000000000 outside [0, 10000000]"
}
check "errors name the key the user wrote (overrides, memory, FEC order); run.deadline 0, a study given to run, a switch with no link, an option without its value, a fabric given to sweep, a misspelt study:, a missing kind, an explicit fabric of 4097 accelerators, a 5000-byte --set value (shown by its head), a fabric key of another kind (named with its kinds), 10^12 PCIe operations, a schedule whose scratch outgrows RAM (blamed on the schedule), a fabric given as a ladder: exit 2" t_input_blame_and_limits

t_numbers_written_other_ways() {
  fs sweep "$ROOT/topologies/studies/ring-allreduce.yaml" --jobs abc --out "$RES/jobs-abc"
  expect_bad_input "$RES/jobs-abc" "--jobs: 'abc' is not a whole number (give one in [1, 1024])"
  fs sweep "$ROOT/topologies/studies/ring-allreduce.yaml" --jobs 0 --out "$RES/jobs-0"
  expect_bad_input "$RES/jobs-0" "--jobs: 0 is outside [1, 1024]"
  # "-0" is 0 and "+8" is 8 for a whole-number key
  fs run "$ROOT/topologies/ring8.yaml" --set fabric.accelerators=-0 --out "$RES/acc-m0"
  expect_bad_input "$RES/acc-m0" "--set fabric.accelerators: value 0 outside [2, 4096]"
  fs run "$ROOT/topologies/ring8.yaml" --set fabric.accelerators=+8 --set workload.size=64KiB --quiet --out "$RES/acc-p8"
  [[ $rc -eq 0 && -s $RES/acc-p8/collectives.csv ]] || note "--set fabric.accelerators=+8: exit $rc"
  cat >"$FX/gsame.yaml" <<EOF2
study:
  name: gsame
  fabric: $ROOT/topologies/ring8.yaml
  seeds: {first: 1, count: 1}
  grid:
    workload.size: [64KiB,
                    1MiB, 1048576B]
EOF2
  fs sweep "$FX/gsame.yaml" --out "$RES/gsame"
  expect_bad_input "$RES/gsame" "gsame.yaml:6:" "study.grid" "'workload.size' lists '1MiB' (line 7) and '1048576B' (line 7), the same value written two ways"
}
check "numbers written other ways: --jobs abc / 0, -0 and +8 for a whole number, one grid value in two units: exit 2 with the reason" t_numbers_written_other_ways

# A schedule found in the current folder: once a file of that name appears
# beside the fabric file (where it is looked for first), the point reruns.
t_schedule_resolution_changes() {
  local d="$TMP/sched-resolve" out="$RES/sched-resolve" m1 m2
  rm -rf "$d"
  mkdir -p "$d/fab"
  cp "$ROOT/topologies/ring8.yaml" "$d/fab/ring8.yaml"
  cp "$ROOT/topologies/schedules/ring-allreduce-8.xml" "$d/sch.xml"
  cat >"$d/st.yaml" <<'YAML'
study:
  name: sched-resolve
  fabric: fab/ring8.yaml
  seeds: {first: 1, count: 1}
  set: {workload.algorithm: schedule, workload.size: 64KiB, workload.schedule: sch.xml}
YAML
  run_in "$d" sweep st.yaml --jobs 1 --out "$out"
  [[ $rc -eq 0 ]] || { note "sweep: exit $rc"; show_output; return; }
  grep -q '"absent": true' "$out"/points/*/s1/result.json || note "result.json does not list fab/sch.xml as looked for and absent"
  m1=$(mtimes "$out")
  run_in "$d" sweep st.yaml --jobs 1 --out "$out"
  grep -q "1 reused, 0 to run" "$OUT" || note "an unchanged study did not reuse its point: $(head -1 "$OUT")"
  cp "$ROOT/topologies/schedules/allpairs-allreduce-8.xml" "$d/fab/sch.xml"
  run_in "$d" sweep st.yaml --jobs 1 --out "$out"
  [[ $rc -eq 0 ]] || { note "sweep after the new file: exit $rc"; show_output; return; }
  grep -qF "0 reused, 1 to run" "$OUT" || note "the point was reused although its schedule now resolves to fab/sch.xml"
  grep -qF "now exists" "$OUT" || note "the reason does not say the file now exists: $(head -1 "$OUT")"
  m2=$(mtimes "$out")
  [[ $m1 != "$m2" ]] || note "the point's result.json was not rewritten"
}
check "sweep resume: a schedule that now resolves to another file reruns its point" t_schedule_resolution_changes

# What a run or a sweep would replace must be a file, checked before anything
# runs; outputs that cannot be written after the run leave none behind.
t_outputs_that_cannot_be_written() {
  mkfifo "$TMP/dotfifo"
  fs check "$ROOT/topologies/ring8.yaml" --dot "$TMP/dotfifo"
  [[ $rc -eq 2 && -p $TMP/dotfifo ]] || note "--dot FIFO: exit $rc, or the FIFO was replaced"
  grep -qF "exists and is not a regular file" "$ERR" || { note "--dot FIFO: no reason"; show_output; }
  rm -f "$TMP/dotfifo"
  # an XML schedule given as the fabric
  fs check "$ROOT/topologies/schedules/ring-allreduce-8.xml"
  expect_bad_input "$RES/none" "ring-allreduce-8.xml:1:1: an XML file (an MSCCL-style schedule?)" "workload.schedule"
  # one message beyond a TLM burst's 32-bit length
  fs run "$ROOT/topologies/link-primary.yaml" --set link.flit=1MiB --out "$RES/burst"
  expect_bad_input "$RES/burst" "traffic.message_flits" "must be under 4 GiB"
  # credits belong to fabrics: the link experiment refuses rx_buffer
  fs run "$ROOT/topologies/link-primary.yaml" --set link.rx_buffer=8 --out "$RES/rxbuf"
  expect_bad_input "$RES/rxbuf" "link.rx_buffer" "applies to fabrics"
  # ... nor does its result.json echo one (it showed rx_buffer_flits: 64)
  fs run "$ROOT/topologies/link-primary.yaml" --set traffic.flits=100 --quiet --out "$RES/rxbuf-echo"
  grep -q rx_buffer "$RES/rxbuf-echo/result.json" && note "the link experiment's result.json echoes an rx_buffer"
  # sweep --out whose points/ is a file, whose results.csv is a folder
  local st="$ROOT/topologies/studies/link-protocols-quick.yaml"
  mkdir -p "$RES/sw-pf" && touch "$RES/sw-pf/points"
  fs sweep "$st" --out "$RES/sw-pf"
  [[ $rc -eq 2 && ! -s $RES/sw-pf/points ]] || note "points/ a file: exit $rc"
  grep -qF "'points' there is not a folder" "$ERR" || { note "points/ a file: no reason"; show_output; }
  grep -q "to run" "$OUT" && note "points/ a file: the sweep started"
  mkdir -p "$RES/sw-rd/results.csv/x"
  fs sweep "$st" --out "$RES/sw-rd"
  [[ $rc -eq 2 && -d $RES/sw-rd/results.csv/x ]] || note "results.csv a folder: exit $rc"
  grep -qF "'results.csv' there is not a file the sweep can replace" "$ERR" || { note "results.csv a folder: no reason"; show_output; }
  # a full disk while the outputs are written (root only: an 8-KiB tmpfs holds two of the three files)
  if [[ $(id -u) -eq 0 ]] && mkdir -p "$TMP/small" && mount -t tmpfs -o size=8k tmpfs "$TMP/small" 2>/dev/null; then
    fs run "$ROOT/topologies/ring8.yaml" --set workload.size=64KiB --quiet --out "$TMP/small/r"
    [[ $rc -eq 3 ]] || note "full disk: exit $rc, expected 3"
    grep -qF "outputs could not be written" "$ERR" || { note "full disk: no diagnosis"; show_output; }
    [[ -z $(ls -A "$TMP/small" 2>/dev/null) ]] || note "full disk: left $(ls -R "$TMP/small" | tr '\n' ' ')"
    umount "$TMP/small"
  fi
}
check "outputs: --dot onto a FIFO, an XML file as the fabric, a burst over 4 GiB, sweep --out holding a file or folder in the way, a full disk" t_outputs_that_cannot_be_written

# Two sweeps into one --out: the second is refused before it touches anything;
# the shares of a job array may run at once (a shared lock), not beside a
# whole sweep. The lock is held here by flock(1), as a running sweep holds it.
# hold_lock -x|-s PATH: another process holds a flock on PATH (for 60 s at
# most) once this returns; its pid in $held. release_lock ends it.
hold_lock() {
  local other=-s i
  [[ $1 == -s ]] && other=-x
  flock -o "$1" "$2" sleep 60 &
  held=$!
  for i in $(seq 100); do flock -n "$other" "$2" true || break; sleep 0.05; done
}
release_lock() {
  pkill -P "$held" 2>/dev/null
  kill "$held" 2>/dev/null
  wait "$held" 2>/dev/null
}
# refused_beside -x|-s LOCK REFUSED WHAT REASON ALLOWED: with LOCK (in $d/points) held,
# `sweep $st --shard REFUSED` is refused (exit 2, REASON, no point run) and
# `--shard ALLOWED` runs. Uses the caller's $st, $d and $held.
refused_beside() {
  rm -rf "$d/points/c"* && rm -f "$d/results.csv"
  hold_lock "$1" "$d/points/$2"
  fs sweep "$st" --shard "$3" --out "$d"
  [[ $rc -eq 2 ]] || note "$4: exit $rc, expected 2"
  grep -qF "$5" "$ERR" || { note "$4: no reason"; show_output; }
  [[ -z $(ls "$d/points") ]] || note "$4: it ran points ($(ls "$d/points" | tr '\n' ' '))"
  fs sweep "$st" --shard "$6" --out "$d"
  [[ $rc -eq 0 ]] || { note "$4: share $6 beside it: exit $rc, expected 0"; show_output; }
  release_lock
}

t_sweep_out_locked() {
  command -v flock >/dev/null || return 0
  local st="$ROOT/topologies/studies/link-protocols-quick.yaml" d="$RES/locked" held
  mkdir -p "$d" && echo "keep" >"$d/results.csv"
  hold_lock -x "$d"
  fs sweep "$st" --out "$d"
  [[ $rc -eq 2 ]] || note "a locked --out: exit $rc, expected 2"
  grep -qF "another sweep or run is writing there" "$ERR" || { note "a locked --out: no reason"; show_output; }
  [[ $(cat "$d/results.csv") == keep ]] || note "a locked --out: results.csv was touched"
  fs sweep "$st" --shard 1/3 --out "$d"
  [[ $rc -eq 2 ]] || note "a share beside a whole sweep: exit $rc, expected 2"
  release_lock
  hold_lock -s "$d"
  fs sweep "$st" --out "$d"
  [[ $rc -eq 2 ]] || note "a whole sweep beside a share: exit $rc, expected 2"
  fs sweep "$st" --shard 2/3 --out "$d"
  [[ $rc -eq 0 ]] || { note "a share beside another share: exit $rc, expected 0"; show_output; }
  release_lock
  # the same share twice at once (a requeued array task): the second is refused
  [[ -f $d/points/.share-2-of-3.lock ]] || note "share 2/3 left no lock file in points/"
  refused_beside -x .share-3-of-3.lock 3/3 "the same share twice" "share 3/3 is already running there" 1/3
  # a share of another split while shares of 4 run (their points overlap): refused; a share of 4 runs
  [[ -f $d/points/.split-of-3.lock ]] || note "share 1/3 left no split lock in points/"
  refused_beside -s .split-of-4.lock 2/3 "a share of 3 beside shares of 4" \
    "shares of a split into 4 are running there" 3/4
  fs sweep "$st" --shard 2/3 --out "$d"
  [[ $rc -eq 0 ]] || { note "a share of 3 once the shares of 4 ended: exit $rc, expected 0"; show_output; }
  return 0
}
check "sweep: a second sweep into a --out in use is refused (exit 2); shares run side by side, the same share twice or a share of another split is refused" t_sweep_out_locked

# A run takes the sweep's lock on its --out: a second run (or a run beside a
# sweep) into a folder in use is refused before it removes anything there.
t_run_out_locked() {
  command -v flock >/dev/null || return 0
  local d="$RES/runlocked" held
  mkdir -p "$d" && echo "keep" >"$d/result.json"
  hold_lock -x "$d"
  fs run "$ROOT/topologies/ring8.yaml" --set workload.size=64KiB --quiet --out "$d"
  [[ $rc -eq 2 ]] || note "a run into a locked --out: exit $rc, expected 2"
  grep -qF "another run or sweep is writing there" "$ERR" || { note "a run into a locked --out: no reason"; show_output; }
  [[ $(cat "$d/result.json") == keep ]] || note "a run into a locked --out touched the previous result.json"
  release_lock
  hold_lock -s "$d"  # a share of a sweep
  fs run "$ROOT/topologies/ring8.yaml" --set workload.size=64KiB --quiet --out "$d"
  [[ $rc -eq 2 ]] || note "a run beside a sweep's share: exit $rc, expected 2"
  release_lock
  fs run "$ROOT/topologies/ring8.yaml" --set workload.size=64KiB --quiet --out "$d"
  [[ $rc -eq 0 && -s $d/collectives.csv ]] || { note "a run once the lock is released: exit $rc"; show_output; }
  [[ $(cat "$d/result.json") != keep ]] || note "the run left the previous result.json"
  # a run holds its folder: a sweep into it is refused while it runs
  "$BIN" run "$ROOT/topologies/ring8.yaml" --set workload.size=8MiB --quiet --out "$d" >/dev/null 2>&1 &
  local runner=$! i
  for i in $(seq 100); do flock -n -x "$d" true || break; sleep 0.05; done
  fs sweep "$ROOT/topologies/studies/link-protocols-quick.yaml" --out "$d"
  [[ $rc -eq 2 ]] || note "a sweep beside a run: exit $rc, expected 2"
  wait "$runner"
  return 0
}
check "run: a run into a --out that a run or sweep writes is refused (exit 2, nothing removed); a sweep beside a run too" t_run_out_locked

# An input kept under an output's name in --out (result.json, summary.json)
# would be replaced by the run or sweep: refused, the file left as it was.
t_out_keeps_inputs() {
  mkdir -p "$RES/oki-run" "$RES/oki-sweep"
  cp "$ROOT/topologies/ring8.yaml" "$RES/oki-run/result.json"
  fs run "$RES/oki-run/result.json" --set workload.size=64KiB --out "$RES/oki-run"
  expect_bad_input "$RES/oki-run/collectives.csv" "--out '$RES/oki-run': 'result.json' there is $RES/oki-run/result.json, an input of this run, and the run would replace it"
  cmp -s "$ROOT/topologies/ring8.yaml" "$RES/oki-run/result.json" || note "run: the fabric file saved as result.json was changed"
  sed "s#fabric: ../ring8.yaml#fabric: $ROOT/topologies/ring8.yaml#" "$ROOT/topologies/studies/ring-allreduce.yaml" >"$RES/oki-sweep/summary.json"
  cp "$RES/oki-sweep/summary.json" "$FX/oki-study.yaml"
  fs sweep "$RES/oki-sweep/summary.json" --out "$RES/oki-sweep"
  expect_bad_input "$RES/oki-sweep/results.csv" "'summary.json' there is $RES/oki-sweep/summary.json, an input of this sweep, and the sweep would replace it"
  cmp -s "$FX/oki-study.yaml" "$RES/oki-sweep/summary.json" || note "sweep: the study saved as summary.json was changed"
}
# A PCIe run of one operation ends after microseconds; its trace's stall
# windows end with it (they were drawn to the cell's duration, ~1 s later).
t_host_trace_ends_with_run() {
  fs run "$ROOT/topologies/frank2.yaml" --set workload.ops=1 --trace --quiet --out "$RES/htrace"
  [[ $rc -eq 0 ]] || { note "exit $rc"; return; }
  python3 - "$RES/htrace" <<'EOF2' || note "a trace event ends after the run"
import json, sys
d = sys.argv[1]
ev = json.load(open(d + "/trace.json"))["traceEvents"]
end_us = json.load(open(d + "/result.json"))["cell"]["simulated_s"] * 1e6
last = max(e.get("ts", 0) + e.get("dur", 0) for e in ev)
stalls = [e for e in ev if e.get("cat") == "stall"]
sys.exit(0 if stalls and last <= end_us + 1e-6 else 1)
EOF2
}
check "PCIe host --trace: a run of one operation draws its stall windows up to its end, not the cell's duration" t_host_trace_ends_with_run
check "run / sweep: an input kept in --out under an output's name (result.json, summary.json) is refused, exit 2, the file unchanged" t_out_keeps_inputs

# check --dot never overwrites an input of the check or a file that is not a DOT graph.
t_check_dot_keeps_inputs() {
  write_tiny dotin.yaml
  cp "$FX/dotin.yaml" "$RES/dotin.copy"
  fs check "$FX/dotin.yaml" --dot "$FX/dotin.yaml"
  [[ $rc -eq 2 ]] || note "--dot naming the fabric file: exit $rc, expected 2"
  grep -qF "an input of this check" "$ERR" || { note "--dot naming the fabric file: no reason"; show_output; }
  cmp -s "$FX/dotin.yaml" "$RES/dotin.copy" || note "--dot overwrote the fabric file"
  echo "my notes" >"$RES/notes.txt"
  fs check "$FX/dotin.yaml" --dot "$RES/notes.txt"
  [[ $rc -eq 2 ]] || note "--dot naming a file that is not DOT: exit $rc, expected 2"
  grep -qF "is not a DOT graph" "$ERR" || { note "--dot naming a text file: no reason"; show_output; }
  [[ $(cat "$RES/notes.txt") == "my notes" ]] || note "--dot overwrote a text file"
  fs check "$FX/dotin.yaml" --dot "$RES/again.dot"
  fs check "$FX/dotin.yaml" --dot "$RES/again.dot"
  [[ $rc -eq 0 ]] || { note "--dot over a DOT file it wrote before: exit $rc, expected 0"; show_output; }
}
check "check: --dot refuses to overwrite an input (the fabric) or a file that is not a DOT graph (exit 2, the file kept)" t_check_dot_keeps_inputs

# Input the parsers would misreport: a file with CR-only line endings (every
# error on "line 1"), a null, list or empty key, text inside an MSCCL element.
t_odd_input_named() {
  printf 'fabric:\r  kind: ring\r  accelerators: 8\r' >"$FX/cr.yaml"
  fs check "$FX/cr.yaml"
  expect_bad_input "$RES/none" "cr.yaml:1:8: a carriage return (CR) without a line feed"
  sed 's/^workload:/~: 3\nworkload:/' "$ROOT/topologies/ring8.yaml" >"$FX/nullkey.yaml"
  fs check "$FX/nullkey.yaml"
  expect_bad_input "$RES/none" "nullkey.yaml:" "a null (~ or null) used as a key"
  sed 's/^  kind: ring/  kind: ring\n  "": 3/' "$ROOT/topologies/ring8.yaml" >"$FX/emptykey.yaml"
  fs check "$FX/emptykey.yaml"
  expect_bad_input "$RES/none" "emptykey.yaml:" "an empty key" "(under 'fabric')"
  sed '0,/<tb id="0"\([^>]*\)>/s//<tb id="0"\1>x/' "$ROOT/topologies/schedules/ring-allreduce-8.xml" >"$FX/text.xml"
  fs check "$ROOT/topologies/ring8.yaml" --set workload.algorithm=schedule --set "workload.schedule=$FX/text.xml"
  expect_bad_input "$RES/none" "text.xml:" "text 'x' inside <tb>"
}
check "odd input named: CR-only line endings, a null / empty key, text inside <tb>: exit 2, file:line" t_odd_input_named

# SIGHUP (the terminal closed) is an interruption like SIGTERM; a sweep
# killed with SIGKILL leaves none of its points running.
t_hangup_and_killed_sweep() {
  (cd "$WORK" && timeout -s HUP 2 "$BIN" run "$ROOT/topologies/link-primary.yaml" --set traffic.flits=100000000 \
    --out "$RES/hup" >"$OUT" 2>"$ERR")
  grep -qF "interrupted (SIGHUP)" "$ERR" || { note "SIGHUP: no interruption line"; show_output; }
  [[ ! -e $RES/hup ]] || note "SIGHUP: the --out folder was left"
  local st="$ROOT/topologies/studies/rifl-ber-sweep-quick.yaml" i n=0
  (cd "$WORK" && exec "$BIN" sweep "$st" --jobs 2 --out "$RES/killed" >/dev/null 2>&1) &
  local sp=$!
  for i in $(seq 100); do
    n=$(pgrep -f -- "--out $RES/killed/points/" | wc -l)
    ((n > 0)) && break
    sleep 0.05
  done
  ((n > 0)) || note "the sweep started no point"
  kill -9 "$sp" 2>/dev/null
  wait "$sp" 2>/dev/null
  for i in $(seq 40); do
    n=$(pgrep -f -- "--out $RES/killed/points/" | wc -l)
    ((n == 0)) && break
    sleep 0.05
  done
  ((n == 0)) || { note "$n point(s) still running after the sweep was killed"; pkill -f -- "--out $RES/killed/points/"; }
}
check "SIGHUP stops a run like SIGTERM; a sweep killed with SIGKILL leaves no point running" t_hangup_and_killed_sweep

# bench validates a fabric's overrides in its own process (one error line, no
# banner, no child run); --shard names its limit.
t_bench_fabric_overrides_and_shard_limit() {
  fs bench "$ROOT/topologies/ring8.yaml" --set workload.size=bogus --repeat 1
  expect_bad_input "$RES/none" "--set workload.size"
  grep -q "bench:" "$OUT" && note "bench printed its banner before refusing the input"
  fs sweep "$ROOT/topologies/studies/link-protocols-quick.yaml" --shard 1/100001 --out "$RES/shardmax"
  expect_bad_input "$RES/shardmax" "--shard '1/100001'" "N <= 100000"
  # digits, '/', digits only: no blank, tab or sign (sscanf took them; "-4294967293" wrapped to 3)
  local v
  for v in " 1/3" $'\t1/3' "1/ 3" "+1/3" "1/+3" "1/-4294967293"; do
    fs sweep "$ROOT/topologies/studies/link-protocols-quick.yaml" --shard "$v" --out "$RES/shardform"
    expect_bad_input "$RES/shardform" "--shard '$v'" "expected I/N"
  done
  fs sweep "$ROOT/topologies/studies/link-protocols-quick.yaml" --shard 1/3 --shard 2/3 --out "$RES/shardtwice"
  expect_bad_input "$RES/shardtwice" "--shard is given 2 times: give it once"
  fs run --out "$RES/outtwice" --out "$RES/outtwice2"
  expect_bad_input "$RES/outtwice" "--out is given 2 times: give it once"
}
check "bench refuses a fabric's bad --set up front; --shard: its upper limit, digits only, once" t_bench_fabric_overrides_and_shard_limit

# bench: --set takes one value (a fabric after it is the fabric); a binary
# that exits 0 without writing is not timed against the previous repeat's
# result.json. run: a failed run removes every --out level it created.
t_bench_set_and_stale_against() {
  fs bench --set traffic.flits=100 "$ROOT/topologies/link-primary.yaml" --repeat 1
  [[ $rc -eq 0 ]] || { note "bench --set X FABRIC: exit $rc"; show_output; }
  printf '#!/bin/sh\nn=$(cat "%s" 2>/dev/null || echo 0); n=$((n+1)); echo $n >"%s"\n[ $n -eq 1 ] && exec "%s" "$@"\nexit 0\n' \
    "$FX/flaky.count" "$FX/flaky.count" "$BIN" >"$FX/flaky.sh"
  chmod +x "$FX/flaky.sh"
  rm -f "$FX/flaky.count"
  fs bench --repeat 3 --against "$FX/flaky.sh" "$ROOT/topologies/link-primary.yaml" --set traffic.flits=1000
  [[ $rc -eq 2 ]] || { note "bench against a binary that stops writing: exit $rc, expected 2"; show_output; }
  grep -q "is not a fabricsim result" "$ERR" || { note "bench: no message about the missing result"; show_output; }
  fs run "$ROOT/topologies/link-primary.yaml" --set run.deadline=1us --quiet --out "$RES/deep/1/2/3/4/5/6/7/8/9/10"
  [[ $rc -eq 3 ]] || note "run with a 1 us deadline: exit $rc, expected 3"
  [[ ! -e $RES/deep ]] || note "a failed run left folders it created: $(find "$RES/deep" | head -3 | tr '\n' ' ')"
}
check "bench: --set then the fabric; a binary that exits 0 without writing is refused (no stale result timed); a failed run removes all ten --out levels it created" t_bench_set_and_stale_against

# A share beyond the points (an array larger than the study) runs nothing
# and says so; exit 0.
t_empty_share() {
  fs sweep "$SWEEP_STUDY" --shard 7/9 --out "$RES/emptyshare"
  [[ $rc -eq 0 ]] || { note "an empty share: exit $rc, expected 0"; show_output; }
  grep -qF "warning: sweep cli-small-sweep share 7/9 holds no point: the study has 6 point(s), so shares 7..9 of 9 are empty" "$ERR" ||
    { note "an empty share: no warning"; show_output; }
  fs sweep "$SWEEP_STUDY" --shard 6/9 --jobs 1 --out "$RES/emptyshare"
  [[ $rc -eq 0 ]] || { note "share 6/9: exit $rc, expected 0"; show_output; }
  grep -qF "holds no point" "$ERR" && note "share 6/9 (one point) warned that it is empty"
  return 0
}
check "sweep --shard: a share beyond the study's points warns and exits 0" t_empty_share

# A misspelt study key is named as such (not as a required key missing), and
# a column misspelling a default metric is named before the default.
t_study_typos_named() {
  sed 's/^  seeds:/  sedes:/' "$SWEEP_STUDY" >"$FX/sedes.yaml"
  grep -q "sedes:" "$FX/sedes.yaml" || { note "fixture has no seeds: key"; return; }
  fs sweep "$FX/sedes.yaml" --out "$RES/sedes"
  expect_bad_input "$RES/sedes" "sedes.yaml:" "key 'study.sedes': unknown key (did you mean 'seeds'?)"
  cat >"$FX/tme.yaml" <<EOF2
study:
  name: tme
  fabric: $ROOT/topologies/ring8.yaml
  seeds: {first: 1, count: 2}
  columns: [ranks, policy, seed, tme_us]
EOF2
  fs sweep "$FX/tme.yaml" --out "$RES/tme"
  expect_bad_input "$RES/tme" "tme.yaml:5:" "'tme_us' is not a result column (did you mean 'time_us'?)"
  # A link-pair study whose default metric (goodput_gbps) is missing because
  # of a typo in another column: the typo is named, not the default metric.
  cat >"$FX/lp-tme.yaml" <<EOF2
study:
  name: lp-tme
  fabric: $ROOT/topologies/link-primary.yaml
  seeds: {first: 1, count: 1}
  columns: [policy, seed, goodput_gbs]
EOF2
  fs sweep "$FX/lp-tme.yaml" --out "$RES/lp-tme"
  expect_bad_input "$RES/lp-tme" "lp-tme.yaml:5:" "'goodput_gbs' is not a result column (did you mean 'goodput_gbps'?)"
  sed 's/goodput_gbs/tme_us/' "$FX/lp-tme.yaml" >"$FX/lp-tme2.yaml"
  fs sweep "$FX/lp-tme2.yaml" --out "$RES/lp-tme2"
  expect_bad_input "$RES/lp-tme2" "lp-tme2.yaml:5:" "'tme_us' is not a result column (known: "
}
check "study: a misspelt key (sedes) and a misspelt default metric among the columns are named, exit 2" t_study_typos_named
# The study's name as its default folder: a space becomes '_' as in a
# variant's folder (docs/user-guide.md); it was kept ("out/ok name").
t_study_name_folder() {
  mkdir -p "$FX/stname"
  cat >"$FX/stname/s.yaml" <<EOF2
study:
  name: "ok name"
  fabric: $ROOT/topologies/link-primary.yaml
  seeds: {first: 1, count: 1}
  set: {traffic.flits: 2000}
EOF2
  (cd "$FX/stname" && "$BIN" sweep s.yaml >/dev/null 2>&1) || { note "sweep failed"; return; }
  [[ -f "$FX/stname/out/ok_name/results.csv" && ! -e "$FX/stname/out/ok name" ]] ||
    note "default folder: $(ls "$FX/stname/out")"
}
check "study name with a space: default output folder out/ok_name" t_study_name_folder
# Policies on an all-RIFL fabric change nothing: the sweep says so (its
# points repeat the same runs); on UALink links it says nothing.
t_study_policies_on_rifl() {
  cat >"$FX/rifl-pol.yaml" <<EOF2
study:
  name: rifl-pol
  fabric: $ROOT/topologies/ring8.yaml
  policies: [fixed-strong, preface]
  seeds: {first: 1, count: 1}
  set: {workload.size: 64KiB, defaults.link.protocol: rifl}
EOF2
  fs sweep "$FX/rifl-pol.yaml" --out "$RES/rifl-pol"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  grep -q "warning: every link of the study runs RIFL.*2 policies' points are the same runs" "$ERR" ||
    { note "no warning about the policies"; show_output; }
  sed 's/, defaults.link.protocol: rifl//' "$FX/rifl-pol.yaml" >"$FX/ualink-pol.yaml"
  fs sweep "$FX/ualink-pol.yaml" --out "$RES/ualink-pol"
  [[ $rc -eq 0 ]] || { note "UALink: exit $rc"; show_output; return; }
  grep -q "runs RIFL" "$ERR" && note "the warning on UALink links"
}
check "study: several policies on an all-RIFL fabric are named in a warning (the same runs); none on UALink" t_study_policies_on_rifl
# A grid of six keys: its points' names outgrow a folder name (255 bytes);
# the sweep stopped with "File name too long", exit 1. The folder keeps 100
# bytes and a hash of the name; results.csv the whole name.
t_study_long_grid_names() {
  cat >"$FX/long-grid.yaml" <<EOF2
study:
  name: long-grid
  fabric: $ROOT/topologies/ring8.yaml
  seeds: {first: 5, count: 1}
  set: {workload.data: false, workload.size: 64KiB}
  grid:
    defaults.link.policy.post_decode.ewma_alpha: [0.25]
    defaults.link.policy.post_decode.raise_above: [0.2]
    defaults.link.policy.post_decode.lower_below: [0.01]
    defaults.link.channel.p_good_to_bad: [0.001]
    defaults.link.channel.p_bad_to_good: [0.5]
    defaults.accelerator.reduce_rate: [2TB/s, 1TB/s]
EOF2
  fs sweep "$FX/long-grid.yaml" --out "$RES/long-grid"
  [[ $rc -eq 0 ]] || { note "exit $rc"; show_output; return; }
  [[ $(ls "$RES/long-grid/points" | grep -c '^c00[01]-defaults.link.policy.post_decode.ewma_alpha=0.25;.*~[0-9a-f]\{16\}$') -eq 2 ]] ||
    note "point folders: $(ls "$RES/long-grid/points")"
  grep -q '^defaults.link.policy.post_decode.ewma_alpha=0.25;.*;defaults.accelerator.reduce_rate=1TB/s,' "$RES/long-grid/results.csv" ||
    note "results.csv lacks the whole variant name"
}
check "study grid of six keys: point folders of long names are shortened with a hash, the tables keep the name" t_study_long_grid_names

# MSCCL XML: only the predefined entities and character references of legal
# characters (an unknown entity stayed as text, &#0; cut the value); a
# minBytes above maxBytes fits no size.
t_xml_references_and_size_bounds() {
  local x="$ROOT/topologies/schedules/ring-allreduce-8.xml" sched=(--set workload.algorithm=schedule)
  sed '0,/name="[^"]*"/s//name="\&foo;"/' "$x" >"$FX/ent.xml"
  fs check "$ROOT/topologies/ring8.yaml" "${sched[@]}" --set "workload.schedule=$FX/ent.xml"
  expect_bad_input "$RES/none" "ent.xml:2:" "'&foo;' is not a reference XML knows here"
  sed '0,/name="[^"]*"/s//name="a\&#0;b"/' "$x" >"$FX/nul.xml"
  fs check "$ROOT/topologies/ring8.yaml" "${sched[@]}" --set "workload.schedule=$FX/nul.xml"
  expect_bad_input "$RES/none" "nul.xml:2:" "'&#0;'"
  sed '0,/name="[^"]*"/s//name="a\&amp;b\&#65;"/' "$x" >"$FX/amp.xml"
  fs check "$ROOT/topologies/ring8.yaml" "${sched[@]}" --set "workload.schedule=$FX/amp.xml" --dot "$RES/amp.dot"
  [[ $rc -eq 0 ]] || { note "&amp; and &#65;: exit $rc"; show_output; }
  grep -qF "schedule a&bA (" "$OUT" || { note "&amp; and &#65; not decoded"; show_output; }
  sed 's/minBytes="0" maxBytes="0"/minBytes="100" maxBytes="50"/' "$x" >"$FX/minmax.xml"
  fs check "$ROOT/topologies/ring8.yaml" "${sched[@]}" --set "workload.schedule=$FX/minmax.xml"
  expect_bad_input "$RES/none" "minmax.xml:2:" "minBytes=100 is above maxBytes=50"
}
check "MSCCL XML: an unknown entity or &#0; and minBytes above maxBytes: exit 2, file:line" t_xml_references_and_size_bounds

# Errors name what the user wrote: a --set of one list item, a study whose
# fabric (or a variant's) is no fabric file.
t_errors_name_the_cause() {
  fs run "$ROOT/topologies/ring8.yaml" --set 'defaults.link.fec_profiles[0]=3' --out "$RES/item"
  expect_bad_input "$RES/item" "--set defaults.link.fec_profiles[0]:" "item 0 must be a map"
  local st="$ROOT/topologies/studies/link-protocols-quick.yaml"
  sed "s|fabric: ../link-protocols-ualink.yaml|fabric: $st|" "$st" >"$FX/fabric-is-study.yaml"
  fs sweep "$FX/fabric-is-study.yaml" --out "$RES/fis"
  expect_bad_input "$RES/fis" "fabric-is-study.yaml:19:" "key 'study.fabric': in the file it names:" "this file is a study"
  sed -e "s|\.\./link-protocols-|$ROOT/topologies/link-protocols-|" \
    -e "0,/fabric: [^,]*link-protocols-rifl.yaml/s||fabric: $ROOT/topologies/schedules/ring-allreduce-8.xml|" "$st" \
    >"$FX/variant-xml.yaml"
  fs sweep "$FX/variant-xml.yaml" --out "$RES/fis"
  expect_bad_input "$RES/fis" "variant-xml.yaml:29:" "key 'study.variants[4].fabric': in the file it names:" "an XML file"
}
check "errors name the cause: a --set of a list item, a study or XML file as a study's fabric" t_errors_name_the_cause

# From the second break-it pass: a dangling symlink as --out is refused and
# kept; key paths that are no key paths in a study; a null key inside a --set
# value blamed on the --set; CR-only and stray text in schedules; a run whose
# sweep marker names a dead process stops saying so.
t_second_pass_findings() {
  ln -s "$TMP/nowhere" "$TMP/dang"
  fs sweep "$ROOT/topologies/studies/link-protocols-quick.yaml" --out "$TMP/dang"
  [[ $rc -eq 2 && -L $TMP/dang ]] || note "sweep --out dangling link: exit $rc, or the link was removed"
  grep -qF "symbolic link to nothing" "$ERR" || { note "sweep --out dangling link: no reason"; show_output; }
  fs run "$ROOT/topologies/ring8.yaml" --out "$TMP/dang/sub"
  [[ $rc -eq 2 && -L $TMP/dang ]] || note "run --out through a dangling link: exit $rc"
  printf 'study:\n  name: t\n  fabric: %s\n  policies: [preface]\n  seeds: {first: 1, count: 1}\n  set: {~: 1}\n' \
    "$ROOT/topologies/ring8.yaml" >"$FX/nullset.yaml"
  fs sweep "$FX/nullset.yaml" --out "$RES/nullset"
  expect_bad_input "$RES/nullset" "nullset.yaml:6:9: key 'study.set': a null key (~) is not a key path"
  fs check "$ROOT/topologies/ring8.yaml" --set 'workload={"": 1}'
  expect_bad_input "$RES/none" "--set workload: an empty key"
  local sched=(--set workload.algorithm=schedule)
  tr '\n' '\r' <"$ROOT/topologies/schedules/ring-allreduce-8.xml" >"$FX/cr-sched.xml"
  fs check "$ROOT/topologies/ring8.yaml" "${sched[@]}" --set "workload.schedule=$FX/cr-sched.xml"
  expect_bad_input "$RES/none" "cr-sched.xml:1:" "carriage return (CR) without a line feed"
  sed 's|</algo>|</algo>trailing|' "$ROOT/topologies/schedules/ring-allreduce-8.xml" >"$FX/trail.xml"
  fs check "$ROOT/topologies/ring8.yaml" "${sched[@]}" --set "workload.schedule=$FX/trail.xml"
  expect_bad_input "$RES/none" "trail.xml:" "text outside the <algo> element"
  (cd "$WORK" && FABRICSIM_SWEEP_POINT=999999999 exec "$BIN" run "$TOPO" --quiet --out "$RES/orphan") >"$OUT" 2>"$ERR"
  rc=$?
  [[ $rc -eq 3 && ! -e $RES/orphan ]] || note "a dead sweep's marker: exit $rc, expected 3 and nothing written"
  grep -qF "the sweep that started this run has ended" "$ERR" || { note "a dead sweep's marker: no reason"; show_output; }
  (cd "$WORK" && FABRICSIM_SWEEP_POINT=garbage exec "$BIN" run "$TOPO" --quiet --out "$RES/garbage") >"$OUT" 2>"$ERR"
  [[ $? -eq 0 ]] || { note "a garbage marker: the run did not run"; show_output; }
}
check "second pass: dangling --out link kept, study key paths, null key in a --set value, CR and stray text in schedules, a dead sweep's marker" t_second_pass_findings

echo "$passed passed, $failed failed"
((failed == 0))
