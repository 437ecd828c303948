#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The include-edge check: every #include "..." in base/, abi/, src/ and mock/
must follow the folder rules below (docs/architecture.md shows the same table).

The top-level folders stack as base <- abi <- {src, mock}: base/ includes only
itself, abi/ itself and base/, src/ and mock/ themselves, abi/ and base/; the
one edge between src/ and mock/ is the product's include of the mock's public
header.  No include edge runs back up.

    tools/check-includes.py [--root DIR] [--tap]     check the tree at DIR
    tools/check-includes.py --self-test              plant forbidden includes
                                                     in a copy and expect them caught

On a forbidden edge it prints FILE:LINE, the edge (from -> to) and the rule,
and exits 1.  Python 3 standard library only.

An include is resolved as the compiler does for quotes: first next to the
including file, then in each folder of INCLUDE_PATH (the -I folders of the
build), then from the repository root (for spellings such as "mock/mock.h"
or "abi/nvml/nvml-abi.h").  A name found in no place must be in GENERATED.
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

# ---------------------------------------------------------------- the rules --

# The foundation (base/: errors, cleanup, file I/O, the clock, the log sink
# type): includable from everywhere; it includes only itself.
BASE = ['base/']

# The product's layers, lowest first: a folder of src/ may include itself and
# the layers below it, never one above (data flows CLI -> component -> marker
# store, no back-edges).  Every layer may include base/ and abi/.
LAYERS = ['nvml', 'pci', 'markers', 'k8s', 'workload', 'components',
          'metrics', 'nodesignal', 'cudacheck', 'cli']

# The shared contracts (abi/nvml: nvml-abi.h, nvml-returns.h and the typed
# dlopen loader; abi/cuda: cuda-abi.h, cuda-results.h and its loader):
# includable from everywhere (product, mock, tools).  They include themselves
# and base/ (the loaders report through gv_error_t).
ABI = ['abi/']

# The mock's tree.  It may include abi/, base/ and itself only.
MOCK = ['mock/']

# The mock's public header: the only part of the mock the product may
# include, and only from these layers.
MOCK_PUBLIC = ['mock/mock.h']
MOCK_PUBLIC_USERS = ['cli', 'components']

# Headers made by the build (configure_file / custom_target), by name, and
# the zone they count as.
GENERATED = {
    'gv-version.h': 'base',          # meson.build: configure_file
    'builtin-profiles.h': 'mock',    # mock/nvml/embed-profiles.py
    'nvml-stubs.inc': 'mock',        # mock/nvml/gen-version-script.py
    'gv-commit.h': 'cli',            # src/cli/meson.build: vcs_tag / configure_file
}

# The -I folders of the build (meson.build: src_inc), in order.
INCLUDE_PATH = ['.', 'src']

# Folders whose sources are checked.
CHECKED = ['base', 'abi', 'src', 'mock']

# Edges that break a rule today and are waiting for their fix (FILE, TARGET):
# they pass, and are listed with --verbose.  Delete a line when its fix lands.
KNOWN = [
]

# ------------------------------------------------------------ the machinery --

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_EXT = ('.c', '.h', '.inc')


def zone(path):
    """The zone of a repository-relative path: 'base', 'abi', 'mock-public',
    'mock', a layer name, or None (outside the rules)."""
    if any(path.startswith(p) for p in BASE):
        return 'base'
    if any(path == p or (p.endswith('/') and path.startswith(p)) for p in ABI):
        return 'abi'
    if path in MOCK_PUBLIC:
        return 'mock-public'
    if any(path.startswith(p) for p in MOCK):
        return 'mock'
    parts = path.split('/')
    if len(parts) >= 3 and parts[0] == 'src' and parts[1] in LAYERS:
        return parts[1]
    return None


def resolve(root, src, name):
    """The repository-relative path that `#include "name"` in @src reaches,
    a 'generated:NAME' marker, or None when nothing matches."""
    candidates = [os.path.join(os.path.dirname(src), name)]
    candidates += [os.path.join(d, name) for d in INCLUDE_PATH]
    candidates.append(name)
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    if os.path.basename(name) in GENERATED:
        return 'generated:' + os.path.basename(name)
    return None


def rule_for(src_zone, dst_zone):
    """None when an edge from @src_zone to @dst_zone is allowed, else the rule it breaks."""
    if dst_zone is None or src_zone is None:
        return None
    if src_zone == 'base':
        return None if dst_zone == 'base' else 'base/ (the foundation) includes only itself'
    if src_zone == 'abi':
        return None if dst_zone in ('abi', 'base') else 'abi/ (the shared contracts) includes only itself and base/'
    if src_zone in ('mock', 'mock-public'):
        if dst_zone in ('abi', 'mock', 'mock-public', 'base'):
            return None
        return 'mock/ may include abi/, base/ and mock/ only'
    # src_zone is a product layer
    if dst_zone in ('abi', 'base'):
        return None
    if dst_zone == 'mock':
        return 'src/ includes nothing of mock/ but its public header (%s)' % MOCK_PUBLIC[0]
    if dst_zone == 'mock-public':
        if src_zone in MOCK_PUBLIC_USERS:
            return None
        return 'only src/%s may include the mock\'s public header' % ' and src/'.join(MOCK_PUBLIC_USERS)
    if LAYERS.index(dst_zone) <= LAYERS.index(src_zone):
        return None
    return 'src/%s may include only itself and lower layers (%s)' % (
        src_zone, ' < '.join(LAYERS))


def sources(root):
    for top in CHECKED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith(SOURCE_EXT):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def check(root, verbose=False):
    """Returns (problems, known_used, edges): problems are printable lines."""
    problems, known_used, edges = [], set(), 0
    for src in sources(root):
        src_zone = zone(src)
        with open(os.path.join(root, src), encoding='utf-8', errors='replace') as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                edges += 1
                name = m.group(1)
                dst = resolve(root, src, name)
                if dst is None:
                    problems.append('%s:%d: "%s" resolves to no file (add it to GENERATED if the build makes it)'
                                    % (src, lineno, name))
                    continue
                dst_zone = GENERATED[dst.split(':', 1)[1]] if dst.startswith('generated:') else zone(dst)
                broken = rule_for(src_zone, dst_zone)
                if broken is None:
                    continue
                if (src, dst) in KNOWN:
                    known_used.add((src, dst))
                    if verbose:
                        print('# known: %s:%d: %s -> %s: %s' % (src, lineno, src, dst, broken))
                    continue
                problems.append('%s:%d: %s -> %s (#include "%s"): %s' % (src, lineno, src, dst, name, broken))
    return problems, known_used, edges


def run_check(root, tap, verbose):
    problems, known_used, edges = check(root, verbose)
    stale = [k for k in KNOWN if k not in known_used]
    if tap:
        print('1..1')
    for p in problems:
        print(('# ' if tap else '') + p)
    for s, d in stale:
        print('%snote: KNOWN edge %s -> %s is no longer in the tree; delete its line' % ('# ' if tap else '', s, d))
    ok = not problems
    summary = '%d include edges checked, %d forbidden, %d known exceptions' % (edges, len(problems), len(known_used))
    if tap:
        print('%s 1 - include edges follow tools/check-includes.py (%s)' % ('ok' if ok else 'not ok', summary))
    else:
        print(summary)
    return 0 if ok else 1


# Each plant: (file to create or append to, text, a string the report must contain).
PLANTS = [
    ('base/zz-planted.c', '#include "cli/cli.h"\n', 'base/zz-planted.c:1: base/zz-planted.c -> src/cli/cli.h'),
    ('base/zz-planted.c', '#include "abi/nvml/nvml-abi.h"\n', 'base/ (the foundation) includes only itself'),
    ('base/zz-planted.c', '#include "mock/mock.h"\n', 'base/ (the foundation) includes only itself'),
    ('src/markers/zz-planted.c', '#include "components/component.h"\n', 'src/markers may include only itself'),
    ('src/cudacheck/zz-planted.c', '#include "mock/nvml/profile.h"\n', 'src/ includes nothing of mock/'),
    ('src/metrics/zz-planted.c', '#include "mock/mock.h"\n', 'only src/cli and src/components'),
    ('abi/nvml/zz-planted.c', '#include "markers/markers.h"\n', 'abi/ (the shared contracts) includes only itself'),
    ('abi/nvml/zz-planted.c', '#include "mock/nvml/profile.h"\n', 'abi/ (the shared contracts) includes only itself'),
    ('mock/smi/zz-planted.c', '#include "k8s/k8s.h"\n', 'mock/ may include abi/, base/ and mock/ only'),
    ('src/k8s/zz-planted.c', '#include "no/such-header.h"\n', 'resolves to no file'),
]


def self_test():
    """Copies the tree, checks it is clean, plants each forbidden include
    alone and expects it reported; TAP on stdout."""
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    n = 0
    failed = 0
    print('1..%d' % (2 + len(PLANTS)))
    with tempfile.TemporaryDirectory(prefix='gv-check-includes-') as tmp:
        for top in CHECKED:
            if os.path.isdir(os.path.join(root, top)):
                shutil.copytree(os.path.join(root, top), os.path.join(tmp, top))
        problems, _, edges = check(tmp)
        n += 1
        ok = not problems and edges > 50
        failed += not ok
        print('%s %d - the copied tree passes (%d edges)' % ('ok' if ok else 'not ok', n, edges))
        for p in problems:
            print('# ' + p)
        for path, text, expect in PLANTS:
            full = os.path.join(tmp, path)
            with open(full, 'w', encoding='utf-8') as fh:
                fh.write(text)
            problems, _, _ = check(tmp)
            os.unlink(full)
            n += 1
            ok = len(problems) == 1 and expect in problems[0]
            failed += not ok
            print('%s %d - planted %s in %s is caught' % ('ok' if ok else 'not ok', n, text.strip(), path))
            for p in problems:
                print('# ' + p)
        # A layer including a lower one, the ABI and a generated header is fine.
        full = os.path.join(tmp, 'src/cli/zz-planted.c')
        with open(full, 'w', encoding='utf-8') as fh:
            fh.write('#include "base/error.h"\n#include "markers/markers.h"\n#include "gv-version.h"\n')
        problems, _, _ = check(tmp)
        n += 1
        ok = not problems
        failed += not ok
        print('%s %d - allowed edges from src/cli pass' % ('ok' if ok else 'not ok', n))
        for p in problems:
            print('# ' + p)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    ap.add_argument('--tap', action='store_true', help='print TAP (for meson test)')
    ap.add_argument('--verbose', action='store_true', help='also list the KNOWN edges met')
    ap.add_argument('--self-test', action='store_true')
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    return run_check(os.path.normpath(a.root), a.tap, a.verbose)


if __name__ == '__main__':
    sys.exit(main())
