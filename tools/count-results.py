#!/usr/bin/env python3
"""Count test cases over one or more meson build folders and print
'N passed, N failed, N skipped'.  TAP output (cmocka, the e2e runner, the
fuzz corpus runners) is counted case by case; a test without TAP lines
counts once.  A test that failed after printing only passing TAP lines
(a crash, a sanitizer report, a timeout) counts one more failure.  An
argument that is a file (not a build folder) is read as TAP output, case by
case (tools/static-analysis.sh writes one); a TAP file without any test line
counts as one failure."""
import json
import os
import re
import sys

ok_re = re.compile(r"^ok\s+\d+")
notok_re = re.compile(r"^not ok\s+\d+")
skip_re = re.compile(r"#\s*SKIP", re.IGNORECASE)


def count_tap_file(path, failures):
    p = fl = s = 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not (ok_re.match(line) or notok_re.match(line)):
                continue
            if skip_re.search(line):
                s += 1
            elif notok_re.match(line):
                fl += 1
                failures.append(f"{path}: {line}")
            else:
                p += 1
    if p + fl + s == 0:
        fl = 1
        failures.append(f"{path}: no TAP test lines")
    return p, fl, s


def main():
    passed = failed = skipped = 0
    failures = []
    for build in sys.argv[1:]:
        if os.path.isfile(build):
            p, fl, s = count_tap_file(build, failures)
            passed += p
            failed += fl
            skipped += s
            continue
        log = os.path.join(build, "meson-logs", "testlog.json")
        if not os.path.exists(log):
            print(f"count-results: {log} missing", file=sys.stderr)
            failed += 1
            continue
        with open(log) as f:
            for line in f:
                t = json.loads(line)
                res = t.get("result", "")
                p = fl = s = 0
                for out_line in (t.get("stdout") or "").splitlines():
                    if not (ok_re.match(out_line) or notok_re.match(out_line)):
                        continue
                    if skip_re.search(out_line):  # cmocka writes "not ok N # SKIP"
                        s += 1
                    elif notok_re.match(out_line):
                        fl += 1
                        failures.append(f"{build}: {t['name']}: {out_line}")
                    else:
                        p += 1
                if p + fl + s == 0:
                    if res in ("OK", "EXPECTEDFAIL"):
                        p = 1
                    elif res == "SKIP":
                        s = 1
                    else:
                        fl = 1
                        failures.append(f"{build}: {t['name']}: {res}")
                elif res not in ("OK", "SKIP", "EXPECTEDFAIL") and fl == 0:
                    fl = 1
                    failures.append(f"{build}: {t['name']}: {res} after its TAP lines (crash or timeout)")
                passed += p
                failed += fl
                skipped += s
    for f in failures:
        print(f"FAILED: {f}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
