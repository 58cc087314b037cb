#!/usr/bin/env bash
# Results-must-not-change check (DEVELOPERS.md): run the shipped studies and
# the shipped fabrics with one fabricsim binary into OUT, so that two
# binaries (the commit before a change and the change) can be compared byte
# for byte:
#   tools/regress.sh BIN_BEFORE out/regress/before [--full]
#   tools/regress.sh BIN_AFTER  out/regress/after  [--full]
#   tools/regress.sh --compare out/regress/before out/regress/after
# --full adds frank2-transports (about 25 min on 2 cores). STUDIES="a b" and
# FABRICS="x y" (names under topologies/studies and topologies) pick a subset
# (frank2-selection alone takes about 55 min on 2 cores). Tables compared:
# every study's results.csv and summary.json, every fabric's collectives.csv and
# links.csv.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

# A run's CSV files end in a run_id column (seed + config hash, which also
# covers the program's inputs); results are compared without it, so tables of a
# binary that did not write it still compare.
strip_run_id() {
  if head -n 1 "$1" | grep -q ',run_id$'; then sed 's/,[^,]*$//' "$1"; else cat "$1"; fi
}

if [ "${1:-}" = "--compare" ]; then
  a=$2 b=$3 rc=0
  while IFS= read -r f; do
    rel=${f#"$a"/}
    if [ ! -f "$b/$rel" ]; then echo "MISSING $rel"; rc=1
    elif cmp -s "$f" "$b/$rel"; then echo "same    $rel"
    elif cmp -s <(strip_run_id "$f") <(strip_run_id "$b/$rel"); then echo "same    $rel (but the run_id column)"
    else echo "DIFFER  $rel"; rc=1; fi
  done < <(find "$a" \( -name results.csv -o -name summary.json -o -name collectives.csv -o -name links.csv \) -not -path '*/points/*' | sort)
  exit $rc
fi

bin=$(readlink -f "$1") out=$2 full=${3:-}
jobs=${JOBS:-2}
mkdir -p "$out"
studies="preface-primary preface-sensitivity long-run ring-allreduce frank2-transports-quick frank2-selection"
[ "$full" = "--full" ] && studies="$studies frank2-transports"
studies=${STUDIES:-$studies}
fabrics=${FABRICS:-ring8 ring16 ring32 ualink-pod-64 ualink-pod-1024 link-primary frank1 frank2}
for s in $studies; do
  start=$(date +%s)
  "$bin" sweep "$here/topologies/studies/$s.yaml" --jobs "$jobs" --out "$out/studies/$s" >"$out/$s.log" 2>&1
  echo "study $s: exit $? in $(( $(date +%s) - start )) s"
done
for f in $fabrics; do
  start=$(date +%s)
  "$bin" run "$here/topologies/$f.yaml" --quiet --out "$out/fabrics/$f" >"$out/$f.log" 2>&1
  echo "fabric $f: exit $? in $(( $(date +%s) - start )) s"
done
