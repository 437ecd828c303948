"""MIG mixed strategy on the mock cluster's node (tests/mock-cluster/acceptance.py runs it last):
the driver root becomes a MIG profile (GPU 0: 1g.5gb, 1g.5gb, 2g.10gb; GPU 1: 1g.5gb, 3g.20gb; the
others whole GPUs), NVIDIA's device plugin runs with MIG_STRATEGY=mixed and the mock's /proc/driver
(the chart's mock.procDriver patch: NVIDIA's tools read MIG minors and capabilities from the host's
/proc), our chart with plugin.migStrategy=mixed; then nvidia.com/mig-1g.5gb is allocatable and a
pod asking for one sees exactly that MIG device."""
import json
import os
import time

import faults
from acceptance import (NS, allocated_ids, apply_chart, device_plugin_manifests, plugin_running, pod_terminated,
                        validator_done, wait_for, workload_pod)

LAYOUT = {0: ["1g.5gb", "1g.5gb", "2g.10gb"], 1: ["1g.5gb", "3g.20gb"]}


def mig_profile(c):
    out = faults.node_mock("profiles", "--json", c.settings["PROFILE"], "--gpus", c.settings["GPUS"],
                           "--node-name", c.settings["NODE"])
    prof = json.loads(out)
    for g, devices in LAYOUT.items():
        prof["devices"][g]["mig"].update(mode="enabled", pending_mode="enabled", devices=devices)
    with open(os.path.join(c.root, "run", "nvidia", "gv-mig-profile.json"), "w") as f:
        json.dump(prof, f)


def plugin_with_proc_driver(docs):
    """The device plugin DaemonSet with the mock's /proc/driver bound over its /proc/driver."""
    for d in docs:
        if d.get("kind") != "DaemonSet":
            continue
        spec = d["spec"]["template"]["spec"]
        spec["volumes"].append({"name": "mock-proc-driver",
                                "hostPath": {"path": "/run/nvidia/driver/proc/driver", "type": "Directory"}})
        for ctr in spec["containers"]:
            ctr["volumeMounts"].append({"name": "mock-proc-driver", "mountPath": "/host-mock-proc-driver",
                                        "readOnly": True})
            ctr["args"] = ["mount --bind /host-mock-proc-driver /proc/driver && exec /bin/entrypoint.sh"]
    return docs


def run(c, tap):
    gpus = int(c.settings["GPUS"])
    t0 = time.monotonic()
    mig_profile(c)
    faults.node_mock("install", "--profile", "/run/nvidia/gv-mig-profile.json", "--root", "/run/nvidia/driver",
                     "--cdi-dir", "/var/run/cdi", "--device-nodes", "char", "--node-name", c.settings["NODE"])
    c.apply(plugin_with_proc_driver(device_plugin_manifests("mixed")))
    apply_chart(c, "mixed")
    c.kubectl("delete", "pod", "-n", NS, "-l", "app in (nvidia-device-plugin-daemonset,nvidia-operator-validator)",
              "--wait=false")
    want = {"nvidia.com/mig-1g.5gb": 3, "nvidia.com/mig-2g.10gb": 1, "nvidia.com/mig-3g.20gb": 1,
            "nvidia.com/gpu": gpus - len(LAYOUT)}
    try:
        _, t = wait_for("MIG resources", lambda: all(c.allocatable(r) == n for r, n in want.items()), 180)
        tap.figures["mig_mixed_to_allocatable_s"] = round(time.monotonic() - t0, 1)
        tap.ok(True, f"MIG mixed: allocatable {want} ({time.monotonic() - t0:.1f} s)")
    except TimeoutError:
        tap.ok(False, f"MIG mixed: allocatable {want}", json.dumps(c.node_obj()["status"]["allocatable"]) + "\n" +
               c.kubectl("logs", "-n", NS, "ds/nvidia-device-plugin-daemonset", check=False)[-3000:])
        return
    try:
        wait_for("validated", lambda: validator_done(c) and plugin_running(c) and
                 c.condition().get("status") == "True", 240)
        tap.ok(True, f"MIG mixed: the validator validates the node again, GPUValidated=True "
                     f"({time.monotonic() - t0:.1f} s)")
    except TimeoutError:
        tap.ok(False, "MIG mixed: the validator validates the node again",
               json.dumps(c.condition()) + "\n" + c.kubectl("logs", "-n", NS, "ds/gv-gpu-validator", "-c",
                                                              "plugin-validation", check=False)[-3000:])
    c.kubectl("delete", "pod", "mig-workload", "--ignore-not-found", "--wait=true")
    c.apply([workload_pod("mig-workload", "nvidia.com/mig-1g.5gb", "nvidia-smi -L")])
    try:
        term, t = wait_for("MIG workload pod", lambda: pod_terminated(c, "mig-workload"), 120)
    except TimeoutError:
        tap.ok(False, "MIG mixed: a pod asking for nvidia.com/mig-1g.5gb exits 0",
               c.kubectl("describe", "pod", "mig-workload", check=False))
        return
    out = c.kubectl("logs", "mig-workload", check=False)
    ids = allocated_ids(c, c.get("pod", "mig-workload")["metadata"]["uid"])
    migs = [line.split("UUID: ")[1].rstrip(")") for line in out.splitlines() if line.strip().startswith("MIG")]
    tap.ok(term.get("exitCode") == 0 and migs == ids and "1g.5gb" in out,
           f"MIG mixed: a pod asking for nvidia.com/mig-1g.5gb exits 0 and sees exactly that MIG device "
           f"({ids}, {t:.1f} s)", out)
