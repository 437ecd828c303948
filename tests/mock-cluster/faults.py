"""Faults on the mock cluster's real node (tests/mock-cluster/acceptance.py runs these after the
acceptance), each timed until the node converges again, with the markers sampled meanwhile: a
marker present while one it depends on is missing is a stale marker (the downstream-first rule,
docs/markers.md), and counts as a failure."""
import json
import os
import subprocess
import threading
import time

from acceptance import MC, NS, validator_done, validator_pod, init_states, plugin_running, wait_for

CHAIN = ("driver-ready", "toolkit-ready", "cuda-ready", "plugin-ready")


class MarkerSampler:
    """Samples the node's marker folder every 10 ms in a thread: stale states (a marker without the
    ones upstream of it) and when toolkit-ready was first seen missing."""

    def __init__(self, c):
        self.c = c
        self.stop_evt = threading.Event()
        self.stale = []
        self.first_missing = {}
        self.t = threading.Thread(target=self.loop, daemon=True)

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop_evt.set()
        self.t.join()

    def loop(self):
        while not self.stop_evt.is_set():
            m = set(self.c.markers())
            now = time.monotonic()
            for i, name in enumerate(CHAIN):
                if name not in m:
                    self.first_missing.setdefault(name, now)
                elif any(up not in m for up in CHAIN[:i]) and len(self.stale) < 20:
                    self.stale.append(sorted(m))
            time.sleep(0.01)


def node_mock(*args):
    p = subprocess.run([MC, "mock", *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"mock {' '.join(args)}: {p.stderr.strip()}")
    return p.stdout


def converged(c, gpus):
    return (validator_done(c) and plugin_running(c) and c.allocatable() == gpus
            and c.condition().get("status") == "True" and set(CHAIN) <= set(c.markers()))


def revalidations(c):
    """The watcher's counters file on the node (docs/metrics.md, "Re-validations")."""
    f = os.path.join(c.root, "run", "nvidia", "validations", ".gpu-validator-revalidations")
    try:
        return dict(ln.strip().split("=", 1) for ln in open(f) if "=" in ln)
    except FileNotFoundError:
        return {}


def watcher_logs(c):
    p = validator_pod(c)
    if not p:
        return ""
    names = [x["name"] for x in p["spec"]["containers"]]
    name = "revalidation" if "revalidation" in names else names[0]
    return c.kubectl("logs", "-n", NS, p["metadata"]["name"], "-c", name, check=False) or ""


def fault_gpu_lost(c, tap):
    gpus = int(c.settings["GPUS"])
    lost_before = int(revalidations(c).get("GPU_LOST", "0"))
    with MarkerSampler(c) as ms:
        t0 = time.monotonic()
        node_mock("set", "--root", "/run/nvidia/driver", "--gpu", "2", "fault=fell-off-the-bus")
        t_set = time.monotonic() - t0  # `mock set` runs in a container of the node: most of this is its start
        # The device plugin marks the GPU unhealthy on Xid 79; when the lost GPU's UUID cannot be read
        # at that moment (GPU_IS_LOST), it marks every GPU unhealthy (its health.go does so).
        try:
            _, t = wait_for("device plugin marks GPU 2 unhealthy", lambda: 0 <= c.allocatable() < gpus, 120)
            alloc = c.allocatable()
            tap.figures["fault_gpu_lost_to_unhealthy_s"] = round(t + t_set, 1)
            tap.figures["fault_gpu_lost_allocatable"] = alloc
            tap.ok(alloc in (0, gpus - 1), f"GPU lost (mock set fault=fell-off-the-bus): the device plugin marks it "
                                           f"unhealthy, allocatable {alloc} ({t + t_set:.1f} s)")
        except TimeoutError as e:
            tap.ok(False, "GPU lost: the device plugin marks it unhealthy", e)
        # Our validator: the watcher's GPU probe sees GPU_IS_LOST (and Xid 79), removes the markers
        # downstream first and re-runs the chain, whose driver check names the GPU.
        try:
            wait_for("every marker of the chain removed", lambda: not set(CHAIN) & set(c.markers()), 30, 0.05)
            gone = ms.first_missing.get("toolkit-ready")
            gone = None if gone is None else gone - t0
            tap.figures["fault_gpu_lost_to_markers_removed_s"] = None if gone is None else round(gone, 2)
            tap.figures["fault_gpu_lost_mock_set_s"] = round(t_set, 2)
            ok = gone is not None and gone < t_set + 2.0 and \
                int(revalidations(c).get("GPU_LOST", "0")) == lost_before + 1
            tap.ok(ok, f"GPU lost: our watcher removes the markers downstream first "
                       f"({'never' if gone is None else f'{gone:.2f} s'} after mock set started, which took "
                       f"{t_set:.2f} s) and counts gpu-lost", json.dumps(revalidations(c)))
        except TimeoutError as e:
            tap.ok(False, "GPU lost: our watcher removes the markers", f"{e}\n{watcher_logs(c)[-2000:]}")

        def named():
            return [ln for ln in watcher_logs(c).splitlines()
                    if "driver: gpu-lost" in ln and "GPU 2 (GPU-" in ln and "Xid 79" in ln and "is lost" in ln]
        try:
            lines, _ = wait_for("the re-run's driver check names GPU 2", named, 60, 0.5)
            t = time.monotonic() - t0
            tap.figures["fault_gpu_lost_to_named_s"] = round(t, 1)
            cond = c.condition()
            tap.ok(cond.get("status") == "False",
                   f"GPU lost: our validator re-validates and names it ({t:.1f} s): {lines[-1].split('gpu-lost: ', 1)[-1]}",
                   json.dumps(cond))
        except TimeoutError as e:
            tap.ok(False, "GPU lost: our validator re-validates and names it", f"{e}\n{watcher_logs(c)[-2000:]}")
        # Recovery: the fault cleared, the device plugin restarted (it never marks a GPU healthy again).
        t1 = time.monotonic()
        node_mock("set", "--root", "/run/nvidia/driver", "--clear")
        c.kubectl("delete", "pod", "-n", NS, "-l", "app=nvidia-device-plugin-daemonset", "--wait=false")
        try:
            _, t = wait_for("the chain's markers back", lambda: set(CHAIN) <= set(c.markers()), 180)
            tap.figures["fault_gpu_lost_markers_back_s"] = round(t, 1)
            _, t = wait_for("node converges", lambda: converged(c, gpus), 180)
            tap.figures["fault_gpu_lost_recovery_s"] = round(time.monotonic() - t1, 1)
            tap.ok(True, f"GPU back (mock set --clear, device plugin restarted): the chain is validated again "
                         f"({tap.figures['fault_gpu_lost_markers_back_s']:.1f} s), the node converges "
                         f"({time.monotonic() - t1:.1f} s)")
        except TimeoutError as e:
            tap.ok(False, "GPU back: the node converges", f"{e}\n{watcher_logs(c)[-2000:]}")
    tap.ok(not ms.stale, "GPU lost and back: no stale marker", ms.stale)


def fault_driver_root_replaced(c, tap):
    gpus = int(c.settings["GPUS"])
    s = c.settings
    with MarkerSampler(c) as ms:
        t0 = time.monotonic()
        node_mock("remove", "--root", "/run/nvidia/driver")
        t_removed = time.monotonic()
        node_mock("install", "--profile", s["PROFILE"], "--gpus", s["GPUS"], "--root", "/run/nvidia/driver",
                  "--cdi-dir", "/var/run/cdi", "--device-nodes", "char", "--node-name", s["NODE"])
        try:
            _, t = wait_for("node converges", lambda: converged(c, gpus), 180)
        except TimeoutError as e:
            tap.ok(False, "driver root replaced: the node converges", e)
            return
    gone = ms.first_missing.get("toolkit-ready")
    not_ready = None if gone is None else gone - t0
    tap.figures["fault_driver_root_replaced_not_ready_s"] = None if not_ready is None else round(not_ready, 3)
    tap.figures["fault_driver_root_replaced_converge_s"] = round(time.monotonic() - t0, 1)
    tap.ok(not_ready is not None and not_ready < 1.0 + (t_removed - t0),
           f"driver root replaced (mock remove + install): consumers see toolkit-ready gone "
           f"{'never' if not_ready is None else f'{not_ready:.3f} s'} after the removal started",
           f"removal took {t_removed - t0:.3f} s")
    tap.ok(not ms.stale, f"driver root replaced: no stale marker, node converged ({time.monotonic() - t0:.1f} s)",
           ms.stale)


def wait_cuda_running(c):
    """The validator pod's cuda-validation init container is running (a validation in progress)."""
    p = validator_pod(c)
    return p and init_states(p).get("cuda-validation", {}).get("running") and p


def restart_validation(c):
    c.kubectl("delete", "pod", "-n", NS, "-l", "app=nvidia-operator-validator", "--wait=false")
    return wait_for("a new validation in cuda-validation", lambda: wait_cuda_running(c), 120)[0]


def validation_pods_gone(c, tap, fault):
    """No validation pod is left behind: each one the validator created is deleted and gone.  A pod
    the validator deleted stays listed (with a deletionTimestamp) until the kubelet confirms its
    containers stopped, which takes seconds on a node whose kubelet just restarted; so wait for it,
    up to 60 s, and name what is still there then (phase, deleted or not)."""
    def pods():  # a failed kubectl raises (wait_for polls on): it must not read as "none left"
        return json.loads(c.kubectl("get", "pods", "-n", NS, "-l", sel, "-o", "json"))["items"]

    sel = "app in (nvidia-cuda-validator,nvidia-device-plugin-validator)"
    first = [(p["metadata"]["name"], p["metadata"].get("deletionTimestamp")) for p in pods()]
    try:
        _, t = wait_for("validation pods gone", lambda: not pods(), 60)
        tap.figures[f"fault_{fault}_validation_pods_gone_s"] = round(t, 1)
        tap.ok(True, f"{FAULT_NAMES[fault]}: no validation pod left behind (gone {t:.1f} s after the node "
                     f"converged)", first)
    except TimeoutError:
        left = [(p["metadata"]["name"], p.get("status", {}).get("phase"), p["metadata"].get("deletionTimestamp"))
                for p in pods()]
        tap.ok(False, f"{FAULT_NAMES[fault]}: no validation pod left behind", f"after 60 s: {left}")


FAULT_NAMES = {"kill_runtime": "containerd and kubelet killed", "validator_deleted": "validator pod deleted"}


def fault_kill_runtime(c, tap):
    gpus = int(c.settings["GPUS"])
    restart_validation(c)
    with MarkerSampler(c) as ms:
        t0 = time.monotonic()
        for name in ("kubelet", "containerd"):
            pid = int(open(os.path.join(c.state, "pids", name)).read())
            os.kill(pid, 9)
        time.sleep(2)
        for name in ("containerd", "kubelet"):
            subprocess.run([MC, "restart", name], check=True, capture_output=True, timeout=60)
        try:
            _, t = wait_for("node converges", lambda: converged(c, gpus), 300)
            tap.figures["fault_kill_containerd_kubelet_converge_s"] = round(time.monotonic() - t0, 1)
            tap.ok(True, f"containerd and kubelet killed mid-validation, restarted 2 s later: the node "
                         f"converges ({time.monotonic() - t0:.1f} s)")
        except TimeoutError as e:
            tap.ok(False, "containerd and kubelet killed mid-validation: the node converges",
                   f"{e}\n{json.dumps(c.condition())}")
    tap.ok(not ms.stale, "containerd and kubelet killed: no stale marker", ms.stale)
    validation_pods_gone(c, tap, "kill_runtime")


def fault_delete_validator(c, tap):
    gpus = int(c.settings["GPUS"])
    restart_validation(c)
    with MarkerSampler(c) as ms:
        t0 = time.monotonic()
        c.kubectl("delete", "pod", "-n", NS, "-l", "app=nvidia-operator-validator", "--wait=false")
        try:
            _, t = wait_for("node converges", lambda: converged(c, gpus), 300)
            tap.figures["fault_validator_deleted_converge_s"] = round(time.monotonic() - t0, 1)
            tap.ok(True, f"validator pod deleted mid-validation: the node converges ({time.monotonic() - t0:.1f} s)")
        except TimeoutError as e:
            tap.ok(False, "validator pod deleted mid-validation: the node converges", e)
    tap.ok(not ms.stale, "validator pod deleted: no stale marker", ms.stale)
    validation_pods_gone(c, tap, "validator_deleted")


def run(c, tap):
    for f in (fault_gpu_lost, fault_driver_root_replaced, fault_kill_runtime, fault_delete_validator):
        try:
            f(c, tap)
        except Exception as e:  # one fault's harness error must not hide the others
            tap.ok(False, f"{f.__name__}: harness error", repr(e))
