#!/usr/bin/env python3
"""Mutation campaign: damaged inputs through the sanitizer-built programs, as a careless or hostile user would.

  /usr/bin/python3 scripts/mutation-campaign.py [--bin build/asan/examples] [--cases 200] [--seed 1] [--timeout 60]
                                                [--kinds npz,checkpoint,csv,xyz] [--keep DIR]

Builds small valid inputs from the shipped data with the given programs (an ASan + UBSan build: the asan preset),
then for each kind runs --cases mutated copies through the program that reads them:

  npz         a Graphormer-encoded dataset (build_dataset --graphormer-max-dist 3, 40 molecules): random byte
              flips, truncations, and aligned 2/4/8-byte words overwritten with extreme values (0, -1, INT_MAX,
              INT_MIN, 0xffff...): header lengths, zip sizes and offsets, shapes, node_ptr / edge_ptr entries.
              Read by `build_dataset inspect`.
  npz-crc     the same, but the damage is inside one member (its .npy header: dtype, shape, order; or its data:
              node_ptr, edge_ptr, edge_index, features) and the archive is rewritten with correct CRC-32s, so only
              the reader's own checks (shapes, dtypes, monotone pointers, edges inside their graph, sizes) stand
              between the damage and a silently wrong dataset. Another finite value in the data of `y` or `pos`
              is a different dataset, not a damaged one, and counts as read.
  checkpoint  a molecule_property --save checkpoint: byte flips and truncations. Read by molecule_property --load
              (one more epoch).
  csv         the dataset's CSV: bytes inserted (non-UTF-8, NUL, quotes, commas, newlines), lines duplicated or
              cut, fields replaced by huge numbers, NaN, long runs of atoms. Read by build_dataset.
  xyz         the first molecules of QM7's XYZ: atom counts replaced (0, -1, 10^9, text), lines cut or repeated,
              coordinates replaced by NaN and huge values. Read by build_dataset --target-cols e_pbe0_atomization_kcal_mol.

A case FAILS on: a sanitizer report (AddressSanitizer, LeakSanitizer, "runtime error:"), death by a signal, a
timeout, or, for npz and checkpoint, exit 0 on a file whose content changed (inspect's output, or the run's
result, differs from the intact file's: corruption accepted silently). A mutation that only touches bytes the
format does not check (a zip timestamp, say) reads back the same content and passes. Exit 0 on a damaged text
file is fine when the damaged molecules are reported (rejected lines) and the run goes on.
Prints one line per kind (cases, refused with an error, read back intact, failures) and the failures' first
lines; failing inputs are kept under --keep (default: a temp folder, printed). Exit status 1 on any failure.
"""
import argparse
import gzip
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SANITIZER = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "SUMMARY: UndefinedBehavior")


def run(cmd, timeout, cwd):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:halt_on_error=1", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
               LSAN_OPTIONS=f"suppressions={REPO}/fuzz/lsan.supp:print_suppressions=0")
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, cwd=cwd, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, "", ""


def verdict(rc, out, err):
    """'fail: why' or None."""
    if rc is None:
        return "fail: timeout"
    if any(s in err for s in SANITIZER):
        line = next(l for l in err.splitlines() if any(s in l for s in SANITIZER))
        return "fail: sanitizer: " + line.strip()[:200]
    if rc < 0:
        return f"fail: killed by signal {-rc}"
    return None


EXTREMES = [0, 0xFF, 0xFFFF, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFFFFFFFFFF, 0x7FFFFFFFFFFFFFFF,
            0x8000000000000000, 1 << 27, 1000000]


def mutate_binary(data, rng):
    b = bytearray(data)
    kind = rng.choice(["flip", "flip", "truncate", "word", "word", "word"])
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b), kind
    if kind == "truncate":
        return bytes(b[: rng.randrange(len(b))]), kind
    width = rng.choice([2, 4, 8])
    i = rng.randrange(0, len(b) - width) // width * width
    v = rng.choice(EXTREMES) & ((1 << (8 * width)) - 1)
    b[i:i + width] = v.to_bytes(width, "little")
    return bytes(b), f"word{width}@{i}={v:#x}"


def mutate_text(lines, rng, kind_name):
    lines = list(lines)
    k = rng.randrange(1, len(lines))
    op = rng.choice(["bytes", "bytes", "dup", "cut", "field", "long"])
    line = lines[k]
    if op == "bytes":
        junk = rng.choice([b"\xff", b"\xc3", b"\x00", b'"', b",", b"\n", b"\r", b"\xe2\x82", b"'", b"\\"])
        i = rng.randrange(len(line) + 1)
        lines[k] = line[:i] + junk * rng.randint(1, 3) + line[i:]
    elif op == "dup":
        lines[k:k] = [line] * rng.randint(1, 50)
    elif op == "cut":
        lines[k] = line[: rng.randrange(len(line) + 1)]
    elif op == "field":
        parts = line.split(b",") if kind_name == "csv" else line.split()
        if parts:
            j = rng.randrange(len(parts))
            parts[j] = rng.choice([b"1e308", b"-1e309", b"nan", b"inf", b"-1", b"0", b"1000000000", b"99999999999999999999",
                                   b"", b"abc"])
            lines[k] = (b"," if kind_name == "csv" else b" ").join(parts)
    else:
        lines[k] = (line.split(b",")[0] + b"C" * rng.choice([600, 5000, 40000]) + b"," + b"1.0") if kind_name == "csv" \
            else rng.choice([b"1000000000", b"-5", b"0", b"x"])
    return b"\n".join(lines) + b"\n", op


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "asan", "examples"))
    ap.add_argument("--cases", type=int, default=200, help="mutated inputs per kind")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60, help="seconds per case")
    ap.add_argument("--kinds", default="npz,npz-crc,checkpoint,csv,xyz")
    ap.add_argument("--keep", default=None, help="folder for failing inputs")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    bd, mp = os.path.join(a.bin, "build_dataset"), os.path.join(a.bin, "molecule_property")
    for p in (bd, mp):
        if not os.access(p, os.X_OK):
            sys.exit(f"mutation-campaign.py: {p} not found: build the asan preset (cmake --build --preset asan)")
    work = tempfile.mkdtemp(prefix="gnn-mutation-")
    keep = a.keep or os.path.join(work, "failures")
    os.makedirs(keep, exist_ok=True)
    rng = random.Random(a.seed)

    # Intact inputs.
    with gzip.open(os.path.join(REPO, "examples/data/pcqm4mv2_style/raw/data.csv.gz")) as f:
        csv_lines = f.read().splitlines()[:41]
    csv_path = os.path.join(work, "base.csv")
    with open(csv_path, "wb") as f:
        f.write(b"\n".join(csv_lines) + b"\n")
    npz = os.path.join(work, "base.npz")
    rc, _, err = run([bd, "--input", csv_path, "--target-cols", "homolumogap", "--graphormer-max-dist", "3", "--out", npz,
                      "--threads", "1"], 600, work)
    if rc != 0:
        sys.exit(f"mutation-campaign.py: could not build the intact dataset:\n{err[-2000:]}")
    ckpt = os.path.join(work, "base.ckpt")
    train = [mp, "--data", npz, "--batch-size", "8", "--layers", "2", "--hidden", "32", "--threads", "1",
             "--quiet", "--json"]
    rc, _, err = run(train + ["--epochs", "1", "--save", ckpt], 600, work)
    if rc != 0:
        sys.exit(f"mutation-campaign.py: could not train the intact checkpoint:\n{err[-2000:]}")
    with gzip.open(os.path.join(REPO, "examples/data/qm7_3d/qm7.xyz.gz")) as f:
        xyz_lines = []
        lines = f.read().splitlines()
        i = 0
        for _ in range(20):  # the first 20 molecules
            n = int(lines[i])
            xyz_lines += lines[i:i + n + 2]
            i += n + 2

    def strip_times(text):
        # Times vary, and the file's size does when a member is rewritten without alignment padding.
        text = re.sub(r"[0-9.]+ MB \([0-9]+ bytes/graph\)", "", text)
        return "\n".join(l for l in text.splitlines() if "second" not in l and "_ms" not in l and "_s\"" not in l)

    _, inspect_ok, _ = run([bd, "inspect", npz], 600, work)
    rc, resumed_ok, _ = run(train + ["--load", ckpt, "--epochs", "2"], 600, work)

    def resumed_key(out):
        import json
        try:
            j = json.loads(out[out.find("{"):])
        except ValueError:
            return None
        return j.get("param_checksum"), j.get("loss_checksum")

    ok_key = resumed_key(resumed_ok)
    if not inspect_ok.strip() or ok_key is None or None in ok_key:
        sys.exit("mutation-campaign.py: the intact dataset or checkpoint did not read back (inspect, --load)")
    def inspect_mutated(path, free):
        """inspect on a damaged .npz: (rc, out, err, verdict); exit 0 passes only when the content reads as the
        intact file's (or the change is free-valued data)."""
        rc, out, err = run([bd, "inspect", path], a.timeout, work)
        v = verdict(rc, out, err)
        if v is None and rc == 0 and not free and strip_times(out.replace(path, npz)) != strip_times(inspect_ok):
            v = "fail: exit 0 on a changed file whose content reads differently"
        return rc, out, err, v

    failures = 0
    for kind in a.kinds.split(","):
        refused = intact = bad = 0
        notes, samples = [], []
        for c in range(a.cases):
            if kind == "npz":
                data, how = mutate_binary(open(npz, "rb").read(), rng)
                path = os.path.join(work, "m.npz")
                open(path, "wb").write(data)
                rc, out, err, v = inspect_mutated(path, free=False)
            elif kind == "npz-crc":
                with zipfile.ZipFile(npz) as z:
                    members = [(i.filename, z.read(i.filename)) for i in z.infolist()]
                j = rng.randrange(len(members))
                name, body = members[j]
                if rng.random() < 0.5:  # the .npy header (magic, version, length, the dict with dtype and shape)
                    b = bytearray(body)
                    hlen = min(len(b), 10 + struct.unpack_from("<H", b, 8)[0])
                    i = rng.randrange(hlen)
                    b[i] = rng.choice([0x00, 0x20, 0x27, 0x2C, 0x31, 0x39, 0x3C, 0x66, 0x69, 0x7B, 0xFF])
                    body, how = bytes(b), f"{name} header byte {i}"
                else:
                    body, how = mutate_binary(body, rng)
                    how = f"{name} {how}"
                members[j] = (name, body)
                path = os.path.join(work, "m.npz")
                with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
                    for n, bb in members:
                        z.writestr(n, bb)
                # Labels and coordinates are free-valued: with the CRC-32 recomputed, another finite value in the
                # data of y or pos is a different dataset, not a damaged one (no reader can tell).
                rc, out, err, v = inspect_mutated(path, free=name in ("y.npy", "pos.npy") and "header" not in how)
            elif kind == "checkpoint":
                data, how = mutate_binary(open(ckpt, "rb").read(), rng)
                path = os.path.join(work, "m.ckpt")
                open(path, "wb").write(data)
                rc, out, err = run(train + ["--load", path, "--epochs", "2"], a.timeout, work)
                v = verdict(rc, out, err)
                if v is None and rc == 0 and resumed_key(out) != ok_key:
                    v = "fail: exit 0 on a changed checkpoint that trains differently"
            else:
                base = csv_lines if kind == "csv" else xyz_lines
                data, how = mutate_text(base, rng, kind)
                path = os.path.join(work, "m." + kind)
                open(path, "wb").write(data)
                target = "homolumogap" if kind == "csv" else "e_pbe0_atomization_kcal_mol"
                out_npz = os.path.join(work, "m_out.npz")
                rc, out, err = run([bd, "--input", path, "--target-cols", target, "--out", out_npz, "--threads", "1"],
                                   a.timeout, work)
                v = verdict(rc, out, err)
            if v is None:
                refused += rc != 0
                intact += rc == 0
            if v is None and rc != 0 and len(samples) < 3:
                first = next((l for l in err.splitlines() if "error" in l), err.strip().splitlines()[0] if err.strip() else "")
                samples.append(f"  e.g. ({how}) {first.replace(work + '/', '')[:220]}")
            if v is not None:
                bad += 1
                kept = os.path.join(keep, f"{kind}-{c}-{os.path.basename(path)}")
                shutil.copy(path, kept)
                notes.append(f"  {kind} case {c} ({how}): {v}  [{kept}]")
        failures += bad
        print(f"{kind:11s} cases {a.cases:5d}  refused {refused:5d}  read/ran (intact or damage reported) {intact:5d}  "
              f"failures {bad}")
        for n in notes[:10] + samples:
            print(n)
    print(f"work folder: {work}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
