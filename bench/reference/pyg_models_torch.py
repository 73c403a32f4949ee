#!/usr/bin/env python3
"""PyTorch Geometric 2.3.1's ready models (GCN, GraphSAGE, GIN, GAT, GATv2, PNA, EdgeCNN) trained full-batch on
a node dataset in OGB's raw layout: the reference node_property is measured against (bench/node_models_vs_pyg.py).

The model is PyG's own class (torch_geometric.nn.models) built with the arguments given as JSON; features as the
program reads them by default (row-normalised bag of words: PyG's NormalizeFeatures); Adam with the given lr and
weight decay on every parameter; cross entropy on the training nodes; one full-graph step per epoch. Times: one
epoch = forward + loss + backward + optimizer step, medians over the epochs after --warmup.

  PYTHONPATH=/path/to/pyg-2.3.1 /usr/bin/python3 bench/reference/pyg_models_torch.py --data examples/data/cora \
      --model GAT --args '{"hidden_channels": 64, "num_layers": 2, "heads": 8}' --epochs 50 --threads 2

Prints one JSON object: epoch_ms_median, infer_ms_median, test_acc (the last epoch's), the model's arguments.
"""
import argparse
import gzip
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_geometric.nn import models  # noqa: E402
from torch_geometric.utils import degree  # noqa: E402


def read_csv_gz(path, dtype):
    with gzip.open(path, "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--model", required=True, help="PyG model class: GCN, GraphSAGE, GIN, GAT, PNA, EdgeCNN")
    p.add_argument("--args", default="{}", help="constructor arguments as JSON (in/out channels are the data's)")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    root = a.data
    edges = torch.from_numpy(read_csv_gz(os.path.join(root, "raw", "edge.csv.gz"), np.int64)).t().contiguous()
    x = read_csv_gz(os.path.join(root, "raw", "node-feat.csv.gz"), np.float32)
    x = torch.from_numpy(x / np.maximum(x.sum(axis=1, keepdims=True), 1.0))
    y = torch.from_numpy(read_csv_gz(os.path.join(root, "raw", "node-label.csv.gz"), np.int64)[:, 0])
    split = {n: torch.from_numpy(read_csv_gz(os.path.join(root, "split", "public", n + ".csv.gz"), np.int64)[:, 0])
             for n in ("train", "valid", "test")}
    kwargs = json.loads(a.args)
    kwargs.setdefault("in_channels", x.size(1))
    kwargs.setdefault("out_channels", int(y.max()) + 1)
    if a.model == "PNA":
        d = degree(edges[1], x.size(0), dtype=torch.long)
        kwargs.setdefault("deg", torch.bincount(d))
        kwargs.setdefault("aggregators", ["mean", "min", "max", "std"])
        kwargs.setdefault("scalers", ["identity", "amplification", "attenuation"])
    model = getattr(models, a.model)(**kwargs)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    epoch_ms, infer_ms = [], []
    for epoch in range(a.warmup + a.epochs):
        t = time.perf_counter()
        model.train()
        opt.zero_grad()
        out = model(x, edges)
        loss = F.cross_entropy(out[split["train"]], y[split["train"]])
        loss.backward()
        opt.step()
        dt = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        model.eval()
        with torch.no_grad():
            pred = model(x, edges).argmax(1)
        it = (time.perf_counter() - t) * 1e3
        if epoch >= a.warmup:
            epoch_ms.append(dt)
            infer_ms.append(it)
    acc = float((pred[split["test"]] == y[split["test"]]).float().mean())
    kwargs.pop("deg", None)
    print(json.dumps(dict(model=a.model, args=kwargs, epochs=a.epochs, threads=a.threads, torch=torch.__version__,
                          epoch_ms_median=statistics.median(epoch_ms), infer_ms_median=statistics.median(infer_ms),
                          test_acc=acc)))


if __name__ == "__main__":
    sys.exit(main())
