"""Shared base for e2e tests that run the real components against the test API server
(tests/apiserver) in RBAC mode with the chart's own rules (when helm and node are there), on a
mock driver root whose driver and toolkit steps pass in setUp (8 GPUs, default profile)."""
import os
import shutil
import sys
import tempfile

import gvtest
from test_deploy import chart_rbac

sys.path.insert(0, os.path.join(gvtest.SOURCE, "tests", "apiserver"))
from client import TestApiServer  # noqa: E402,F401  (re-exported for the test modules)


class ChartApiTestCase(gvtest.TempDirTestCase):
    """Subclasses set NODE, NS, TOKEN, UNSET (variables taken out of the environment the
    components see) and BASE_ENV (variables always set, before a test's own)."""
    NODE = "gpu-node-a"
    NS = "gpu-operator"
    TOKEN = "gv-e2e-token"
    UNSET = ()
    BASE_ENV = {}

    @classmethod
    def setUpClass(cls):
        cls.rbac_dir = tempfile.mkdtemp(prefix="gv-rbac-")
        rb = chart_rbac(os.path.join(cls.rbac_dir, "rbac.json"), cls.NS)
        cls.api = TestApiServer(token=cls.TOKEN, namespace=cls.NS, bookmark_ms=500,
                                **(dict(rbac=rb[0], rbac_user=rb[1]) if rb else {})).start()

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
        test API server, then BASE_ENV, then @extra (values turned into strings)."""
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
