#!/usr/bin/python3
"""Export a PyTorch Geometric model for gnn's `predict --pyg-model`: a JSON spec of its class and constructor
arguments, and its weights as torch.save(model.state_dict()).

    from torch_geometric.nn import GAT
    from export_pyg_model import export_pyg_model   # this file, on sys.path

    args = dict(in_channels=1433, hidden_channels=64, num_layers=2, out_channels=7, heads=8)
    model = GAT(**args)
    ... train ...
    export_pyg_model(model, args, "gat.json", "gat.pt")

then, without Python:

    predict --pyg-model gat.json --state-dict gat.pt --data DATASET_DIR --out out.npy

`args` are the keyword arguments the model was built with, PyG's names and values (the classes of
torch_geometric.nn.models: GCN, GraphSAGE, GIN, GAT (v2=True for GATv2), PNA, EdgeCNN). Activations and norms
are given by name (act="elu", norm="batch_norm"); PNA's `deg` may be a tensor (written as a list). Any
argument the C++ side does not know is refused there, by name. The weights may be float32 or float64.

Command line (a model class and its arguments as JSON, random weights: for trying the C++ side):
    python3 scripts/export_pyg_model.py GAT '{"in_channels": 1433, "hidden_channels": 64, "num_layers": 2,
        "out_channels": 7, "heads": 8}' gat.json gat.pt
"""
import json
import sys

import torch


def _jsonable(v):
    if isinstance(v, torch.Tensor):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_jsonable(e) for e in v]
    if isinstance(v, dict):
        return {k: _jsonable(e) for k, e in v.items()}
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    raise TypeError(f"argument value {v!r} ({type(v).__name__}) cannot be written as JSON: give activations and "
                    f"norms by name")


def export_pyg_model(model, args, spec_path, state_path):
    """Writes {"class": <model class>, "args": args} to spec_path and the model's state_dict to state_path."""
    spec = {"class": type(model).__name__, "args": _jsonable(dict(args))}
    with open(spec_path, "w") as f:
        json.dump(spec, f, indent=1)
        f.write("\n")
    torch.save(model.state_dict(), state_path)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    from torch_geometric.nn import models
    cls, kwargs = getattr(models, sys.argv[1]), json.loads(sys.argv[2])
    if "deg" in kwargs:
        kwargs["deg"] = torch.tensor(kwargs["deg"])
    export_pyg_model(cls(**kwargs), json.loads(sys.argv[2]), sys.argv[3], sys.argv[4])
