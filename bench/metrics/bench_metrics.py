#!/usr/bin/env python3
"""Peak RSS and CPU time per 1000 scrapes: gpu-validator's exporter and, side by side,
Debian's prometheus-node-exporter (when installed).

    python3 bench/metrics/bench_metrics.py [BUILD_DIR] [--scrapes N]

Loopback only; every loop is bounded (N scrapes, 10 s per request).  Prints figures,
asserts nothing.  CPU time is the server process's user+system time (from
/proc/PID/stat) spent during the scrapes; peak RSS is its VmHWM after them.
"""
import argparse
import http.client
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_http(port, path, deadline_s=15):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", path)
            c.getresponse().read()
            c.close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def scrape_loop(port, path, n):
    """n scrapes on one keep-alive connection (reconnecting if the server closes it); returns bytes/scrape."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    total = 0
    for _ in range(n):
        try:
            c.request("GET", path)
            r = c.getresponse()
        except (http.client.HTTPException, OSError):
            c.close()
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            c.request("GET", path)
            r = c.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError(f"HTTP {r.status}")
        total += len(body)
    c.close()
    return total / max(n, 1)


def measure(name, proc, port, path, n):
    if not wait_http(port, path):
        print(f"{name}: did not answer on 127.0.0.1:{port}{path}")
        return None
    cpu0 = cpu_seconds(proc.pid)
    t0 = time.monotonic()
    size = scrape_loop(port, path, n)
    wall = time.monotonic() - t0
    cpu = cpu_seconds(proc.pid) - cpu0
    rss = peak_rss_kib(proc.pid)
    return {"name": name, "cpu_per_1000": cpu * 1000 / n, "rss_kib": rss, "wall_per_1000": wall * 1000 / n,
            "bytes": size}


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def write_chain(folder, boot):
    gens = {}
    chain = [("driver-ready", None, "GPU_COUNT=8\n"), ("toolkit-ready", "driver-ready", ""),
             ("cuda-ready", "toolkit-ready", ""), ("plugin-ready", "cuda-ready", "DEVICE_PLUGIN_DEVICES=8\n")]
    for marker, parent, facts in chain:
        gens[marker] = secrets.token_hex(16)
        text = (f"VALIDATOR_VERSION=bench\nGENERATION={gens[marker]}\nBOOT_ID={boot}\n"
                f"VALIDATED_AT=2026-03-01T12:00:00Z\n")
        if parent:
            text += f"{parent[:-6].upper()}_GENERATION={gens[parent]}\n"
        with open(os.path.join(folder, marker), "w") as f:
            f.write(text + facts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--scrapes", type=int, default=1000)
    ap.add_argument("--bin", help="gpu-validator binary (default BUILD/src/cli/gpu-validator)")
    args = ap.parse_args()
    n = max(1, min(args.scrapes, 100000))
    gv = args.bin or os.path.join(args.build, "src", "cli", "gpu-validator")
    if not os.access(gv, os.X_OK):
        sys.exit(f"no gpu-validator at {gv}")

    results = []
    tmp = tempfile.mkdtemp(prefix="gv-bench-metrics-")
    try:
        folder = os.path.join(tmp, "validations")
        os.mkdir(folder)
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        write_chain(folder, boot)

        port = free_port()
        p = subprocess.Popen([gv, "metrics", "--listen", f"127.0.0.1:{port}", "--output-dir", folder,
                              "--node-name", "bench"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            r = measure("gpu-validator metrics", p, port, "/metrics", n)
            if r:
                results.append(r)
        finally:
            stop(p)

        ne = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
        if not ne:
            print("note: prometheus-node-exporter is not installed (Debian package prometheus-node-exporter); "
                  "only gpu-validator measured")
        else:
            port = free_port()
            p = subprocess.Popen([ne, f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            try:
                r = measure(f"{os.path.basename(ne)} (default collectors)", p, port, "/metrics", n)
                if r:
                    results.append(r)
            finally:
                stop(p)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"{n} scrapes each, one keep-alive client on loopback; figures scaled to 1000 scrapes")
    print(f"{'server':<48} {'CPU s/1000':>10} {'wall s/1000':>11} {'peak RSS KiB':>12} {'bytes/scrape':>12}")
    for r in results:
        print(f"{r['name']:<48} {r['cpu_per_1000']:>10.3f} {r['wall_per_1000']:>11.3f} {r['rss_kib']:>12} "
              f"{r['bytes']:>12.0f}")


if __name__ == "__main__":
    main()
