#!/usr/bin/env python3
"""The mock libcuda.so.1 exports the CUDA Driver API and nothing else: every entry point of the
contract (abi/cuda/cuda-abi.h GV_CUDA_FUNCTIONS and the per-thread flavours), cuGetExportTable,
and no symbol of its own (an internal helper such as the PTX reader's must stay hidden).
Usage: check-exports.py LIBCUDA CUDA_ABI_H (TAP on stdout)."""
import re
import subprocess
import sys


def main():
    lib, header = sys.argv[1], sys.argv[2]
    text = open(header, encoding="utf-8").read()
    body = text[text.index("#define GV_CUDA_FUNCTIONS(X)"):]
    body = body[:body.index("\n\n")]
    contract = set(re.findall(r"X\((cu\w+),", body))
    ptds = text[text.index("#define GV_CUDA_PTDS_FUNCTIONS(X)"):]
    ptds = ptds[:ptds.index("\n\n")]
    contract |= set(re.findall(r"X\((cu\w+),", ptds))
    contract.add("cuGetExportTable")
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    exported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    exported.discard("")
    checks = [
        ("no export outside the CUDA Driver API", sorted(exported - contract)),
        ("every entry point of the contract is exported", sorted(contract - exported)),
    ]
    print(f"1..{len(checks)}")
    failed = 0
    for i, (what, bad) in enumerate(checks, 1):
        if bad:
            failed += 1
            print(f"not ok {i} - {what}: {' '.join(bad)}")
        else:
            print(f"ok {i} - {what} ({len(exported)} symbols)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
