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
