#!/usr/bin/env python3
"""Plain-PyTorch SchNet on a 3D molecular .npz (pos, z, y): the reference qm7_schnet is measured against
(bench/schnet_vs_torch.py).

Written from scratch (no PyTorch Geometric, no torch_cluster, no schnetpack) with the defaults of PyTorch
Geometric's SchNet (torch_geometric.nn.models.SchNet), which are those of the paper (Schuett et al., "SchNet:
A continuous-filter convolutional neural network for modeling quantum interactions", NeurIPS 2017):
  - atom-type embedding Embedding(100, 128), row 0 = padding (PyTorch's default N(0, 1) initialisation)
  - neighbours: every other atom of the same molecule within the cutoff (10 A), at most the 32 nearest
    (PyG's radius_graph with max_num_neighbors 32; it keeps the first 32 it finds, here the nearest), built
    for every batch inside the timed step as PyG's SchNet builds it in its forward; distances |pos_i - pos_j|
  - GaussianSmearing: 50 centres on [0, 10], exp(-0.5 / delta^2 (d - mu)^2), delta the centre spacing
  - 6 interaction blocks, each h = h + Lin(ssp(CFConv(h))) with CFConv:
      W = (Linear(50, 128) -> ssp -> Linear(128, 128))(gaussians) * 0.5 (cos(pi d / cutoff) + 1)
      out_i = Linear(128, 128)(sum_j Linear(128, 128, no bias)(h)_j * W_ji)    (index_select, index_add_)
    ssp(x) = softplus(x) - log 2 (shifted softplus)
  - atomwise Linear(128, 64) -> ssp -> Linear(64, 1), summed over each molecule's atoms (readout "add")
  - Xavier-uniform weights and zero biases as PyG's reset_parameters; 455,809 parameters
  - L1 loss between the summed output and the standardised energy (y - mean) / std, mean and std over the
    molecules used; Adam at --lr (default 1e-3, the learning rate of PyG's QM9 example, qm9_nn_conv.py)
Batches are PyTorch Geometric's: the next --batch-size molecules of a seeded shuffle of the first --limit
molecules of the .npz, atoms concatenated, nothing padded.

Timing: per training step = batching + neighbour lists + forward + loss + backward + Adam step, timed with
time.perf_counter (the .npz is read and cut into per-molecule tensors before); train_molecules_per_s =
molecules / the summed step times. Inference: eval mode under torch.no_grad over the same molecules in file
order, same batch size; infer_molecules_per_s = molecules / summed (batching + neighbour lists + forward).

Prints one JSON object on stdout. Run with Debian's interpreter (python3-torch, python3-numpy):
  /usr/bin/python3 bench/reference/schnet_torch.py --npz qm7.npz --threads 2 [--steps 5]
(the .npz from build_dataset --input examples/data/qm7_3d/qm7.xyz.gz --target-cols e_pbe0_atomization_kcal_mol).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # torch's own pool is the only parallelism

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

LOG2 = math.log(2.0)


def load(npz_path, limit, target):
    d = np.load(npz_path)
    for key in ("pos", "z"):
        if key not in d.files:
            sys.exit(f"schnet_torch: {npz_path} has no '{key}' (no 3D coordinates): build it from SDF or XYZ, "
                     "or with --conformers")
    meta = json.loads(d["metadata"].tobytes())
    names = meta.get("targets", [])
    if target is None:
        if not names:
            sys.exit(f"schnet_torch: {npz_path} has no targets")
        column = 0
    elif target in names:
        column = names.index(target)
    else:
        sys.exit(f"schnet_torch: {npz_path} has no target '{target}' (it has {names})")
    node_ptr = d["node_ptr"].astype(np.int64)
    count = len(node_ptr) - 1 if limit <= 0 else min(limit, len(node_ptr) - 1)
    pos = torch.from_numpy(d["pos"].astype(np.float32))
    z = torch.from_numpy(d["z"].astype(np.int64))
    y, y_mask = d["y"][:count, column].astype(np.float64), d["y_mask"][:count, column]
    if not y_mask.all():
        sys.exit(f"schnet_torch: {int((~y_mask.astype(bool)).sum())} of the first {count} molecules have no "
                 f"'{names[column]}'")
    mols = [(z[node_ptr[g]:node_ptr[g + 1]], pos[node_ptr[g]:node_ptr[g + 1]]) for g in range(count)]
    return mols, torch.from_numpy(y.astype(np.float32)), names[column]


def collate(mols, ids):
    zs, ps, batch = [], [], []
    for k, i in enumerate(ids):
        z, p = mols[i]
        zs.append(z)
        ps.append(p)
        batch.append(torch.full((z.shape[0],), k, dtype=torch.int64))
    return torch.cat(zs), torch.cat(ps), torch.cat(batch)


def radius_graph(pos, batch, cutoff, max_neighbours):
    """Edges j -> i for every pair of distinct atoms of one molecule closer than the cutoff, at most the
    max_neighbours nearest j per i. Returns (source, target, number of atoms that lost neighbours)."""
    n = pos.shape[0]
    d = torch.cdist(pos, pos)
    keep = (batch.view(-1, 1) == batch.view(1, -1)) & (d < cutoff)
    keep.fill_diagonal_(False)
    counts = keep.sum(dim=1)
    truncated = int((counts > max_neighbours).sum())
    if truncated:
        k = min(max_neighbours, n)
        d = d.masked_fill(~keep, float("inf"))
        nearest = d.topk(k, dim=1, largest=False).indices                  # [n, k]
        mask = torch.zeros_like(keep).scatter_(1, nearest, True)
        keep &= mask
    target, source = keep.nonzero(as_tuple=True)
    return source, target, truncated


def ssp(x):
    return F.softplus(x) - LOG2


class Interaction(torch.nn.Module):
    def __init__(self, hidden, filters, gaussians, cutoff):
        super().__init__()
        self.filter1, self.filter2 = torch.nn.Linear(gaussians, filters), torch.nn.Linear(filters, filters)
        self.in2f = torch.nn.Linear(hidden, filters, bias=False)
        self.f2out = torch.nn.Linear(filters, hidden)
        self.dense = torch.nn.Linear(hidden, hidden)
        self.cutoff = cutoff

    def forward(self, h, source, target, dist, gaussians):
        cut = 0.5 * (torch.cos(dist * math.pi / self.cutoff) + 1.0)
        w = self.filter2(ssp(self.filter1(gaussians))) * cut.view(-1, 1)
        x = self.in2f(h)
        # float32 sums: under bf16 autocast x and w come out of the linear layers in bfloat16 (the product with
        # the float32 cutoff is float32), and index_add_ wants one dtype.
        agg = torch.zeros(x.shape, dtype=torch.float32).index_add_(0, target, (x.index_select(0, source) * w).float())
        return self.dense(ssp(self.f2out(agg)))


class SchNet(torch.nn.Module):
    def __init__(self, hidden=128, filters=128, interactions=6, gaussians=50, cutoff=10.0, max_neighbours=32):
        super().__init__()
        self.cutoff, self.max_neighbours = cutoff, max_neighbours
        self.embedding = torch.nn.Embedding(100, hidden, padding_idx=0)
        offsets = torch.linspace(0.0, cutoff, gaussians)
        self.register_buffer("offsets", offsets)
        self.coeff = -0.5 / float(offsets[1] - offsets[0]) ** 2
        self.interactions = torch.nn.ModuleList(
            Interaction(hidden, filters, gaussians, cutoff) for _ in range(interactions))
        self.out1, self.out2 = torch.nn.Linear(hidden, hidden // 2), torch.nn.Linear(hidden // 2, 1)
        for m in self.modules():
            if isinstance(m, torch.nn.Linear):
                torch.nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    torch.nn.init.zeros_(m.bias)
        self.truncated = 0

    def forward(self, z, pos, batch, molecules):
        source, target, truncated = radius_graph(pos, batch, self.cutoff, self.max_neighbours)
        self.truncated += truncated
        dist = (pos.index_select(0, source) - pos.index_select(0, target)).norm(dim=-1)
        gaussians = torch.exp(self.coeff * (dist.view(-1, 1) - self.offsets.view(1, -1)) ** 2)
        h = self.embedding(z)
        for block in self.interactions:
            h = h + block(h, source, target, dist, gaussians)
        atomwise = self.out2(ssp(self.out1(h)))                             # [atoms, 1]
        return torch.zeros(molecules, 1).index_add_(0, batch, atomwise.float()), source.shape[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npz", required=True, help="3D molecular dataset (pos, z, y) written by build_dataset")
    ap.add_argument("--target", default=None, help="target column (default: the .npz's first)")
    ap.add_argument("--limit", type=int, default=1024, help="the first N molecules (default: 1024; 0: all)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0,
                    help="at most this many training steps per epoch and inference batches (0: all)")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--autocast", choices=["none", "bf16"], default="none",
                    help="bf16: the forward under torch.autocast('cpu', dtype=torch.bfloat16), as a PyTorch user of a "
                         "bfloat16 CPU trains")
    a = ap.parse_args()
    if min(a.threads, a.batch_size, a.epochs) < 1 or a.steps < 0 or a.limit < 0:
        ap.error("--threads, --batch-size and --epochs must be at least 1, --steps and --limit at least 0")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    mols, y, target = load(a.npz, a.limit, a.target)
    mean, std = float(y.mean()), float(y.std())
    y_std = ((y - mean) / std).view(-1, 1)
    model = SchNet()
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    rng = np.random.default_rng(a.seed)
    step_s, infer_s, losses, edges = [], [], [], []
    trained = inferred = 0
    for _ in range(a.epochs):
        model.train()
        order = rng.permutation(len(mols))
        starts = list(range(0, len(order), a.batch_size))
        if a.steps:
            starts = starts[:a.steps]
        for s in starts:
            t0 = time.perf_counter()
            ids = order[s:s + a.batch_size]
            z, pos, batch = collate(mols, ids)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast == "bf16"):
                pred, e = model(z, pos, batch, len(ids))
            loss = (pred - y_std[ids]).abs().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(float(loss))
            step_s.append(time.perf_counter() - t0)
            edges.append(e)
            trained += len(ids)
        model.eval()
        starts = list(range(0, len(mols), a.batch_size))
        if a.steps:
            starts = starts[:a.steps]
        with torch.no_grad():
            for s in starts:
                t0 = time.perf_counter()
                ids = list(range(s, min(s + a.batch_size, len(mols))))
                z, pos, batch = collate(mols, ids)
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast == "bf16"):
                    pred, _ = model(z, pos, batch, len(ids))
                float(pred[0, 0])
                infer_s.append(time.perf_counter() - t0)
                inferred += len(ids)
    if not all(math.isfinite(v) for v in losses):
        sys.exit("schnet_torch: the loss is not finite")
    print(json.dumps({
        "model": "schnet (plain PyTorch, PyG defaults)", "torch": torch.__version__,
        "threads": torch.get_num_threads(), "autocast": a.autocast, "hidden": 128, "filters": 128, "interactions": 6, "gaussians": 50,
        "cutoff": 10.0, "max_neighbours": 32, "target": target, "target_mean": mean, "target_std": std,
        "molecules": len(mols), "batch_size": a.batch_size, "epochs": a.epochs, "steps_limit": a.steps,
        "train_steps": len(step_s), "train_molecules": trained, "infer_batches": len(infer_s),
        "infer_molecules": inferred, "edges_per_batch_mean": statistics.fmean(edges),
        "atoms_truncated": model.truncated,
        "train_molecules_per_s": trained / sum(step_s),
        "infer_molecules_per_s": inferred / sum(infer_s),
        "step_ms_median": 1000 * statistics.median(step_s),
        "infer_step_ms_median": 1000 * statistics.median(infer_s),
        "final_loss": losses[-1], "parameters": sum(p.numel() for p in model.parameters()),
    }))


if __name__ == "__main__":
    main()
