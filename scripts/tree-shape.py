#!/usr/bin/env python3
"""Checks the shape of the source tree that keeps it readable as it grows:

  /usr/bin/python3 scripts/tree-shape.py [--max-lines 800] [--max-top-headers 12]

  - no source file outside tests/ over --max-lines lines (.cpp, .h, .py, .sh of the source folders);
  - at most --max-top-headers headers directly in gnn/: the rest sit in its rooms (tensor, autograd, ops,
    kernels, nn/conv, nn/aggr, nn/norm, nn/pool, nn/models, optim, metrics, io, system; ../shared/DESIGN.md);
  - every message-passing layer of the library (a class deriving from MessagePassing, or a header named
    *Conv.h) in gnn/ lives in gnn/nn/conv/, one per file named after it;
  - no header left at an old path: gnn/<Name>.h for a header that moved into a room.

Prints each violation and exits 1 when there is one.
"""
import argparse
import os
import re
import sys

SOURCE_FOLDERS = ("app", "bench", "data", "device", "examples", "fuzz", "gnn", "loaders", "models", "scripts")


def sources(root, exts):
    for folder in SOURCE_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(("build", ".")) and d != "results")
            for f in sorted(filenames):
                if f.endswith(exts):
                    yield os.path.join(dirpath, f)


def code_of(path):
    """The file's text without // and /* */ comments (usage examples in comments are not declarations)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-lines", type=int, default=800)
    parser.add_argument("--max-top-headers", type=int, default=12)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = []
    for path in sources(root, (".cpp", ".h", ".py", ".sh")):
        with open(path, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > args.max_lines:
            problems.append(f"{os.path.relpath(path, root)}: {n} lines, over {args.max_lines}")
    gnn = os.path.join(root, "gnn")
    top = sorted(f for f in os.listdir(gnn) if f.endswith(".h"))
    if len(top) > args.max_top_headers:
        problems.append(f"gnn/: {len(top)} headers directly in it, over {args.max_top_headers}: {', '.join(top)}")
    conv_room = os.path.join(gnn, "nn", "conv")
    derives = re.compile(r"class\s+(\w+)\s*(?:final\s*)?:\s*public\s+MessagePassing\b")
    for path in sources(root, (".h",)):
        rel = os.path.relpath(path, root)
        if not rel.startswith("gnn" + os.sep) or os.path.dirname(path) == conv_room:
            continue
        for cls in derives.findall(code_of(path)):
            problems.append(f"{rel}: layer {cls} derives from MessagePassing outside gnn/nn/conv/")
        if os.path.basename(path).endswith("Conv.h"):
            problems.append(f"{rel}: a convolution layer's header outside gnn/nn/conv/")
    for path in sources(root, (".h",)):
        rel = os.path.relpath(path, root)
        if os.path.dirname(path) == conv_room:
            classes = derives.findall(code_of(path))
            name = os.path.splitext(os.path.basename(path))[0]
            if classes and name not in classes:
                problems.append(f"{rel}: holds {', '.join(classes)}; a layer's file is named after it")
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s) with the tree's shape")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
