"""docs/metrics.md and the exporter agree: every metric family the exporter serves is in the
documentation's tables and nothing else is, the component list and the marker and component
counts in the text are the exporter's."""
import os
import re

import gvtest
import test_metrics


def doc_text():
    with open(os.path.join(gvtest.SOURCE, "docs", "metrics.md")) as f:
        return f.read()


class TestMetricsDoc(test_metrics.MetricsTestCase):
    def scrape_everything(self):
        # every optional family present: a watcher's counters file, a driver-ready with timing
        with open(os.path.join(self.dir, ".gpu-validator-revalidations"), "w") as f:
            f.write("DRIVER_CONTAINER_RESTART=0\n")
        self.folder.chain(GPU_COUNT="2", VALIDATION_DURATION_SECONDS="1.5")
        exp = self.start()
        return test_metrics.parse(exp.scrape())

    def test_documented_families_are_the_served_ones(self):
        samples, types = self.scrape_everything()
        documented = set(re.findall(r"(?m)^\| `((?:gpu_operator|gpu_validator)_[a-z_]+)` \|", doc_text()))
        self.assertEqual(sorted(documented - set(types)), [], "documented but not served")
        self.assertEqual(sorted(set(types) - documented), [], "served but not documented")

    def test_revalidation_reasons(self):
        samples, _ = self.scrape_everything()
        served = [dict(k[1])["reason"] for k in samples if k[0] == "gpu_validator_revalidations_total"]
        row = next(ln for ln in doc_text().splitlines() if ln.startswith("| `gpu_validator_revalidations_total` |"))
        documented = re.findall(r"`([a-z-]+)`", row.split("|")[2])[1:]  # after the label's own name
        self.assertEqual(documented, served)

    def test_component_list_and_counts(self):
        samples, _ = self.scrape_everything()
        served = [dict(k[1])["component"] for k in samples if k[0] == "gpu_validator_component_ready"]
        markers = {dict(k[1])["marker"] for k in samples if k[0] == "gpu_validator_marker_state"}
        text = doc_text()
        row = next(ln for ln in text.splitlines() if ln.startswith("| `gpu_validator_component_ready` |"))
        m = re.search(r"the (\d+) components \(([^)]*)\)", row)
        self.assertIsNotNone(m, row)
        self.assertEqual(int(m.group(1)), len(served))
        self.assertEqual(re.findall(r"`([a-z-]+)`", m.group(2)), served)
        row = next(ln for ln in text.splitlines() if ln.startswith("| `gpu_validator_marker_state` |"))
        m = re.search(r"all (\d+) markers: the (\d+) components' and the (\d+) companions", row)
        self.assertIsNotNone(m, row)
        self.assertEqual(int(m.group(1)), len(markers))
        self.assertEqual(int(m.group(2)), len(served))
        self.assertEqual(int(m.group(1)), int(m.group(2)) + int(m.group(3)))
        # status agrees on the markers
        st = gvtest.run(["status", "--json", "--output-dir", self.dir, "--boot-id-file", self.boot], check=None)
        self.assertEqual(len(re.findall(r'"marker":', st.stdout)), len(markers))
