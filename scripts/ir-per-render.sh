#!/usr/bin/env bash
# Instructions per render of `topograph bench render` under cachegrind: two runs of
# different lengths, so the fixed cost (loading, admitting the class) cancels out.
# Usage: ir-per-render.sh BINARY MODE [files...]
set -eu
bin=$1; mode=$2; shift 2
[ $# -gt 0 ] || set -- -f examples/quick-start/clusterclass.yaml -f examples/quick-start/cluster.yaml
run() {
  local d=$1; shift; local out; out=$(mktemp)
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$bin" bench render --mode "$mode" --duration "$d" "$@" 2>"$out.err" >"$out" || { cat "$out.err"; exit 1; }
  local ir renders
  ir=$(grep -E 'I\s+refs' "$out.err" | tr -d ',' | awk '{print $NF}')
  renders=$(grep -o '"renders": [0-9]*' "$out" | awk '{print $2}')
  echo "$ir $renders"
}
shift_args=("$@")
read -r ir1 n1 < <(run 1 "${shift_args[@]}")
read -r ir2 n2 < <(run 4 "${shift_args[@]}")
echo "mode=$mode renders=$n1/$n2 ir_per_render=$(( (ir2 - ir1) / (n2 - n1) ))"
