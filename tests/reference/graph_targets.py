"""Writes tests/reference/molecules/graph_targets.csv: the shipped ESOL molecules with targets that are functions of
the molecular graph alone, so a model that learns at all fits them (tests/examples/RegressionFits_test.cpp):

  mean_logp          Wildman-Crippen logP (RDKit's Crippen.MolLogP, a sum of per-atom contributions) per heavy atom
  aromatic_fraction  the share of heavy atoms that are aromatic
  heavy_atoms        the heavy-atom count (a sum of per-atom values: for sum readouts)

Run once with Debian's python3-rdkit: /usr/bin/python3 tests/reference/graph_targets.py
"""
import csv
import gzip
import os

from rdkit import Chem
from rdkit.Chem import Crippen

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(here, "..", "..", "examples", "data", "moleculenet", "delaney-processed.csv.gz")
with gzip.open(src, "rt") as f, open(os.path.join(here, "molecules", "graph_targets.csv"), "w", newline="") as out:
    w = csv.writer(out)
    w.writerow(["smiles", "mean_logp", "aromatic_fraction", "heavy_atoms"])
    for row in csv.DictReader(f):
        m = Chem.MolFromSmiles(row["smiles"])
        n = m.GetNumAtoms()
        w.writerow([row["smiles"].strip(), f"{Crippen.MolLogP(m) / n:.6f}",
                    f"{sum(a.GetIsAromatic() for a in m.GetAtoms()) / n:.6f}", n])

# The first 1,000 molecules of the shipped QM7 file with the same kind of targets for SchNet (3D input, hydrogens
# as atoms): heavy_atoms (a sum of per-atom values, as SchNet's sum readout) and mean_z (the mean atomic number).
Z = {"H": 1, "C": 6, "N": 7, "O": 8, "S": 16}
qm7 = os.path.join(here, "..", "..", "examples", "data", "qm7_3d", "qm7.xyz.gz")
with gzip.open(qm7, "rt") as f, gzip.open(os.path.join(here, "molecules", "graph_targets.xyz.gz"), "wt") as out:
    for k in range(1000):
        n = int(f.readline())
        comment = f.readline().split()
        atoms = [f.readline() for _ in range(n)]
        z = [Z[a.split()[0]] for a in atoms]
        keys = " ".join(c for c in comment if c.split("=")[0] in ("idx", "file"))
        out.write(f"{n}\n{keys} heavy_atoms={sum(v > 1 for v in z)} mean_z={sum(z) / n:.6f}\n" + "".join(atoms))
