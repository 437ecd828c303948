#!/usr/bin/env python3
"""The Python-binding checks of the real-client suite, run by tests/clients/run.py in the suite's
virtual environment (tests/clients/requirements.txt) with LD_LIBRARY_PATH at a mock root.

  py_clients.py sweep [--mig]   NVIDIA's nvidia-ml-py: every nvmlDeviceGet* function of pynvml.py
                                whose only argument without a default is the device handle, called
                                on GPU 0 (--mig: on GPU 0's first MIG device); JSON on stdout:
                                {"version": ..., "calls": {name: "value" | error name}}
  py_clients.py smi             pynvml's pynvml_utils.nvidia_smi (pynvml 13): DeviceQuery() and
                                XmlDeviceQuery() of every GPU; JSON summary on stdout
"""
import inspect
import json
import sys
import warnings

warnings.simplefilter("ignore", FutureWarning)  # pynvml 13 warns that it is deprecated, on import

import pynvml  # noqa: E402  (nvidia-ml-py's module)

SKIP = {"nvmlDeviceGetHandleByIndex", "nvmlDeviceGetHandleByUUID", "nvmlDeviceGetHandleByPciBusId",
        "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetCount",
        "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByUUIDV", "nvmlDeviceGetHandleBySerial"}


def handle_only(fn):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    required = [p for p in params if p.default is inspect.Parameter.empty and
                p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(required) == 1


def error_name(e):
    for name in dir(pynvml):
        if name.startswith("NVML_ERROR_") and getattr(pynvml, name) == e.value:
            return name[len("NVML_ERROR_"):]
    return "ERROR_%d" % e.value


def sweep(mig):
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    if mig:
        h = pynvml.nvmlDeviceGetMigDeviceHandleByIndex(h, 0)
    calls = {}
    for name in sorted(dir(pynvml)):
        fn = getattr(pynvml, name)
        if not name.startswith("nvmlDeviceGet") or name in SKIP or not callable(fn) or not handle_only(fn):
            continue
        try:
            fn(h)
            calls[name] = "value"
        except pynvml.NVMLError as e:
            calls[name] = error_name(e)
        except Exception as e:  # a binding's own failure (TypeError ...): counted apart
            calls[name] = "exception: %s" % type(e).__name__
    pynvml.nvmlShutdown()
    version = getattr(pynvml, "__version__", None)
    return {"calls": calls, "version": version}


def smi():
    """pynvml_utils.nvidia_smi.DeviceQuery(FIELD) for each --query-gpu name of its table (NVSMI_QUERY_GPU) on
    every GPU: per field "value" (every GPU answered with a value), "N/A" (some GPU N/A), or the Python
    exception pynvml_utils raised (its own defects: it knows brands 0-5 only and names throttle-reason
    constants that nvidia-ml-py 13 no longer has); plus the identity fields of each GPU."""
    from pynvml_utils import nvidia_smi, smi as smi_module
    inst = nvidia_smi.getInstance()
    fields = {}
    for name in sorted(smi_module.NVSMI_QUERY_GPU):
        try:
            q = inst.DeviceQuery(name)
            leaves = [v for g in q.get("gpu", []) for v in _leaves(g)] + \
                [v for k, v in q.items() if k != "gpu" for v in _leaves(v)]
            fields[name] = "N/A" if "N/A" in leaves or not leaves else "value"
        except Exception as e:  # recorded, not raised
            fields[name] = "%s: %s" % (type(e).__name__, e)
    q = inst.DeviceQuery("uuid,memory.total,temperature.gpu,count,driver_version")
    gpus = [{"uuid": g.get("uuid"), "fb_total": (g.get("fb_memory_usage") or {}).get("total"),
             "temp": (g.get("temperature") or {}).get("gpu_temp")} for g in q.get("gpu", [])]
    return {"fields": fields, "count": q.get("count"), "driver_version": q.get("driver_version"), "gpus": gpus}


def _leaves(d):
    if isinstance(d, dict):
        for v in d.values():
            yield from _leaves(v)
    elif isinstance(d, list):
        for v in d:
            yield from _leaves(v)
    else:
        yield d


def main():
    if sys.argv[1] == "sweep":
        r = sweep("--mig" in sys.argv)
    else:
        r = smi()
    json.dump(r, sys.stdout, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
