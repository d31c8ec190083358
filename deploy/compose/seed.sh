#!/bin/sh
# One-shot seeding of the compose demo: Cluster API's CRDs (and the quick-start's
# provider kinds) into the demo management cluster, then the quick-start ClusterClass
# and Cluster through the gateway, as a user would. Runs in the `tools` image.
set -eu

examples=/usr/share/topograph/examples/quick-start
export KUBECONFIG="${KUBECONFIG:-/etc/topograph/management-clusters/demo.kubeconfig}"

tries=0
until kubectl get namespaces >/dev/null 2>&1; do
    tries=$((tries + 1))
    [ "$tries" -lt 60 ] || { echo "the management cluster did not answer" >&2; exit 1; }
    sleep 1
done
topograph crds -f "$examples/clusterclass.yaml" | kubectl apply -f -

tries=0
until topograph apply -m demo -f "$examples/clusterclass.yaml" -f "$examples/cluster.yaml"; do
    tries=$((tries + 1))
    [ "$tries" -lt 30 ] || { echo "the gateway did not accept the example" >&2; exit 1; }
    sleep 2
done
topograph list clusters -m demo
