"""pytest fixtures of the e2e tests.  `control_plane`: one real control plane (etcd,
kube-apiserver, kube-controller-manager from tools/k8s.sh) for the whole session, or the one
$GV_K8S_STATE names; `kube_namespace`: a fresh namespace per test, deleted afterwards.  The
unittest-style tests reach the same control plane through ControlPlane.shared()."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "k8s"))
from cluster import ControlPlane  # noqa: E402


@pytest.fixture(scope="session")
def control_plane():
    return ControlPlane.shared()


@pytest.fixture
def kube_namespace(control_plane):
    ns = control_plane.namespace("gv-e2e")
    yield ns
    control_plane.cleanup(ns)
