#!/usr/bin/env python3
"""Lists the functions longer than a limit in C++ sources, longest first.

  /usr/bin/python3 scripts/long-functions.py [--limit 120] [--main-limit 60] [FILE ...]

Default files: every .cpp and .h of the tree outside tests/ and build folders (app, bench, data, device,
examples, fuzz, gnn, loaders, models). --main-limit also holds the programs' `main` (examples/ and bench/) to a
tighter limit: a program is a thin front end over the library.

A function's length counts lines from the first line of its signature to its closing brace. The scan removes
comments, string and character literals, then matches braces: a brace at namespace or class scope whose preceding
text ends in a parameter list (optionally followed by const, noexcept, override, a trailing return type or a
constructor's initializer list) opens a function body. Signatures over several lines, member functions
(Class::name), operators, templates and constructors are handled; lambdas and local classes count towards the
function that holds them. Exits 1 when any function is over the limit, so it can guard a check.
"""
import argparse
import glob
import os
import re
import sys


def strip_code(text):
    """Replaces comments and literals by spaces, keeping newlines so line numbers stay right."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2:open_paren]
            close = text.find(")" + delim + '"', open_paren)
            j = n if close < 0 else close + len(delim) + 2
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c in "\"'":
            # A digit separator (1'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


KEYWORDS_NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof"}


INIT_LIST = re.compile(r"\)\s*(?:(?:const|noexcept|override|final)\s*)*:(?!:)")


def initializer_list_start(head):
    """Where a constructor's initializer list (") : a_(x), b_{y}") starts in `head`, or None."""
    depth = 0
    for k, ch in enumerate(head):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                m = INIT_LIST.match(head, k)
                if m:
                    return m.end() - 1
    return None


def function_name(head):
    """The function name when `head` (the text before a brace at namespace/class scope) is a function's
    signature, else None."""
    h = head.strip()
    if not h or h.endswith("="):
        return None  # an initializer: int x[] = {...}
    cut = initializer_list_start(h)
    if cut is not None:
        h = h[:cut].rstrip()
    # Drop what may follow the parameter list.
    h = re.sub(r"\s*->\s*[^()]*$", "", h)
    h = re.sub(r"\s*noexcept\s*\([^()]*\)\s*$", "", h)
    h = re.sub(r"(?:\s*(?:\b(?:const|noexcept|override|final|mutable|volatile)\b|&&|&))*\s*$", "", h)
    if not h.endswith(")"):
        return None
    # Find the matching "(" of the parameter list.
    depth = 0
    for k in range(len(h) - 1, -1, -1):
        if h[k] == ")":
            depth += 1
        elif h[k] == "(":
            depth -= 1
            if depth == 0:
                before = h[:k].rstrip()
                m = re.search(r"((?:[A-Za-z_]\w*(?:<[^<>]*>)?::)*~?(?:operator\s*\(\)|operator\s*[^\s\w(]+"
                              r"|operator\s+\w[\w\s:*&<>]*|[A-Za-z_]\w*))$", before)
                if not m:
                    return None
                name = m.group(1)
                if name.split("::")[-1] in KEYWORDS_NOT_FUNCTIONS:
                    return None
                return name
    return None


def scan(path, text):
    code = strip_code(text)
    # Preprocessor lines are not code either.
    code = re.sub(r"(?m)^[ \t]*#.*(?:\\\n.*)*$", lambda m: re.sub(r"[^\n]", " ", m.group(0)), code)
    found = []
    # "ns" (namespace, class, extern: functions may start inside), "body" (a function, an initializer or an
    # enum), "member-init" (a brace in a constructor's initializer list) or "nested" (any brace inside those).
    scopes = []
    last_stop = 0  # where the current declaration's text starts
    for i, ch in enumerate(code):
        if ch == "{":
            head = code[last_stop:i]
            if any(s[0] != "ns" for s in scopes):
                scopes.append(("nested", None, None))
                continue
            if initializer_list_start(head) is not None and re.search(r"[\w>]\s*$", head):
                scopes.append(("member-init", None, None))  # b_{y} in ") : a_(x), b_{y} {"
                continue
            else:
                name = function_name(head)
                if name:
                    first = last_stop + (len(head) - len(head.lstrip()))
                    scopes.append(("body", name, first))
                elif re.search(r"\b(namespace|class|struct|union|extern)\b", head) and "=" not in head:
                    scopes.append(("ns", None, None))
                else:
                    scopes.append(("body", None, None))  # an initializer or enum body
            last_stop = i + 1
        elif ch == "}":
            kind, name, start = scopes.pop() if scopes else ("ns", None, None)
            if kind in ("member-init", "nested"):
                continue
            if name:
                first_line = code.count("\n", 0, start) + 1
                last_line = code.count("\n", 0, i) + 1
                found.append((last_line - first_line + 1, path, first_line, name))
            last_stop = i + 1
        elif ch == ";" and all(s[0] == "ns" for s in scopes):
            last_stop = i + 1
        elif ch == ":" and all(s[0] == "ns" for s in scopes):
            # An access specifier ("public:") ends a declaration's text, "::" and initializer lists do not.
            if re.search(r"\b(public|private|protected)\s*$", code[last_stop:i]):
                last_stop = i + 1
    return found


SOURCE_FOLDERS = ("app", "bench", "data", "device", "examples", "fuzz", "gnn", "loaders", "models")
PROGRAM_FOLDERS = ("examples", "bench")


def tree_sources(root):
    """Every .cpp and .h under the source folders, sorted (tests and build trees are not in them)."""
    out = []
    for folder in SOURCE_FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(("build", ".")))
            out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith((".cpp", ".h"))]
    return sorted(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--limit", type=int, default=120, help="list functions with more lines than this")
    parser.add_argument("--main-limit", type=int, default=None,
                        help="list programs' main functions (examples/, bench/) with more lines than this")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = args.files or tree_sources(root)
    results = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            results += scan(os.path.relpath(path, root) if not args.files else path, f.read())
    long_ones = [r for r in results if r[0] > args.limit]
    if args.main_limit is not None:
        long_ones += [r for r in results if r[3] == "main" and args.main_limit < r[0] <= args.limit and
                      r[1].replace(os.sep, "/").split("/")[0] in PROGRAM_FOLDERS]
    long_ones.sort(key=lambda r: (-r[0], r[1], r[2]))
    for lines, path, line, name in long_ones:
        print(f"{lines:5d}  {path}:{line}  {name}")
    limits = f"{args.limit} lines" + (f" (a program's main: {args.main_limit})" if args.main_limit is not None else "")
    print(f"{len(long_ones)} function(s) over {limits} in {len(files)} file(s) ({len(results)} functions scanned)")
    return 1 if long_ones else 0


if __name__ == "__main__":
    sys.exit(main())
