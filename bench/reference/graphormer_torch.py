#!/usr/bin/env python3
"""Plain-PyTorch Graphormer-slim on a molecular .npz with Graphormer encodings: the reference pcqm4m_graphormer
is measured against (bench/graphormer_vs_torch.py).

Written from scratch (no fairseq, no Graphormer package, no PyTorch Geometric) after Graphormer's model
(graphormer/modules: GraphNodeFeature, GraphAttnBias, the encoder layer, multi-head attention) and its
PCQM4Mv2 script (examples/property_prediction/pcqv2.sh), in the configuration of gnn's `--model slim`:
  - 12 layers, hidden 80, 8 heads (head size 10), FFN 80, pre-LayerNorm (x + Attn(LN(x)), x + FFN(LN(x))),
    a final LayerNorm on the graph token, Linear(80, 1) head
  - centrality encoding: the 9 atom features through one embedding table with per-feature offsets (OGB
    AtomEncoder style: offsets from the .npz's atom_feature_dims, row 0 = padding), summed, plus a degree
    embedding (Graphormer's 512 rows, degree + 1, 0 = padding)
  - a graph token (learned vector) in front of the atoms; its attention bias to and from every atom is a
    learned per-head virtual distance
  - spatial encoding: per-head bias from an embedding of the shortest-path distance (512 rows, distance + 1,
    0 = padding; 510 = unreachable as stored)
  - multi-hop edge encoding, multi_hop_max_dist 5: each hop's 3 bond features (stored with Graphormer's offsets)
    through a [1537, heads] embedding (row 0 = padding) and averaged over the 3 features, as Graphormer's
    .mean(-2) (F.embedding_bag gives the same values but its backward is slower in torch 1.13); hop k mixed by
    its own heads x heads matrix (one [B*N*N, hops*heads] x [hops*heads, heads] product for all hops), summed
    over the hops and divided by the path length clamped to [1, 5] (Graphormer's spatial_pos_ rule)
  - attention: softmax(Q K^T / sqrt(10) + bias) V, the bias [B, heads, T, T] (T = atoms + 1) built once per
    batch with the padding mask folded in (-inf on padded keys, as Graphormer's padded attn_bias plus its
    key_padding_mask); fused Q/K/V projection
  - FFN: Linear(80, 80), exact GELU, Linear(80, 80)
  - dropouts of Graphormer's PCQM scripts: attention 0.1 (on the attention probabilities), activation 0.1
    (after the GELU), dropout 0.0 (so not applied)
  - initialisation as Graphormer's (init_graphormer_params): Linear weights N(0, 0.02), biases 0, embeddings
    N(0, 0.02) with their padding row 0; LayerNorm 1 / 0
  - L1 loss, Adam (betas 0.9/0.999, eps 1e-8, no weight decay) at lr 2e-4 and gradient-norm clipping at 5.0 as
    pcqv2.sh (its warm-up and polynomial decay only change the lr value, so the lr is held constant here)
Batches are Graphormer's collator's: the next --batch-size molecules of a seeded shuffle of the training split,
molecules with more atoms than --max-node dropped from the batch and counted (`skipped_train`,
`skipped_infer`), the rest padded to the batch's largest molecule (or to --max-node with --fixed-size), the
hop dimension to the batch's longest path (at most 5).

Timing: per training step = collation + forward + loss + backward + clipping + Adam step, timed with
time.perf_counter; the .npz is read and cut into per-molecule tensors before. train_graphs_per_s = molecules
trained (skipped ones not counted) / the summed step times; train_model_graphs_per_s leaves collation out.
Inference: eval mode under torch.no_grad over the validation split (the training split when there is none),
same batching; infer_graphs_per_s = molecules / summed (collation + forward) times.

Prints one JSON object on stdout. Run with Debian's interpreter (python3-torch, python3-numpy):
  /usr/bin/python3 bench/reference/graphormer_torch.py --npz pcqm_enc.npz --threads 2 [--steps 5]
(the .npz from build_dataset --graphormer-max-dist 5 or more).
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

# Graphormer's vocabulary sizes (graphormer/tasks/graph_prediction.py defaults).
NUM_DEGREE = 512
NUM_SPATIAL = 512
NUM_EDGES = 512 * 3  # + 1 padding row


def load(npz_path, max_node, hops):
    """Per-molecule tensors, shifted as Graphormer's dataset + collator shift them (0 = padding); molecules
    with more than max_node atoms are kept as None (the collator drops them)."""
    d = np.load(npz_path)
    for key in ("spatial_pos", "pair_ptr", "in_degree", "edge_input"):
        if key not in d.files:
            sys.exit(f"graphormer_torch: {npz_path} has no '{key}': build it with build_dataset "
                     "--graphormer-max-dist 5")
    meta = json.loads(d["metadata"].tobytes())
    stored = d["edge_input"].shape[1]
    if stored < hops:
        sys.exit(f"graphormer_torch: {npz_path} stores {stored} hops, multi_hop_max_dist is {hops}")
    dims = meta["atom_feature_dims"]
    offsets = torch.tensor(np.concatenate([[0], np.cumsum(dims)[:-1]]) + 1, dtype=torch.int64)
    node_ptr, pair_ptr = d["node_ptr"].astype(np.int64), d["pair_ptr"].astype(np.int64)
    x_all, deg_all = d["x"], d["in_degree"]
    sp_all, ei_all = d["spatial_pos"], d["edge_input"]
    y_all, m_all = d["y"], d["y_mask"]
    graphs = []
    for g in range(len(node_ptr) - 1):
        n0, n1, p0, p1 = node_ptr[g], node_ptr[g + 1], pair_ptr[g], pair_ptr[g + 1]
        n = int(n1 - n0)
        if n > max_node:
            graphs.append(None)
            continue
        sp = torch.from_numpy(sp_all[p0:p1].astype(np.int64)).view(n, n)
        g_hops = min(hops, int(sp.max())) if n > 0 else 0
        graphs.append(dict(
            n=n,
            x=torch.from_numpy(x_all[n0:n1].astype(np.int64)) + offsets,
            deg=torch.from_numpy(deg_all[n0:n1].astype(np.int64)) + 1,
            sp=sp + 1,
            ei=torch.from_numpy(ei_all[p0:p1, :g_hops].astype(np.int64)).view(n, n, g_hops, 3) + 1,
            hops=g_hops,
            y=float(y_all[g, 0]) if y_all.shape[1] and m_all[g, 0] else float("nan"),
        ))
    count = len(graphs)
    train = d["split_train"].astype(np.int64) if "split_train" in d.files else \
        np.array([i for i in range(count) if i % 10 > 1], dtype=np.int64)
    infer = d["split_valid"].astype(np.int64) if "split_valid" in d.files else train
    return graphs, train, infer, meta, int(sum(dims)) + 1


def collate(graphs, ids, fixed_size):
    """Graphormer's collator: drop oversized molecules, pad the rest to a common size. Returns the batch and
    the number dropped."""
    items = [graphs[i] for i in ids if graphs[i] is not None]
    skipped = len(ids) - len(items)
    if not items:
        return None, skipped
    b = len(items)
    n = fixed_size if fixed_size else max(it["n"] for it in items)
    hops = max(it["hops"] for it in items)
    x = torch.zeros(b, n, 9, dtype=torch.int64)
    deg = torch.zeros(b, n, dtype=torch.int64)
    sp = torch.zeros(b, n, n, dtype=torch.int64)
    ei = torch.zeros(b, n, n, hops, 3, dtype=torch.int64)
    y = torch.empty(b, 1)
    for k, it in enumerate(items):
        m = it["n"]
        x[k, :m] = it["x"]
        deg[k, :m] = it["deg"]
        sp[k, :m, :m] = it["sp"]
        ei[k, :m, :m, :it["hops"]] = it["ei"]
        y[k, 0] = it["y"]
    return dict(x=x, deg=deg, sp=sp, ei=ei, y=y, graphs=b), skipped


class Layer(torch.nn.Module):
    def __init__(self, dim, ffn, heads, attention_dropout, activation_dropout, dropout):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.ln_attn, self.ln_ffn = torch.nn.LayerNorm(dim), torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.out = torch.nn.Linear(dim, dim)
        self.fc1, self.fc2 = torch.nn.Linear(dim, ffn), torch.nn.Linear(ffn, dim)
        self.attention_dropout, self.activation_dropout, self.dropout = attention_dropout, activation_dropout, dropout

    def drop(self, t, p):
        return F.dropout(t, p, self.training) if p > 0 else t

    def forward(self, h, bias):
        b, t, dim = h.shape
        qkv = self.qkv(self.ln_attn(h)).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0] * self.head_dim ** -0.5, qkv[1], qkv[2]           # [B, H, T, d]
        scores = torch.matmul(q, k.transpose(-1, -2)) + bias                # [B, H, T, T]
        probs = self.drop(torch.softmax(scores, dim=-1), self.attention_dropout)
        attn = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, dim)
        h = h + self.drop(self.out(attn), self.dropout)
        f = self.drop(F.gelu(self.fc1(self.ln_ffn(h))), self.activation_dropout)
        return h + self.drop(self.fc2(f), self.dropout)


class Graphormer(torch.nn.Module):
    def __init__(self, atom_rows, layers=12, dim=80, ffn=80, heads=8, hops=5,
                 attention_dropout=0.1, activation_dropout=0.1, dropout=0.0):
        super().__init__()
        self.heads, self.hops, self.dropout = heads, hops, dropout
        self.atom = torch.nn.Embedding(atom_rows, dim, padding_idx=0)
        self.degree = torch.nn.Embedding(NUM_DEGREE, dim, padding_idx=0)
        self.graph_token = torch.nn.Parameter(torch.empty(1, 1, dim))
        self.virtual_distance = torch.nn.Parameter(torch.empty(heads))
        self.spatial = torch.nn.Embedding(NUM_SPATIAL, heads, padding_idx=0)
        self.edge = torch.nn.Embedding(NUM_EDGES + 1, heads, padding_idx=0)
        self.hop_weights = torch.nn.Parameter(torch.empty(hops, heads, heads))
        self.layers = torch.nn.ModuleList(
            Layer(dim, ffn, heads, attention_dropout, activation_dropout, dropout) for _ in range(layers))
        self.final_ln = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, 1)
        for m in self.modules():
            if isinstance(m, torch.nn.Linear):
                torch.nn.init.normal_(m.weight, 0.0, 0.02)
                torch.nn.init.zeros_(m.bias)
            elif isinstance(m, torch.nn.Embedding):
                torch.nn.init.normal_(m.weight, 0.0, 0.02)
                with torch.no_grad():
                    m.weight[m.padding_idx].zero_()
        for p in (self.graph_token, self.virtual_distance, self.hop_weights):
            torch.nn.init.normal_(p, 0.0, 0.02)

    def attention_bias(self, sp, ei, pad):
        b, n = sp.shape[:2]
        h = self.heads
        inner = self.spatial(sp)                                            # [B, N, N, H]
        hops = ei.shape[3]
        if hops > 0:
            # mean of the 3 bond-feature embeddings of every hop (the padding row is 0), as Graphormer
            e = self.edge(ei).mean(dim=-2)                                  # [B, N, N, hops, H]
            # sum_k e_k W_k as one product: [B*N*N, hops*H] x [hops*H, H]
            e = e.view(b * n * n, hops * h) @ self.hop_weights[:hops].reshape(hops * h, h)
            length = torch.where(sp > 1, sp - 1, torch.ones_like(sp)).clamp(max=self.hops)
            inner = inner + e.view(b, n, n, h) / length.unsqueeze(-1)
        inner = inner.permute(0, 3, 1, 2)                                   # [B, H, N, N]
        t = self.virtual_distance.view(1, h, 1, 1)
        body = torch.cat([t.expand(b, h, n, 1), inner], dim=3)              # rows of the atoms
        bias = torch.cat([t.expand(b, h, 1, n + 1), body], dim=2)           # the graph token's row first
        key_pad = torch.cat([torch.zeros(b, 1, dtype=torch.bool), pad], dim=1)
        return bias.masked_fill(key_pad.view(b, 1, 1, n + 1), float("-inf"))

    def forward(self, batch):
        x, deg, sp, ei = batch["x"], batch["deg"], batch["sp"], batch["ei"]
        b = x.shape[0]
        pad = x[:, :, 0].eq(0)                                              # [B, N]
        nodes = self.atom(x).sum(dim=2) + self.degree(deg)                  # [B, N, D]
        h = torch.cat([self.graph_token.expand(b, 1, -1), nodes], dim=1)    # [B, T, D]
        if self.dropout > 0:
            h = F.dropout(h, self.dropout, self.training)
        bias = self.attention_bias(sp, ei, pad)
        for layer in self.layers:
            h = layer(h, bias)
        return self.head(self.final_ln(h[:, 0]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--npz", required=True, help="molecular dataset with Graphormer encodings (build_dataset)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-node", type=int, default=30, help="larger molecules are dropped (default: 30)")
    ap.add_argument("--fixed-size", action="store_true", help="pad every batch to --max-node atoms")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--steps", type=int, default=0,
                    help="at most this many training steps per epoch and inference batches (0: all)")
    ap.add_argument("--multi-hop-max-dist", type=int, default=5)
    ap.add_argument("--lr", type=float, default=2e-4)
    ap.add_argument("--clip-norm", type=float, default=5.0, help="0: no clipping")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--autocast", choices=["none", "bf16"], default="none",
                    help="bf16: the forward under torch.autocast('cpu', dtype=torch.bfloat16), as a PyTorch user of a "
                         "bfloat16 CPU trains")
    a = ap.parse_args()
    if min(a.threads, a.batch_size, a.max_node, a.epochs, a.multi_hop_max_dist) < 1 or a.steps < 0:
        ap.error("--threads, --batch-size, --max-node, --epochs and --multi-hop-max-dist must be at least 1, "
                 "--steps at least 0")
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)

    graphs, train, infer, meta, atom_rows = load(a.npz, a.max_node, a.multi_hop_max_dist)
    model = Graphormer(atom_rows, hops=a.multi_hop_max_dist)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    fixed = a.max_node if a.fixed_size else 0
    rng = np.random.default_rng(a.seed)
    step_s, collate_s, losses = [], [], []
    trained = skipped_train = 0
    infer_s, infer_collate_s = [], []
    inferred = skipped_infer = 0
    for _ in range(a.epochs):
        model.train()
        order = rng.permutation(train)
        starts = list(range(0, len(order), a.batch_size))
        if a.steps:
            starts = starts[:a.steps]
        for s in starts:
            t0 = time.perf_counter()
            batch, skipped = collate(graphs, order[s:s + a.batch_size], fixed)
            t1 = time.perf_counter()
            skipped_train += skipped
            if batch is None:
                continue
            y = batch["y"]
            labelled = torch.isfinite(y)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast == "bf16"):
                pred = model(batch)
            loss = (pred.float() - y).abs()[labelled].mean()
            opt.zero_grad()
            loss.backward()
            if a.clip_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip_norm)
            opt.step()
            losses.append(float(loss))
            t2 = time.perf_counter()
            step_s.append(t2 - t0)
            collate_s.append(t1 - t0)
            trained += batch["graphs"]
        model.eval()
        starts = list(range(0, len(infer), a.batch_size))
        if a.steps:
            starts = starts[:a.steps]
        with torch.no_grad():
            for s in starts:
                t0 = time.perf_counter()
                batch, skipped = collate(graphs, infer[s:s + a.batch_size], fixed)
                t1 = time.perf_counter()
                skipped_infer += skipped
                if batch is None:
                    continue
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast == "bf16"):
                    pred = model(batch)
                float(pred[0, 0])
                infer_s.append(time.perf_counter() - t0)
                infer_collate_s.append(t1 - t0)
                inferred += batch["graphs"]
    if not step_s or not infer_s:
        sys.exit("graphormer_torch: no batch to train or infer on (every molecule above --max-node?)")
    if not all(math.isfinite(v) for v in losses):
        sys.exit("graphormer_torch: the loss is not finite")
    print(json.dumps({
        "model": "graphormer-slim (plain PyTorch)", "torch": torch.__version__, "threads": torch.get_num_threads(),
        "autocast": a.autocast,
        "layers": 12, "hidden": 80, "heads": 8, "ffn": 80, "multi_hop_max_dist": a.multi_hop_max_dist,
        "batch_size": a.batch_size, "max_node": a.max_node, "fixed_size": a.fixed_size, "epochs": a.epochs,
        "steps_limit": a.steps, "train_steps": len(step_s), "train_graphs": trained, "skipped_train": skipped_train,
        "infer_batches": len(infer_s), "infer_graphs": inferred, "skipped_infer": skipped_infer,
        "skipped": skipped_train + skipped_infer,
        "train_graphs_per_s": trained / sum(step_s),
        "train_model_graphs_per_s": trained / (sum(step_s) - sum(collate_s)),
        "infer_graphs_per_s": inferred / sum(infer_s),
        "step_ms_median": 1000 * statistics.median(step_s),
        "collate_ms_median": 1000 * statistics.median(collate_s),
        "infer_step_ms_median": 1000 * statistics.median(infer_s),
        "final_loss": losses[-1], "parameters": sum(p.numel() for p in model.parameters()),
    }))


if __name__ == "__main__":
    main()
