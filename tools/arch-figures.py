#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The architecture figures of a tree (docs/architecture.md, "Figures"):

    tools/arch-figures.py [--root DIR] [--list]

- include edges between top-level folders that run back up (base <- abi <- {src, mock};
  src -> mock/mock.h is the one cross arrow allowed): every other edge between two of
  base/, abi/, src/, mock/ counts, in the product and the mock (tests and benches left out);
- C files over 800 lines (.c and .h in base/, abi/, src/, mock/; and, apart, in tests/ and bench/);
- functions over 100 lines, counted from the first line of the signature to the closing
  brace (the project's style puts a function's braces in column 0), with the same split;
- hand-written out-of-memory errors: the string "out of memory" as a literal of a
  gv_error_set() call (or an OOM()/oom() helper that wraps one) in base/, abi/, src/, mock/;
- hand-written doubling realloc() loops: a realloc()/reallocarray() whose capacity is doubled
  in the call or just before it, outside gv_greedy_realloc() (base/alloc.c).

`--list` prints what each count is made of.  Python 3 standard library only; it reads the
files as text and changes nothing.  The duplicate pairs come from `duplicates` (a tool of the
development machine, not of this repository)."""
import argparse
import os
import re
import sys

PRODUCT = ('base', 'abi', 'src', 'mock')
OTHER = ('tests', 'bench')
RANK = {'base': 0, 'abi': 1, 'src': 2, 'mock': 2}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
INCLUDE_PATH = ['.', 'src']


def files(root, tops, exts=('.c', '.h', '.inc')):
    for top in tops:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith('.'))
            for f in sorted(filenames):
                if f.endswith(exts):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def read(root, path):
    with open(os.path.join(root, path), encoding='utf-8', errors='replace') as fh:
        return fh.read().split('\n')


def resolve(root, src, name):
    for c in [os.path.join(os.path.dirname(src), name)] + [os.path.join(d, name) for d in INCLUDE_PATH]:
        c = os.path.normpath(c)
        if os.path.isfile(os.path.join(root, c)):
            return c
    return None


def top_of(path):
    """The top-level folder of a path, when it is one of PRODUCT."""
    parts = path.split('/')
    return parts[0] if parts[0] in PRODUCT else None


def back_edges(root):
    out = []
    for src in files(root, PRODUCT):
        a = top_of(src)
        for n, line in enumerate(read(root, src), 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            dst = resolve(root, src, m.group(1))
            b = top_of(dst) if dst else None
            if not b or a == b:
                continue
            if a == 'src' and dst == 'mock/mock.h':
                continue
            if RANK[b] >= RANK[a]:  # upwards (or sideways between src and mock)
                out.append('%s:%d -> %s' % (src, n, dst))
    return out


def back_arrows(edges):
    """The folder-level arrows behind back_edges(): 'abi/nvml -> src/base' once however many lines."""
    arrows = set()
    for e in edges:
        src, dst = e.split(' -> ')
        arrows.add('%s -> %s' % ('/'.join(src.split(':')[0].split('/')[:2]), '/'.join(dst.split('/')[:2])))
    return sorted(arrows)


def long_files(root, tops, limit=800):
    return ['%s: %d lines' % (f, n) for f in files(root, tops, ('.c', '.h'))
            for n in [len(read(root, f)) - 1] if n > limit]


def long_functions(root, tops, limit=100):
    out = []
    for f in files(root, tops, ('.c',)):
        lines = read(root, f)
        start = None
        for i, line in enumerate(lines):
            if line == '{' and start is None:
                start = i
            elif line.startswith('}') and start is not None:
                head = start - 1
                while head > 0 and not re.match(r'^[A-Za-z_].*\(', lines[head]):
                    head -= 1
                length = i - head + 1  # signature to closing brace
                if length > limit:
                    name = re.search(r'([A-Za-z_][A-Za-z0-9_]*)\s*\(', lines[head])
                    out.append('%s:%d: %s: %d lines' % (f, head + 1, name.group(1) if name else '?', length))
                start = None
    return out


OOM_RE = re.compile(r'gv_error_set\([^;]*"[^"]*out of memory|define\s+OOM\(|\boom\(\w*\s*\*?\*?\s*\w+\)\s*$')


def oom_literals(root):
    out = []
    for f in files(root, PRODUCT, ('.c', '.h')):
        if f == 'base/error.c':  # gv_error_oom() itself, the one place that spells it
            continue
        lines = read(root, f)
        for i, line in enumerate(lines):
            # a call may run over two lines: join the next one
            text = line + (lines[i + 1] if i + 1 < len(lines) else '')
            if 'gv_error_set(' in line and 'ENOMEM' in text and re.search(r'"[^"]*out of memory', text):
                out.append('%s:%d' % (f, i + 1))
            elif re.search(r'#\s*define\s+OOM\(|^\S.*\b(mp_)?oom\((gv_error_t|pctx_t)', line):
                out.append('%s:%d (helper)' % (f, i + 1))
    return out


REALLOC_RE = re.compile(r'\b(realloc|reallocarray)\(')
DOUBLING_RE = re.compile(r'\*=\s*2\b|<<=\s*1\b|\b2\s*\*\s*\w|\w\s*\*\s*2\b')


def doubling_reallocs(root):
    """realloc()/reallocarray() calls that grow by doubling, written by hand: the call or one of
    the six lines before it doubles a capacity (`*= 2`, `2 * cap`, `cap * 2`, `<<= 1`)."""
    out = []
    for f in files(root, PRODUCT, ('.c', '.h')):
        if f == 'base/alloc.c':  # gv_greedy_realloc() itself, the one helper
            continue
        lines = read(root, f)
        for i, line in enumerate(lines):
            if REALLOC_RE.search(line) and any(DOUBLING_RE.search(l) for l in lines[max(0, i - 6):i + 1]):
                out.append('%s:%d' % (f, i + 1))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    ap.add_argument('--list', action='store_true')
    a = ap.parse_args()
    root = os.path.normpath(a.root)
    edges = back_edges(root)
    rows = [
        ('folder arrows running back up between top-level folders', back_arrows(edges)),
        ('include lines behind them', edges),
        ('C files over 800 lines in base/ abi/ src/ mock/', long_files(root, PRODUCT)),
        ('C files over 800 lines in tests/ bench/', long_files(root, OTHER)),
        ('functions over 100 lines in base/ abi/ src/ mock/', long_functions(root, PRODUCT)),
        ('functions over 100 lines in tests/ bench/', long_functions(root, OTHER)),
        ('hand-written out-of-memory errors (and OOM helpers)', oom_literals(root)),
        ('hand-written doubling realloc() loops', doubling_reallocs(root)),
    ]
    for title, items in rows:
        print('%5d  %s' % (len(items), title))
        if a.list:
            for it in items:
                print('         ' + it)
    return 0


if __name__ == '__main__':
    sys.exit(main())
