#!/usr/bin/env bash
# The mock cluster's acceptance (docs/mock-cluster.md): a real single-node Kubernetes with 8 mock
# GPUs (tools/mock-cluster.sh: kubelet, containerd 2.4 with CDI, NVIDIA's container runtime and
# device plugin, our chart), up, the acceptance, the faults, MIG mixed, down, and the machine as it
# was before.  TAP on stdout, the log on stderr; figures in build/ci/mock-cluster-figures.json.
set -u
cd "$(dirname "$0")/../.."
if [ "$(id -u)" -ne 0 ]; then
  echo "1..0 # SKIP tools/mock-cluster.sh needs root (namespaces, mounts, cgroups)"
  exit 0
fi
mkdir -p build/ci
export GV_MOCK_CLUSTER_STATE=$PWD/build/mock-cluster-ci
exec python3 tests/mock-cluster/acceptance.py --up --down --figures build/ci/mock-cluster-figures.json
