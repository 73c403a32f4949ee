#!/usr/bin/python3
"""Reference featuriser for the C++ tests: OGB's smiles2graph feature lists, reimplemented.

The lists below restate ogb/utils/features.py (allowable_features, safe_index) and ogb/utils/mol.py
(smiles2graph: two directed edges per bond, in bond order). Runs with Debian's python3-rdkit, no OGB needed.

Usage: ogb_smiles2graph.py SMILES_FILE [--graphormer K]
  SMILES_FILE has one SMILES per line (taken whole, as given). Prints one JSON object per line:
  {"x": [[9 ints]...], "edge_index": [[src...], [dst...]], "edge_attr": [[3 ints]...]} or {"error": "..."}.
  With --graphormer K also "spatial_pos", "in_degree" and "edge_input" (first K hops), computed like
  Graphormer's preprocess_item (Floyd-Warshall, unreachable = 510, edge features offset as in wrapper.py).
"""
import json
import sys

from rdkit import Chem, RDLogger

RDLogger.DisableLog("rdApp.*")

ATOMIC_NUM = list(range(1, 119)) + ["misc"]
CHIRALITY = ["CHI_UNSPECIFIED", "CHI_TETRAHEDRAL_CW", "CHI_TETRAHEDRAL_CCW", "CHI_OTHER", "misc"]
DEGREE = list(range(0, 11)) + ["misc"]
FORMAL_CHARGE = list(range(-5, 6)) + ["misc"]
NUM_HS = list(range(0, 9)) + ["misc"]
RADICAL_E = list(range(0, 5)) + ["misc"]
HYBRIDIZATION = ["SP", "SP2", "SP3", "SP3D", "SP3D2", "misc"]
BOOL = [False, True]
BOND_TYPE = ["SINGLE", "DOUBLE", "TRIPLE", "AROMATIC", "misc"]
BOND_STEREO = ["STEREONONE", "STEREOZ", "STEREOE", "STEREOCIS", "STEREOTRANS", "STEREOANY"]


def index_or_last(values, v):
    return values.index(v) if v in values else len(values) - 1


def atom_features(a):
    return [
        index_or_last(ATOMIC_NUM, a.GetAtomicNum()),
        index_or_last(CHIRALITY, str(a.GetChiralTag())),
        index_or_last(DEGREE, a.GetTotalDegree()),
        index_or_last(FORMAL_CHARGE, a.GetFormalCharge()),
        index_or_last(NUM_HS, a.GetTotalNumHs()),
        index_or_last(RADICAL_E, a.GetNumRadicalElectrons()),
        index_or_last(HYBRIDIZATION, str(a.GetHybridization())),
        BOOL.index(a.GetIsAromatic()),
        BOOL.index(a.IsInRing()),
    ]


def bond_features(b):
    return [
        index_or_last(BOND_TYPE, str(b.GetBondType())),
        BOND_STEREO.index(str(b.GetStereo())),
        BOOL.index(b.GetIsConjugated()),
    ]


def graph(smiles):
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        return None
    x = [atom_features(a) for a in mol.GetAtoms()]
    src, dst, attr = [], [], []
    for b in mol.GetBonds():
        i, j = b.GetBeginAtomIdx(), b.GetEndAtomIdx()
        f = bond_features(b)
        src += [i, j]
        dst += [j, i]
        attr += [f, f]
    return {"x": x, "edge_index": [src, dst], "edge_attr": attr}


def graphormer(g, k):
    """Graphormer's preprocess_item restated in plain Python (algos.floyd_warshall, gen_edge_input)."""
    n = len(g["x"])
    src, dst = g["edge_index"]
    adj = [[0] * n for _ in range(n)]
    edge_type = {}
    for e, (i, j) in enumerate(zip(src, dst)):
        adj[i][j] = 1
        # convert_to_single_emb(edge_attr) + 1: feature f gets 1 + 512 f, then + 1.
        edge_type[(i, j)] = [v + 1 + 512 * f + 1 for f, v in enumerate(g["edge_attr"][e])]
    dist = [[0 if i == j else (1 if adj[i][j] else 510) for j in range(n)] for i in range(n)]
    path = [[-1] * n for _ in range(n)]
    for m in range(n):
        for i in range(n):
            for j in range(n):
                if dist[i][j] > dist[i][m] + dist[m][j]:
                    dist[i][j] = dist[i][m] + dist[m][j]
                    path[i][j] = m
    for i in range(n):
        for j in range(n):
            if dist[i][j] >= 510:
                dist[i][j] = 510
                path[i][j] = 510

    def between(i, j):
        m = path[i][j]
        return [] if m == -1 else between(i, m) + [m] + between(m, j)

    edge_input = [[[[-1] * 3 for _ in range(k)] for _ in range(n)] for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i == j or path[i][j] == 510:
                continue
            p = [i] + between(i, j) + [j]
            for h in range(min(k, len(p) - 1)):
                edge_input[i][j][h] = edge_type[(p[h], p[h + 1])]
    g["spatial_pos"] = dist
    g["in_degree"] = [sum(row) for row in adj]
    g["edge_input"] = edge_input


def main():
    args = sys.argv[1:]
    k = None
    if "--graphormer" in args:
        at = args.index("--graphormer")
        k = int(args[at + 1])
        del args[at:at + 2]
    out = sys.stdout
    with open(args[0]) as f:
        for line in f:
            smiles = line.rstrip("\n")
            try:
                g = graph(smiles)
            except Exception as e:  # a bond stereo outside OGB's list raises in OGB too
                g = None
            if g is None:
                out.write('{"error": "rejected"}\n')
                continue
            if k is not None:
                graphormer(g, k)
            out.write(json.dumps(g, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
