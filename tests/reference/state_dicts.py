#!/usr/bin/python3
"""Reference state_dict files for gnn/io/StateDict (tests/gnn/io/StateDict_test.cpp), made by torch.save.

Writes tests/reference/state_dicts/<name>.pt and, for each file that must load, <name>.json:

  {"torch": "1.13...", "entries": {"key": {"dtype": "float32", "shape": [2, 3], "values": [...flat, row-major]}}}

Values come from a formula (value(k) for flat index k, per case), never from a random generator, so the files
are the same on every run and the JSON is exact (every float32/float16/bfloat16 value is a double). Files that
must be refused are made with pickle's opcodes directly (os.system, builtins.eval, a user's class, INST): the
script never unpickles them, and nothing in them ever runs. The files are committed: CI has no torch.

Usage (Debian's python3-torch; PyG 2.3.1's source on the path for the PyG-shaped cases):
  PYTHONPATH=/work/pyg231 /usr/bin/python3 tests/reference/state_dicts.py [--out DIR]
  /usr/bin/python3 tests/reference/state_dicts.py --check FILE.pt [REFERENCE.json]
      loads a file gnn wrote with torch.load(weights_only=True), and compares it with a reference when given
"""
import argparse
import collections
import io
import json
import os
import pickle
import sys
import zipfile

import torch


def formula(t, scale=0.25, shift=-2.0):
    """Fills t with (k % 17) * scale + shift for its flat index k (exact in every float type used)."""
    n = t.numel()
    vals = [((k % 17) * scale + shift) for k in range(n)]
    with torch.no_grad():
        t.copy_(torch.tensor(vals, dtype=torch.float64).reshape(t.shape))
    return t


def describe(sd):
    out = {}
    for k, v in sd.items():
        dt = str(v.dtype).replace('torch.', '')
        flat = v.detach().contiguous().reshape(-1)
        if v.dtype in (torch.float16, torch.bfloat16):
            flat = flat.double()
        vals = flat.tolist()
        if v.dtype == torch.bool:
            vals = [int(x) for x in vals]
        out[k] = {"dtype": dt, "shape": list(v.shape), "values": vals}
    return {"torch": torch.__version__, "entries": out}


def save(out, name, sd, obj=None):
    """torch.save(obj or sd) to <name>.pt; <name>.json describes sd (what a reader must return)."""
    torch.save(sd if obj is None else obj, f'{out}/{name}.pt')
    with open(f'{out}/{name}.json', 'w') as f:
        json.dump(describe(sd), f, indent=None)
        f.write('\n')


def plain_cases(out):
    lin = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    for p in lin.parameters():
        formula(p)
    save(out, 'float32', lin.state_dict())
    save(out, 'float64', lin.double().state_dict())

    ints = collections.OrderedDict()
    ints['long'] = torch.tensor([[0, -1, 2**40], [-(2**62), 7, 2**31]], dtype=torch.int64)
    ints['int'] = torch.tensor([1, -2, 2**31 - 1, -(2**31)], dtype=torch.int32)
    ints['short'] = torch.tensor([300, -300, 32767], dtype=torch.int16)
    ints['char'] = torch.tensor([-128, 127, 0, -1], dtype=torch.int8)
    ints['byte'] = torch.tensor([0, 255, 17], dtype=torch.uint8)
    ints['flag'] = torch.tensor([True, False, True, True])
    save(out, 'ints', ints)

    half = collections.OrderedDict()
    half['h'] = formula(torch.empty(2, 5, dtype=torch.float16))
    half['b'] = formula(torch.empty(3, 2, dtype=torch.bfloat16), 0.5, -3.0)
    save(out, 'half', half)

    # Views: a transpose and a strided slice with an offset (saved with their whole storage), one storage
    # shared by three entries.
    base = formula(torch.empty(4, 6), 1.0, 0.0)
    views = collections.OrderedDict()
    views['base'] = base
    views['transposed'] = base.t()
    views['slice'] = base[1:, ::2]
    views['row'] = base[2]
    save(out, 'views', views)

    small = collections.OrderedDict()
    small['scalar'] = torch.tensor(3.5)
    small['empty'] = torch.empty(0)
    small['empty_rows'] = torch.empty(0, 3, dtype=torch.float64)
    small['count'] = torch.tensor(12, dtype=torch.int64)  # BatchNorm's num_batches_tracked
    save(out, 'small', small)

    # Parameters saved as themselves (torch._utils._rebuild_parameter), in a plain dict.
    params = {'w': torch.nn.Parameter(formula(torch.empty(2, 2))), 'b': torch.nn.Parameter(torch.ones(2))}
    save(out, 'parameters', collections.OrderedDict(params), obj=params)

    # A 4-d tensor (gnn's highest rank) and a 5-d one (refused).
    save(out, 'rank4', collections.OrderedDict(x=formula(torch.empty(2, 1, 3, 2))))
    torch.save(collections.OrderedDict(x=torch.zeros(1, 1, 1, 1, 2)), f'{out}/rank5.pt')
    # The start of torch.save's format before 1.6 (bare pickles: its magic number, then its protocol version;
    # torch's own output has address-derived keys, so it is not written whole): refused, saying so.
    with open(f'{out}/legacy.pt', 'wb') as f:
        f.write(pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(1001, protocol=2))


def pyg_cases(out):
    """PyG-shaped key sets: GAT (lin_src is lin_dst: tied), a GCN model with BatchNorm (num_batches_tracked)."""
    from torch_geometric.nn import GATConv
    from torch_geometric.nn.models import GCN
    torch.manual_seed(0)
    gat = GATConv(5, 3, heads=2)
    for p in gat.parameters():
        formula(p, 0.125, -1.0)
    save(out, 'pyg_gat', gat.state_dict())
    gcn = GCN(4, 8, num_layers=2, out_channels=3, norm='batch_norm')
    for i, p in enumerate(gcn.parameters()):
        formula(p, 0.0625 * (i + 1), -0.5)
    for name, b in gcn.named_buffers():
        if b.dtype == torch.int64:
            b.fill_(5)
        else:
            formula(b, 0.5, 0.25)
    save(out, 'pyg_gcn', gcn.state_dict())


def put(z, name, data, force_zip64=False):
    """A stored member with a fixed date, so the files are the same on every run."""
    with z.open(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), 'w', force_zip64=force_zip64) as f:
        f.write(data.encode() if isinstance(data, str) else data)


def zip_with_pickle(path, pkl, archive='evil'):
    """A torch-shaped zip whose data.pkl is `pkl` (bytes built here, never unpickled)."""
    with zipfile.ZipFile(path, 'w', zipfile.ZIP_STORED) as z:
        put(z, f'{archive}/data.pkl', pkl)
        put(z, f'{archive}/version', '3\n')


def evil_cases(out):
    # Each pickle is written opcode by opcode: GLOBAL then REDUCE, the way a malicious file calls a function.
    call = lambda module, name, arg: (b'\x80\x02c' + module + b'\n' + name + b'\n' +
                                      b'X' + len(arg).to_bytes(4, 'little') + arg + b'\x85R.')
    zip_with_pickle(f'{out}/evil_system.pt', call(b'posix', b'system', b'touch /tmp/gnn-state-dict-pwned'))
    zip_with_pickle(f'{out}/evil_eval.pt', call(b'builtins', b'eval', b'__import__("os").getcwd()'))
    # A user's class: GLOBAL __main__ Model, EMPTY_TUPLE, NEWOBJ, as pickle writes an object.
    zip_with_pickle(f'{out}/evil_class.pt', b'\x80\x02c__main__\nModel\n)\x81}b.')
    # INST (protocol 0's class call) on a builtin, and an opcode torch refuses (BINFLOAT) inside an OrderedDict.
    zip_with_pickle(f'{out}/evil_inst.pt', b'(X\x02\x00\x00\x00idibuiltins\nprint\n.')
    zip_with_pickle(f'{out}/binfloat.pt', b'\x80\x02ccollections\nOrderedDict\n)R(X\x01\x00\x00\x00aG?\xf0\x00\x00\x00\x00\x00\x00u.')
    # A storage key the archive lacks, and a declared numel the member contradicts.
    good = open(f'{out}/float32.pt', 'rb').read()
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        names = z.namelist()
        members = {n: z.read(n) for n in names}
    missing = {n: d for n, d in members.items() if not n.endswith('/data/1')}
    with zipfile.ZipFile(f'{out}/missing_storage.pt', 'w', zipfile.ZIP_STORED) as z:
        for n, d in missing.items():
            put(z, n, d)
    with zipfile.ZipFile(f'{out}/bad_numel.pt', 'w', zipfile.ZIP_STORED) as z:
        for n, d in members.items():
            put(z, n, d + b'\0\0\0\0' if n.endswith('/data/0') else d)
    # Big-endian: the float32 file's storages byte-swapped, with byteorder "big" (what torch >= 2.1 writes on a
    # big-endian machine); it reads equal to float32.json.
    with zipfile.ZipFile(f'{out}/float32_big_endian.pt', 'w', zipfile.ZIP_STORED) as z:
        for n, d in members.items():
            if '/data/' in n:
                d = bytes(b for i in range(0, len(d), 4) for b in reversed(d[i:i + 4]))
            put(z, n, d)
        put(z, names[0].split('/')[0] + '/byteorder', 'big')
    # numpy's npz of the same values, as np.savez writes it (stored members, ZIP64 local headers), dated.
    import numpy as np
    sd = torch.load(f'{out}/float32.pt', weights_only=True)
    with zipfile.ZipFile(f'{out}/float32.npz', 'w', zipfile.ZIP_STORED) as z:
        for k, v in sd.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, v.numpy())
            put(z, k + '.npy', buf.getvalue(), force_zip64=True)
    # np.savez_compressed's deflated members: refused (gnn_core has no zlib), with a message saying so.
    with zipfile.ZipFile(f'{out}/float32_compressed.npz', 'w', zipfile.ZIP_DEFLATED) as z:
        for k, v in sd.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, v.numpy())
            info = zipfile.ZipInfo(k + '.npy', date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, buf.getvalue())


def check(path, reference):
    sd = torch.load(path, weights_only=True)
    print(f'{path}: {len(sd)} entries, _metadata: {getattr(sd, "_metadata", None)}')
    for k, v in sd.items():
        print(f'  {k}: {str(v.dtype)} {list(v.shape)}')
    if reference:
        want = json.load(open(reference))['entries']
        got = describe(sd)['entries']
        assert list(want) == list(got), (list(want), list(got))
        for k in want:
            assert want[k] == got[k], (k, want[k], got[k])
        print('  equal to', reference)
    return sd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'state_dicts'))
    ap.add_argument('--check', nargs='+')
    a = ap.parse_args()
    if a.check:
        check(a.check[0], a.check[1] if len(a.check) > 1 else None)
        return
    os.makedirs(a.out, exist_ok=True)
    plain_cases(a.out)
    pyg_cases(a.out)
    evil_cases(a.out)
    # What torch itself says of the refused pickles (weights_only refuses them before anything runs).
    for name in ['evil_system', 'evil_eval', 'evil_class', 'evil_inst', 'binfloat']:
        try:
            torch.load(f'{a.out}/{name}.pt', weights_only=True)
            print(f'{name}: torch.load(weights_only=True) ACCEPTED it', file=sys.stderr)
            sys.exit(1)
        except Exception as e:  # noqa: BLE001 (any refusal will do)
            print(f'{name}: torch refuses: {str(e).splitlines()[-1][:100]}')


if __name__ == '__main__':
    main()
