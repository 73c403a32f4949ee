#!/usr/bin/python3
"""Reference scaffold split for the C++ tests, with RDKit's own Python scaffold function.

Restates the deterministic scaffold split of deepchem's ScaffoldSplitter and snap-stanford/pretrain-gnns
chem/splitters.py scaffold_split: molecules grouped by MurckoScaffold.MurckoScaffoldSmiles; groups sorted by
(size, first index), largest first; each group to train while it fits under frac_train * n, else to valid
while train + valid fits under (frac_train + frac_valid) * n, else to test. Runs with Debian's python3-rdkit.

Usage: scaffold_split.py SMILES_FILE [--include-chirality]
  SMILES_FILE has one SMILES per line. Prints one JSON object:
  {"scaffolds": [one per molecule], "train": [...], "valid": [...], "test": [...]} (index lists ascending).
"""
import json
import sys

from rdkit import RDLogger
from rdkit.Chem.Scaffolds import MurckoScaffold

RDLogger.DisableLog("rdApp.*")


def main():
    path = sys.argv[1]
    chiral = "--include-chirality" in sys.argv[2:]
    with open(path) as f:
        smiles = [line.rstrip("\n") for line in f if line.strip()]
    scaffolds = [MurckoScaffold.MurckoScaffoldSmiles(smiles=s, includeChirality=chiral) for s in smiles]
    groups = {}
    for i, sc in enumerate(scaffolds):
        groups.setdefault(sc, []).append(i)
    ordered = sorted(groups.values(), key=lambda g: (len(g), g[0]), reverse=True)
    n = len(smiles)
    train_cutoff = 0.8 * n
    valid_cutoff = (0.8 + 0.1) * n
    train, valid, test = [], [], []
    for g in ordered:
        if len(train) + len(g) > train_cutoff:
            if len(train) + len(valid) + len(g) > valid_cutoff:
                test += g
            else:
                valid += g
        else:
            train += g
    print(json.dumps({"scaffolds": scaffolds, "train": sorted(train), "valid": sorted(valid), "test": sorted(test)}))


if __name__ == "__main__":
    main()
