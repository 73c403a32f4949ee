#!/usr/bin/env python3
"""Plain-PyTorch OGB-style GIN on a molecular .npz: the reference molecule_property is measured against
(bench/gin_vs_torch.py).

Written from scratch (no PyTorch Geometric, no OGB) after the molecule baseline of OGB's examples
(ogb/examples/graphproppred/mol and the PCQM4M example: GNN(gnn_type="gin", num_layer=5, emb_dim=300,
drop_ratio=0), batch size 128, Adam lr 1e-3, L1 loss), and the same model as gnn's models/GIN:
  - AtomEncoder: one embedding table per atom feature column (OGB's 9 columns), summed; Xavier-uniform
  - per layer: BondEncoder (3 tables, summed), message ReLU(h_j + e_ji), sum at the target node
    (index_select + index_add_), h' = MLP(h + aggregated) with MLP = Linear(D, 2D), norm, ReLU, Linear(2D, D);
    then norm, ReLU (not after the last layer), dropout
  - norm: LayerNorm (as gnn's GIN, whose fixed-size batches must not let padding into batch statistics) or
    BatchNorm1d with --norm batch (OGB's choice)
  - mean pooling over each graph's nodes, Linear(D, tasks) head, L1 loss on labelled targets
Batches are PyTorch Geometric's: the next 128 graphs of a seeded shuffle, concatenated, nothing padded.

Timing: one epoch over the training split = batching + forward + loss + backward + Adam step, timed with
time.perf_counter around the whole loop (the .npz is read and split into per-graph tensors before).
real_graphs_per_s = training graphs / epoch seconds; the median step time is reported beside it.

Prints one JSON object on stdout. Run with Debian's interpreter (python3-torch, python3-numpy):
  /usr/bin/python3 bench/reference/gin_torch.py --npz pcqm.npz --threads 2
"""
import argparse
import json
import os
import statistics
import sys
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # torch's own pool is the only parallelism

import numpy as np  # noqa: E402
import torch  # noqa: E402


def load(npz_path):
    d = np.load(npz_path)
    node_ptr, edge_ptr = d["node_ptr"].astype(np.int64), d["edge_ptr"].astype(np.int64)
    x = torch.from_numpy(d["x"].astype(np.int64))
    edge_index = torch.from_numpy(d["edge_index"].astype(np.int64))
    edge_attr = torch.from_numpy(d["edge_attr"].astype(np.int64))
    y = torch.from_numpy(d["y"].astype(np.float32))
    y_mask = torch.from_numpy(d["y_mask"].astype(np.bool_))
    graphs = []
    for g in range(len(node_ptr) - 1):
        n0, n1, e0, e1 = node_ptr[g], node_ptr[g + 1], edge_ptr[g], edge_ptr[g + 1]
        graphs.append((x[n0:n1], edge_index[:, e0:e1], edge_attr[e0:e1], y[g], y_mask[g]))
    train = d["split_train"].astype(np.int64) if "split_train" in d.files else \
        np.array([i for i in range(len(graphs)) if i % 10 > 1], dtype=np.int64)
    meta = json.loads(d["metadata"].tobytes())
    return graphs, train, meta


def collate(graphs, ids):
    xs, eis, eas, ys, ms, batch = [], [], [], [], [], []
    offset = 0
    for k, i in enumerate(ids):
        x, ei, ea, y, m = graphs[i]
        xs.append(x)
        eis.append(ei + offset)
        eas.append(ea)
        ys.append(y)
        ms.append(m)
        batch.append(torch.full((x.shape[0],), k, dtype=torch.int64))
        offset += x.shape[0]
    return (torch.cat(xs), torch.cat(eis, 1), torch.cat(eas), torch.stack(ys), torch.stack(ms), torch.cat(batch),
            len(ids))


class CategoricalEncoder(torch.nn.Module):
    def __init__(self, dims, dim):
        super().__init__()
        self.tables = torch.nn.ModuleList(torch.nn.Embedding(d, dim) for d in dims)
        for t in self.tables:
            torch.nn.init.xavier_uniform_(t.weight)

    def forward(self, x):
        out = 0
        for c, t in enumerate(self.tables):
            out = out + t(x[:, c])
        return out


class GINConv(torch.nn.Module):
    def __init__(self, dim, bond_dims, norm):
        super().__init__()
        self.bond = CategoricalEncoder(bond_dims, dim)
        self.lin1, self.lin2 = torch.nn.Linear(dim, 2 * dim), torch.nn.Linear(2 * dim, dim)
        self.norm = norm(2 * dim)

    def forward(self, h, edge_index, edge_attr):
        src, dst = edge_index[0], edge_index[1]
        msg = torch.relu(h.index_select(0, src) + self.bond(edge_attr))
        agg = torch.zeros_like(h).index_add_(0, dst, msg)
        # .float(): under bf16 autocast the linear layers return bfloat16, and this torch's CPU autocast leaves
        # layer_norm's input as given (its fp32 weights then refuse it); newer torch runs layer_norm in fp32.
        return self.lin2(torch.relu(self.norm(self.lin1(h + agg).float())))


class GIN(torch.nn.Module):
    def __init__(self, layers, dim, tasks, atom_dims, bond_dims, norm, dropout):
        super().__init__()
        self.atoms = CategoricalEncoder(atom_dims, dim)
        self.convs = torch.nn.ModuleList(GINConv(dim, bond_dims, norm) for _ in range(layers))
        self.norms = torch.nn.ModuleList(norm(dim) for _ in range(layers))
        self.head = torch.nn.Linear(dim, tasks)
        self.dropout = dropout

    def forward(self, x, edge_index, edge_attr, batch, num_graphs):
        h = self.atoms(x)
        for layer, (conv, norm) in enumerate(zip(self.convs, self.norms)):
            h = norm(conv(h, edge_index, edge_attr).float())
            if layer + 1 < len(self.convs):
                h = torch.relu(h)
            h = torch.nn.functional.dropout(h, self.dropout, self.training)
        pooled = torch.zeros(num_graphs, h.shape[1]).index_add_(0, batch, h)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(1)
        return self.head(pooled / counts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npz", required=True, help="molecular dataset written by build_dataset")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--layers", type=int, default=5)
    ap.add_argument("--hidden", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--limit", type=int, default=-1, help="first N training graphs only")
    ap.add_argument("--norm", choices=["layer", "batch"], default="layer")
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--autocast", choices=["none", "bf16"], default="none",
                    help="bf16: the forward under torch.autocast('cpu', dtype=torch.bfloat16), as a PyTorch user of a "
                         "bfloat16 CPU trains")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    graphs, train, meta = load(a.npz)
    if a.limit > 0:
        train = train[:a.limit]
    tasks = graphs[0][3].shape[0]
    norm = torch.nn.LayerNorm if a.norm == "layer" else torch.nn.BatchNorm1d
    model = GIN(a.layers, a.hidden, tasks, meta["atom_feature_dims"], meta["bond_feature_dims"], norm, a.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    model.train()
    rng = np.random.default_rng(a.seed)
    epoch_seconds, step_seconds, losses = [], [], []
    for _ in range(a.epochs):
        order = rng.permutation(train)
        t_epoch = time.perf_counter()
        for b in range(0, len(order), a.batch_size):
            t_step = time.perf_counter()
            x, ei, ea, y, m, batch, n = collate(graphs, order[b:b + a.batch_size])
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast == "bf16"):
                pred = model(x, ei, ea, batch, n)
            loss = (pred.float() - y).abs()[m].mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss))
            step_seconds.append(time.perf_counter() - t_step)
        epoch_seconds.append(time.perf_counter() - t_epoch)
    if not all(np.isfinite(losses)):
        sys.exit("gin_torch: the loss is not finite")
    print(json.dumps({
        "model": "gin (plain PyTorch, OGB-style)", "torch": torch.__version__, "threads": torch.get_num_threads(),
        "autocast": a.autocast, "norm": a.norm, "layers": a.layers, "hidden": a.hidden, "batch_size": a.batch_size,
        "train_graphs": int(len(train)), "epochs": a.epochs, "epoch_seconds": epoch_seconds,
        "real_graphs_per_s": len(train) * a.epochs / sum(epoch_seconds),
        "step_ms_median": 1000 * statistics.median(step_seconds), "final_loss": losses[-1],
        "parameters": sum(p.numel() for p in model.parameters()),
    }))


if __name__ == "__main__":
    main()
