#!/usr/bin/python3
# Writes the seed corpora under fuzz/corpus/<target>/ from the shipped data (examples/data, the MoleculeNet,
# PCQM4Mv2-style, QM7 and Cora samples): a few small, valid inputs per format. The npz seeds are made by
# build_dataset (pass its path). Run from the repository root:  fuzz/make_corpus.py build/release/examples/build_dataset
import gzip, io, os, struct, subprocess, sys, tempfile

from rdkit import Chem
from rdkit.Chem import AllChem

C = 'fuzz/corpus'
DATA = 'examples/data' if os.path.exists('examples/data/moleculenet/BBBP.csv.gz') else '/work/shared/data'


def w(target, name, data):
    os.makedirs(f'{C}/{target}', exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(f'{C}/{target}/{name}', 'wb') as f:
        f.write(data)


def lines(path):
    return gzip.open(path, 'rt').read().splitlines()


esol = lines(f'{DATA}/moleculenet/delaney-processed.csv.gz')[1:]
rows = [(l.rsplit(',', 1)[1].strip(), l.split(',')[-2]) for l in esol[:40]]
bbbp = lines(f'{DATA}/moleculenet/BBBP.csv.gz')

# SMILES: ESOL and BBBP molecules plus stereo, charges, aromatic rings, isotopes, ring closures.
sm = [r[0] for r in rows[:12]] + [l.rsplit(',', 1)[1] for l in bbbp[1:6]]
sm += ['Cl[C@H](/C=C/C)Br', '[NH4+].[Cl-]', 'c1ccc2[nH]ccc2c1', '[13CH3]O', 'C1CC1%10.C%10']
for i, s in enumerate(sm):
    w('smiles', f'seed{i:02d}', s)

# CSV: plain and gzip, quoted fields, missing labels, a split column, CRLF.
csv = 'smiles,y,z,split\n' + ''.join(
    f'{s},{y},{i % 3},{["train", "valid", "test"][i % 3]}\n' for i, (s, y) in enumerate(rows[:8]))
w('csv', 'plain.csv', csv)
w('csv', 'plain.csv.gz', gzip.compress(csv.encode(), mtime=0))
w('csv', 'quoted.csv', 'name,"smiles",y,z,split\n"a, b","CCO",1.5,,train\nx,"C""C",nan,NA,Val\ny,c1ccccc1,None,2,TEST\n')
w('csv', 'crlf.csv', 'smiles,y,z\r\nCCO,1,2\r\nCCN,,3\r\n')

# PCQM4Mv2 layout: data.csv \x01 train \x01 valid \x01 test (fuzz/pcqm4mv2_fuzzer.cpp).
data = '\n'.join(lines(f'{DATA}/pcqm4mv2_style/raw/data.csv.gz')[:13]) + '\n'
w('pcqm4mv2', 'layout', data + '\x01' + '0\n1\n2\n3\n4\n5\n6\n7\n' + '\x01' + '8\n9\n' + '\x01' + '10\n11\n')
w('pcqm4mv2', 'nosplit', data)

# SDF: ESOL molecules with a property, a 3D record with hydrogens, a V3000 block.
sdf = io.StringIO()
wr = Chem.SDWriter(sdf)
for s, y in rows[:4]:
    m = Chem.MolFromSmiles(s)
    m.SetProp('y', y)
    m.SetProp('_Name', s[:20])
    wr.write(m)
wr.close()
w('sdf', 'esol4.sdf', sdf.getvalue())
m = Chem.AddHs(Chem.MolFromSmiles('OCC(=O)[O-]'))
AllChem.EmbedMolecule(m, randomSeed=1)
w('sdf', '3d.sdf', Chem.MolToMolBlock(m) + '> <y>\n1.5\n\n$$$$\n')
w('sdf', 'v3000.sdf', Chem.MolToV3KMolBlock(Chem.MolFromSmiles('C[C@H](N)C(=O)O')) + '> <y>\n2\n\n$$$$\n')

# XYZ: the first QM7 molecules, plain and gzip.
xyz = lines(f'{DATA}/qm7_3d/qm7.xyz.gz')
out, i = [], 0
for _ in range(4):
    k = int(xyz[i])
    out += xyz[i:i + 2 + k]
    i += 2 + k
w('xyz', 'qm7_4.xyz', '\n'.join(out) + '\n')
w('xyz', 'qm7_1.xyz.gz', gzip.compress(('\n'.join(out[:7]) + '\n').encode(), mtime=0))

# OGB node layout: 10 Cora nodes (first 16 feature columns, labels, edges among them), sections cut at \x01.
feat = [','.join(l.split(',')[:16]) for l in lines(f'{DATA}/cora/raw/node-feat.csv.gz')[:10]]
lab = lines(f'{DATA}/cora/raw/node-label.csv.gz')[:10]
edges = [l for l in lines(f'{DATA}/cora/raw/edge.csv.gz') if all(int(x) < 10 for x in l.split(','))][:30]
edges += ['0,1', '1,0', '2,3', '3,2', '4,5', '5,4', '6,7', '7,6', '8,9', '9,8']
secs = ['\n'.join(edges), '\n'.join(feat), '\n'.join(lab), '10', '0\n1\n2\n3', '4\n5\n6', '7\n8\n9']
w('ogb_node', 'cora10', '\x01'.join(s + '\n' for s in secs))
w('ogb_node', 'nosplit', '\x01'.join(s + '\n' for s in secs[:4]))

# OGB heterogeneous layout (ogbn-mag's): node types a, b and relations a___r___b, b___s___b, in the order
# fuzz/ogb_hetero_fuzzer.cpp writes its files (counts, triplets, the two relations' files, b's features and
# node_year, labels, split), sections cut at \x01; the second seed is the graph alone (no labels, no split).
hetero = ['b,a\n3,2', 'b,s,b\na,r,b', '0,0\n1,2\n0,1', '3', '0.5,1\n-1,2\n3,0', '0\n1\n2', '0,1\n1,2\n2,2', '3',
          '1,0,2\n0,1,0\n3,3,1', '2001\n2002\n2003', 'a,b\nFalse,True', '0\n1\n1', 'b\nTrue', '0', '1', '2']
w('ogb_hetero', 'mag_like', '\x01'.join(s + '\n' for s in hetero))
w('ogb_hetero', 'graph_only', '\x01'.join(s + '\n' for s in hetero[:10]))


# Checkpoints: Linear(4, 2) as "model" with Adam state, in gnn/io/Checkpoint.h's format.
def ckpt(tensors, meta):
    b = b'GNNCKPT\0' + struct.pack('<IIQ', 1, len(tensors), len(meta)) + meta
    for name, dt, shape, raw in tensors:
        b += struct.pack('<I', len(name)) + name.encode() + struct.pack('<BB', dt, len(shape))
        b += b''.join(struct.pack('<q', d) for d in shape) + struct.pack('<Q', len(raw)) + raw
    h = 1469598103934665603
    for c in b:
        h = ((h ^ c) * 1099511628211) & 0xffffffffffffffff
    return b + struct.pack('<Q', h)


def f32(n):
    return struct.pack(f'<{n}f', *[0.1 * i for i in range(n)])


T = [('model.weight', 0, [2, 4], f32(8)), ('model.bias', 0, [2], f32(2)),
     ('optimizer.step', 3, [1], struct.pack('<q', 3)), ('optimizer.lr', 1, [1], struct.pack('<d', 1e-3)),
     ('optimizer.m.0', 0, [2, 4], f32(8)), ('optimizer.m.1', 0, [2], f32(2)),
     ('optimizer.v.0', 0, [2, 4], f32(8)), ('optimizer.v.1', 0, [2], f32(2))]
w('checkpoint', 'adam.ckpt', ckpt(T, b'{"epoch": 3, "model": {"name": "linear"}}'))
w('checkpoint', 'model_only.ckpt', ckpt(T[:2], b'{}'))
w('checkpoint', 'dtypes.ckpt',
  ckpt([('a', 5, [3], b'\x00\x3c' * 3), ('b', 2, [2, 1], struct.pack('<2i', 1, 2)), ('c', 4, [], b'\x07')], b'{"x":[1,2]}'))

# PyTorch state_dicts: the committed torch.save files of tests/reference/state_dicts.py (dtypes, views, tied
# weights, PyG keys, a big-endian file, an .npz), copied: no torch needed here.
SD = 'tests/reference/state_dicts'
for name in ['float32.pt', 'ints.pt', 'half.pt', 'views.pt', 'small.pt', 'parameters.pt', 'pyg_gat.pt',
             'pyg_gcn.pt', 'float32_big_endian.pt', 'float32.npz']:
    w('state_dict', name, open(f'{SD}/{name}', 'rb').read())

# .npz datasets made by build_dataset: SMILES with splits and Graphormer encodings, XYZ with positions, .smi.
if len(sys.argv) > 1:
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        def build(name, src, text, *args):
            p = os.path.join(tmp, src)
            with open(p, 'w') as f:
                f.write(text)
            subprocess.run([tool, '--input', p, '--out', f'{C}/npz/{name}', *args], check=True,
                           stdout=subprocess.DEVNULL)
        os.makedirs(f'{C}/npz', exist_ok=True)
        build('split_k2.npz', 'a.csv', 'smiles,y,split\nCCO,1,train\nc1ccccc1O,2,valid\nCC(=O)N,,test\n',
              '--target-cols', 'y', '--split-col', 'split', '--graphormer-max-dist', '2')
        build('xyz.npz', 'b.xyz', '\n'.join(out[:7]) + '\n', '--target-cols', 'e_pbe0_atomization_kcal_mol')
        build('smi.npz', 'c.smi', 'CCO ethanol\nC#N\n')
