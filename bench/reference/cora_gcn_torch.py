#!/usr/bin/env python3
"""Plain-PyTorch GCN on Cora: the reference our cora_gcn is measured against (bench/cora_vs_torch.py).

Written from scratch (no PyTorch Geometric) with the hyper-parameters of PyG's examples/gcn.py, which follow
Kipf & Welling, "Semi-Supervised Classification with Graph Convolutional Networks", ICLR 2017:
  - features row-normalised (PyG's NormalizeFeatures: x / max(row sum, 1))
  - A_hat = D^-1/2 (A + I) D^-1/2 as a torch sparse COO tensor (PyG's gcn_norm with self-loops of weight 1,
    degree counted at the destination)
  - 2 layers: X W1 -> A_hat . -> + b1 -> ReLU -> X W2 -> A_hat . -> + b2; hidden 16; W Glorot-uniform, b zero
  - dropout 0.5 on the input and on the hidden layer (the input dropout can be turned off: --no-input-dropout)
  - Adam, lr 0.01, weight decay 5e-4 on the first layer only (weight and bias, as PyG's example does)
  - 200 full-batch epochs, NLL of log-softmax on the training nodes
Accuracy is that of the model after the last epoch (no early stopping, no model selection on validation).

Times: one training epoch = forward + loss + backward + optimizer step; inference = one forward pass in eval
mode without autograd. Both are measured every epoch with time.perf_counter; medians are over all epochs of
all runs.

Data: the OGB node-property raw layout (no headers, gzip):
  DIR/raw/edge.csv.gz (src,dst per directed edge), DIR/raw/node-feat.csv.gz (one row of features per node),
  DIR/raw/node-label.csv.gz (one class per line), DIR/split/public/{train,valid,test}.csv.gz (node ids).

Prints one JSON object on stdout. Run with Debian's interpreter:
  /usr/bin/python3 bench/reference/cora_gcn_torch.py --data examples/data/cora --runs 3
"""
import argparse
import gzip
import json
import math
import os
import resource
import statistics
import sys
import time

# One BLAS thread: torch's own thread pool (torch.set_num_threads) is the only parallelism, so "2 threads"
# means 2 threads. Must be set before torch (and OpenBLAS) is loaded.
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def read_csv_gz(path, dtype):
    with gzip.open(path, "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)


def load_ogb_raw(root):
    edges = read_csv_gz(os.path.join(root, "raw", "edge.csv.gz"), np.int64)            # [E, 2]
    x = read_csv_gz(os.path.join(root, "raw", "node-feat.csv.gz"), np.float32)         # [N, F]
    y = read_csv_gz(os.path.join(root, "raw", "node-label.csv.gz"), np.int64)[:, 0]    # [N]
    split = {}
    for name in ("train", "valid", "test"):
        split[name] = read_csv_gz(os.path.join(root, "split", "public", name + ".csv.gz"), np.int64)[:, 0]
    n = x.shape[0]
    if y.shape[0] != n or edges.shape[1] != 2 or edges.min() < 0 or edges.max() >= n:
        sys.exit(f"cora_gcn_torch: inconsistent data in {root}: {n} feature rows, {y.shape[0]} labels, "
                 f"edges of shape {edges.shape} with ids in [{edges.min()}, {edges.max()}]")
    return edges, x, y, split


def normalize_features(x):
    """PyG NormalizeFeatures: divide each row by its sum (rows summing to 0 stay 0)."""
    s = x.sum(axis=1, keepdims=True)
    return x / np.maximum(s, 1.0)


def gcn_adjacency(edges, n):
    """D^-1/2 (A + I) D^-1/2 as a coalesced sparse COO tensor; row = destination, column = source, so that
    A_hat @ H sums messages from sources into destinations (PyG's flow source_to_target)."""
    src = np.concatenate([edges[:, 0], np.arange(n)])
    dst = np.concatenate([edges[:, 1], np.arange(n)])
    w = np.ones(src.shape[0], dtype=np.float32)
    deg = np.bincount(dst, weights=w, minlength=n).astype(np.float32)
    dinv = np.where(deg > 0, deg ** -0.5, 0.0).astype(np.float32)
    vals = dinv[src] * w * dinv[dst]
    idx = torch.from_numpy(np.stack([dst, src]))
    return torch.sparse_coo_tensor(idx, torch.from_numpy(vals), (n, n)).coalesce()


class GCNLayer(torch.nn.Module):
    """out = A_hat (X W) + b, W Glorot-uniform [in, out], b zeros (PyG's GCNConv defaults)."""

    def __init__(self, fin, fout):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.empty(fin, fout))
        self.bias = torch.nn.Parameter(torch.zeros(fout))
        a = math.sqrt(6.0 / (fin + fout))
        torch.nn.init.uniform_(self.weight, -a, a)

    def forward(self, x, adj):
        return torch.sparse.mm(adj, x @ self.weight) + self.bias


class GCN(torch.nn.Module):
    def __init__(self, fin, hidden, classes, dropout, input_dropout):
        super().__init__()
        self.conv1 = GCNLayer(fin, hidden)
        self.conv2 = GCNLayer(hidden, classes)
        self.dropout = dropout
        self.input_dropout = input_dropout

    def forward(self, x, adj):
        if self.input_dropout:
            x = F.dropout(x, p=self.dropout, training=self.training)
        x = F.relu(self.conv1(x, adj))
        x = F.dropout(x, p=self.dropout, training=self.training)
        return F.log_softmax(self.conv2(x, adj), dim=1)


def accuracy(logp, y, idx):
    return (logp[idx].argmax(dim=1) == y[idx]).float().mean().item()


def run_once(seed, args, x, adj, y, split, classes):
    torch.manual_seed(seed)
    model = GCN(x.shape[1], args.hidden, classes, args.dropout, not args.no_input_dropout)
    opt = torch.optim.Adam([
        dict(params=model.conv1.parameters(), weight_decay=args.weight_decay),
        dict(params=model.conv2.parameters(), weight_decay=0.0),
    ], lr=args.lr)
    train, valid, test = split["train"], split["valid"], split["test"]
    y_train = y[train]
    epoch_ms, infer_ms = [], []
    for _ in range(args.epochs):
        t0 = time.perf_counter()
        model.train()
        opt.zero_grad()
        logp = model(x, adj)
        loss = F.nll_loss(logp[train], y_train)
        loss.backward()
        opt.step()
        epoch_ms.append((time.perf_counter() - t0) * 1e3)

        t0 = time.perf_counter()
        model.eval()
        with torch.no_grad():
            logp = model(x, adj)
        infer_ms.append((time.perf_counter() - t0) * 1e3)
    return dict(test_acc=accuracy(logp, y, test), val_acc=accuracy(logp, y, valid),
                train_loss=loss.item(), epoch_ms=epoch_ms, infer_ms=infer_ms)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="examples/data/cora", help="directory in the OGB raw layout")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--runs", type=int, default=10, help="independent trainings, seeds seed..seed+runs-1")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads")
    p.add_argument("--no-input-dropout", action="store_true", help="no dropout on the input features")
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    args = p.parse_args()
    if args.runs < 1 or args.epochs < 1 or args.threads < 1:
        p.error("--runs, --epochs and --threads must be at least 1")
    torch.set_num_threads(args.threads)

    edges, x_np, y_np, split_np = load_ogb_raw(args.data)
    n = x_np.shape[0]
    x = torch.from_numpy(normalize_features(x_np))
    adj = gcn_adjacency(edges, n)
    y = torch.from_numpy(y_np)
    split = {k: torch.from_numpy(v) for k, v in split_np.items()}
    classes = int(y_np.max()) + 1

    results = [run_once(args.seed + r, args, x, adj, y, split, classes) for r in range(args.runs)]
    test = [r["test_acc"] for r in results]
    epoch_ms = [t for r in results for t in r["epoch_ms"]]
    infer_ms = [t for r in results for t in r["infer_ms"]]
    out = dict(
        impl="pytorch",
        test_acc_mean=statistics.fmean(test),
        test_acc_std=statistics.pstdev(test),
        test_acc_runs=test,
        val_acc_mean=statistics.fmean(r["val_acc"] for r in results),
        train_loss_final_mean=statistics.fmean(r["train_loss"] for r in results),
        epoch_ms_median=statistics.median(epoch_ms),
        epoch_ms_min=min(epoch_ms),
        infer_ms_median=statistics.median(infer_ms),
        input_dropout=not args.no_input_dropout,
        peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        threads=torch.get_num_threads(),
        openblas_num_threads=os.environ["OPENBLAS_NUM_THREADS"],
        torch_version=torch.__version__,
        runs=args.runs,
        epochs=args.epochs,
        seed=args.seed,
        nodes=n,
        edges=int(edges.shape[0]),
        features=int(x_np.shape[1]),
        classes=classes,
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()
