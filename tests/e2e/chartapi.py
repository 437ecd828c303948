"""Shared base for e2e tests that run the real components against a real kube-apiserver
(tests/k8s: one control plane per process from tools/k8s.sh, a fresh namespace per test class)
as the chart's ServiceAccount with the chart's own rendered RBAC rules (a TokenRequest token:
least privilege by the real RBAC authorizer), through the fault proxy; on a mock driver root
whose driver and toolkit steps pass in setUp (8 GPUs, default profile).  Without helm and node
(outside CI) the components use the admin's token."""
import json
import os
import shutil
import sys
import tempfile
import uuid

import gvtest
from test_deploy import chart_rbac

sys.path.insert(0, os.path.join(gvtest.SOURCE, "tests", "k8s"))
from realapi import RENDER_NS, RealApi  # noqa: E402


def chart_api(tmpdir, sets=(), **kw):
    """A RealApi with the chart's RBAC objects for a unique release (their ClusterRoles are
    cluster-wide); -> (RealApi started, the rendered objects or [])."""
    release = "gv" + uuid.uuid4().hex[:6]
    rb = chart_rbac(os.path.join(tmpdir, "rbac.json"), RENDER_NS, sets=sets, release=release)
    docs, sa = [], None
    if rb:
        with open(rb[0]) as f:
            docs = [d for d in json.load(f) if d]
        sa = [d for d in docs if d.get("kind") == "ServiceAccount"][0]["metadata"]["name"]
    return RealApi(rbac_objects=docs, service_account=sa, tmpdir=tmpdir, **kw).start(), docs


class ChartApiTestCase(gvtest.TempDirTestCase):
    """Subclasses set NODE, UNSET (variables taken out of the environment the components see)
    and BASE_ENV (variables always set, before a test's own).  NS is the class's namespace."""
    NODE = "gpu-node-a"
    NS = None
    UNSET = ()
    BASE_ENV = {}
    SETS = ()

    @classmethod
    def setUpClass(cls):
        cls.rbac_dir = tempfile.mkdtemp(prefix="gv-rbac-")
        cls.api, cls.chart_docs = chart_api(cls.rbac_dir, cls.SETS)
        cls.NS = cls.api.namespace

    @classmethod
    def tearDownClass(cls):
        cls.api.stop()
        shutil.rmtree(cls.rbac_dir, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.api.reset()
        mock = self.path("mock")
        gvtest.run(["run", "--mock", "--mock-dir", mock, "--components", "driver,toolkit"], check=0)
        self.vdir = os.path.join(mock, "validations")

    def env(self, **extra):
        """The components' environment: NODE_NAME, OPERATOR_NAMESPACE and KUBECONFIG for the
        API server, then BASE_ENV, then @extra (values turned into strings)."""
        e = gvtest.clean_env()
        for k in self.UNSET:
            e.pop(k, None)
        e.update(NODE_NAME=self.NODE, OPERATOR_NAMESPACE=self.NS, KUBECONFIG=self.api.kubeconfig)
        e.update(self.BASE_ENV)
        e.update({k: str(v) for k, v in extra.items()})
        return e

    def args(self, component, *extra):
        return ["run", "--components", component, "--output-dir", self.vdir, *extra]

    def marker(self, name):
        return os.path.join(self.vdir, name)
