#!/usr/bin/env python3
"""Count test cases over one or more meson build folders (or TAP files,
named *.tap) and print 'N passed, N failed, N skipped'.  TAP output (cmocka, the e2e runner, the
fuzz corpus runners) is counted case by case ("not ok # TODO", an expected
failure, counts as passed; "ok # TODO", an unexpected pass, as failed); a test without TAP lines
counts once.  A test that failed after printing only passing TAP lines
(a crash, a sanitizer report, a timeout) counts one more failure.  A *.tap
file (tools/static-analysis.sh and tools/image.sh smoke write one) that is
missing, or whose plan is missing or disagrees with its test lines, counts one
more failure."""
import json
import os
import re
import sys

ok_re = re.compile(r"^ok\s+\d+")
notok_re = re.compile(r"^not ok\s+\d+")
skip_re = re.compile(r"#\s*SKIP", re.IGNORECASE)
todo_re = re.compile(r"#\s*TODO\b", re.IGNORECASE)


def classify(line):
    """'pass', 'fail', 'skip' or None (not a test line) for one TAP line.  cmocka writes
    "not ok N # SKIP" for a skip; "not ok # TODO" is an expected failure (a pass, as meson counts
    it) and "ok # TODO" an unexpected pass (a failure)."""
    if not (ok_re.match(line) or notok_re.match(line)):
        return None
    if skip_re.search(line):
        return "skip"
    if todo_re.search(line):
        return "pass" if notok_re.match(line) else "fail"
    return "fail" if notok_re.match(line) else "pass"


def count_tap_file(path):
    """(passed, failed, skipped, failures) of a TAP file; a missing file, or one whose plan
    ("1..N") is missing or disagrees with its test lines, counts one more failure."""
    p = fl = s = 0
    failures = []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        return 0, 1, 0, [f"{path}: {e.strerror}"]
    plan = None
    for line in lines:
        if line.startswith("1.."):
            plan = int(line[3:].split()[0] or 0)
        else:
            kind = classify(line)
            if kind == "skip":
                s += 1
            elif kind == "fail":
                fl += 1
                failures.append(f"{path}: {line}")
            elif kind == "pass":
                p += 1
    if plan is None or plan != p + fl + s:
        failures.append(f"{path}: plan {plan} for {p + fl + s} test lines (ended early?)")
        fl += 1
    return p, fl, s, failures


def main():
    passed = failed = skipped = 0
    failures = []
    for build in sys.argv[1:]:
        if build.endswith(".tap"):
            p, fl, s, fails = count_tap_file(build)
            passed, failed, skipped = passed + p, failed + fl, skipped + s
            failures += fails
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
                    kind = classify(out_line)
                    if kind == "skip":
                        s += 1
                    elif kind == "fail":
                        fl += 1
                        why = " (unexpected pass)" if todo_re.search(out_line) else ""
                        failures.append(f"{build}: {t['name']}: {out_line}{why}")
                    elif kind == "pass":
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
