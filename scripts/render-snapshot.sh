#!/usr/bin/env bash
# Renders every example and real-world fixture (and some broken combinations) with the
# given topograph binary and writes stdout, stderr and the exit code of each case into
# the given directory, so two builds can be compared byte for byte (diff -r).
set -u
bin=$1; out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
rw=$root/../shared/real-world
mkdir -p "$out"
n=0
case_() { # name, args...
  local name=$1; shift
  "$bin" render "$@" >"$out/$name.out" 2>"$out/$name.err"; echo $? >"$out/$name.rc"
  n=$((n+1))
}
sets() { # values.env -> --set args, clusterctl defaults first
  local -A v=([CLUSTER_NAME]=dev [NAMESPACE]=default [KUBERNETES_VERSION]=v1.30.0 [CONTROL_PLANE_MACHINE_COUNT]=3 [WORKER_MACHINE_COUNT]=2)
  if [ -f "$1" ]; then
    while IFS= read -r line; do
      line=${line#"${line%%[![:space:]]*}"}
      [[ -z $line || $line == \#* || $line != *=* ]] && continue
      v[${line%%=*}]=${line#*=}
    done <"$1"
  fi
  for k in "${!v[@]}"; do printf -- '--set\0%s=%s\0' "$k" "${v[$k]}"; done
}
for ex in "$root"/examples/*/; do
  e=$(basename "$ex")
  for fmt in json yaml; do
    case_ "ex-$e-$fmt-explain" -o $fmt --explain -f "$ex/clusterclass.yaml" -f "$ex/cluster.yaml"
  done
  case_ "ex-$e-json" -o json -f "$ex/clusterclass.yaml" -f "$ex/cluster.yaml"
  for v in v1beta1 v1beta2; do
    case_ "ex-$e-$v" -o json --explain --api-version $v -f "$ex/clusterclass.yaml" -f "$ex/cluster.yaml"
  done
  case_ "err-$e-class-only" -o json --explain -f "$ex/clusterclass.yaml"
  case_ "err-$e-cluster-only" -o json --explain -f "$ex/cluster.yaml"
done
case_ "err-mixed-cluster-quick-class" -o json --explain -f "$root/examples/quick-start/clusterclass.yaml" -f "$root/examples/mixed/cluster.yaml"
case_ "err-quick-cluster-mixed-class" -o json --explain -f "$root/examples/mixed/clusterclass.yaml" -f "$root/examples/quick-start/cluster.yaml"
c=$rw/cluster-api-v1.10.10
mapfile -d '' S < <(sets /nonexistent)
case_ capi-quick-start -o json --explain "${S[@]}" -f "$c/clusterclass-quick-start.yaml" -f "$c/cluster-template-development.yaml"
case_ capi-quick-start-yaml -o yaml --explain "${S[@]}" -f "$c/clusterclass-quick-start.yaml" -f "$c/cluster-template-development.yaml"
case_ capi-in-memory -o json --explain "${S[@]}" -f "$c/clusterclass-in-memory.yaml" -f "$c/cluster-template-in-memory.yaml"
case_ err-capi-unsubstituted -o json --explain -f "$c/clusterclass-quick-start.yaml" -f "$c/cluster-template-development.yaml"
for d in "$rw"/providers/*/; do
  p=$(basename "$d")
  mapfile -d '' S < <(sets "$d/values.env")
  files=(); for f in "$d"/*.yaml; do files+=(-f "$f"); done
  case_ "prov-$p" -o json --explain "${S[@]}" "${files[@]}"
  case_ "prov-$p-yaml" -o yaml --explain "${S[@]}" "${files[@]}"
  case_ "err-prov-$p-unsubstituted" -o json --explain "${files[@]}"
  if [ -d "$d/derived" ]; then
    dfiles=(); for f in "$d"/*.yaml; do [[ $(basename "$f") == cluster.yaml ]] || dfiles+=(-f "$f"); done
    for f in "$d"/derived/*.yaml; do dfiles+=(-f "$f"); done
    case_ "prov-$p-derived" -o json --explain "${S[@]}" "${dfiles[@]}"
  fi
done
echo "$n cases in $out"
