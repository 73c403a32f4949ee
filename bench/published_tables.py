#!/usr/bin/env python3
"""Published molecule tables reproduced: GIN on BBBP and HIV (Hu et al. 2020), OGB's ogbg-molhiv baselines, and
MoleculeNet's regression sets (ESOL, FreeSolv, Lipophilicity: Wu et al. 2018's graph convolution, Chemprop's D-MPNN).

  /usr/bin/python3 bench/published_tables.py [--out DIR] [--rows ROW,...] [--seeds 0-9] [--threads 1]
  /usr/bin/python3 bench/published_tables.py --report [--curves FILE.svg]    # summarise, run nothing

Each (row, seed) is one `molecule_property` run. Classification rows: the papers' hyper-parameters and no tuning
(5 layers, 300 hidden, mean pooling, dropout 0.5, batch 32, Adam 1e-3, 100 epochs, scaffold split). Regression rows:
the program's defaults (GIN and GCN 5 x 300 with BatchNorm, batches of 128, Adam 1e-3, MSE; D-MPNN with Chemprop's:
sum / 100 readout, batches of 50, Noam), 50 epochs, random 80/10/10 split, --metric rmse,mae,r2. Every run has --test-every-epoch (the
test metric of every epoch goes to the log) and --json. It writes <out>/<row>-seed<k>.json (stdout; written as .part
and renamed when the run succeeds), <row>-seed<k>.log.jsonl (--log) and <row>-seed<k>.err (stderr), and skips a
(row, seed) whose .json exists, so the runs can be spread over sessions and machines. The default --out is
bench/results/published-tables/ in the repository: finished runs' .json and .log.jsonl are committed there (a few
tens of KB each), so the table is the sum of every session's seeds; checkpoints, .part and .err stay untracked.
A run checkpoints after every epoch into <row>-seed<k>.ckpt/ (--checkpoint-dir, --resume): one stopped part way
(killed, the machine shut down) continues from its last epoch when the same command is given again, with the same
bits as a run never stopped; the folder is removed when the run ends. --epochs N other than 100
is a smoke run: its files are <row>-epochs<N>-seed<k>.*, and the report marks it.

Rows (docs/published-tables.md gives the sources and where our runs differ):
  hu2020-bbbp-gin-layernorm  GIN with LayerNorm (--norm layer, the default until --norm auto) on BBBP
  hu2020-bbbp-gin            GIN with BatchNorm (--norm batch), as pretrain-gnns' model.py, on BBBP
  hu2020-hiv-gin             the same on HIV
  ogb-molhiv-gin             OGB's GIN on HIV (BatchNorm): the runs of hu2020-hiv-gin, the same command
  ogb-molhiv-gin-virtual     OGB's GIN with a virtual node
  ogb-molhiv-gine            OGB's GIN as PyG's GINEConv (--model gine), the baselines' protocol
  ogb-molhiv-pna             PNA (--model pna) under the baselines' protocol, against PNA's leaderboard figure
  ogb-molhiv-pna-authors     PNA under its authors' HIV settings (4 x 70, residual, plateau schedule, 200 epochs)
  ogb-molhiv-gcn             OGB's GCN (BatchNorm)
  ogb-molhiv-gcn-virtual     OGB's GCN with a virtual node
  wu2018-{esol,freesolv,lipo}-{gin,gcn}  GIN, GCN against MoleculeNet's graph convolution (test RMSE)
  chemprop-{esol,freesolv,lipo}-dmpnn   D-MPNN against Chemprop's published figures (test RMSE)

--report prints a markdown table: per row the seeds done, the mean +- sample std (n - 1, as the papers) of the test
metric (ROC-AUC in %, or RMSE) at the best validation epoch and at the last epoch, the published figure, whether our mean is within 1.5
published std of it, and the hours per seed here. --curves FILE.svg also draws every finished run's validation and
test ROC-AUC per epoch (one panel per data set and model, one colour per seed, the best validation epoch marked).
Exit 2 for bad flags, 1 when a run fails.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

from benchutil import example_program, fail

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(REPO, "bench", "results", "published-tables")
DATA = "/work/shared/data/moleculenet"
BBBP = (os.path.join(DATA, "BBBP.csv.gz"), "p_np")
HIV = (os.path.join(DATA, "HIV.csv.gz"), "HIV_active")
ESOL = (os.path.join(DATA, "delaney-processed.csv.gz"), "measured log solubility in mols per litre")
FREESOLV = (os.path.join(DATA, "SAMPL.csv.gz"), "expt")
LIPO = (os.path.join(DATA, "Lipophilicity.csv.gz"), "exp")

# Published figures: (mean, std) test ROC-AUC in %, and what the paper's protocol reports.
HU2020 = "Hu et al., ICLR 2020, Table 1, GIN 'No pre-train' (arXiv:1905.12265)"
OGB = "OGB leaderboard, ogbg-molhiv (ogb.stanford.edu/docs/leader_graphprop/#ogbg-molhiv), OGB team baseline"
OGB_PNA = ("OGB leaderboard, ogbg-molhiv, PNA (Corso et al., NeurIPS 2020; their tuned setup, not the baselines' "
           "protocol run here)")
OGB_PNA_AUTHORS = "OGB leaderboard, ogbg-molhiv, PNA (Corso et al., NeurIPS 2020), in the setup its authors give for HIV"
ROWS = {
    "hu2020-bbbp-gin-layernorm": dict(data=BBBP, model="gin", extra=["--norm", "layer"], published=(65.8, 4.5),
                                      source=HU2020,
                                      protocol="none chosen (finetune.py logs every epoch)"),
    "hu2020-bbbp-gin": dict(data=BBBP, model="gin", extra=["--norm", "batch"], published=(65.8, 4.5), source=HU2020,
                            protocol="none chosen (finetune.py logs every epoch)"),
    "hu2020-hiv-gin": dict(data=HIV, model="gin", extra=["--norm", "batch"], published=(75.3, 1.9), source=HU2020,
                           protocol="none chosen (finetune.py logs every epoch)"),
    # The same command as hu2020-hiv-gin (same split, model and flags): its runs serve both rows, each row
    # reporting its paper's protocol.
    "ogb-molhiv-gin": dict(data=HIV, model="gin", extra=["--norm", "batch"], published=(75.58, 1.40), source=OGB,
                           protocol="best validation", runs_of="hu2020-hiv-gin"),
    "ogb-molhiv-gin-virtual": dict(data=HIV, model="gin", extra=["--norm", "batch", "--virtual-node"],
                                   published=(77.07, 1.49), source=OGB, protocol="best validation"),
    # OGB's GIN layer adds each bond's embedding to the neighbour's features before the sum (its conv.py's
    # GINConv): PyG's GINEConv with OGB's MLP, which --model gine builds through PyG's layer.
    "ogb-molhiv-gine": dict(data=HIV, model="gine", extra=["--norm", "batch"], published=(75.58, 1.40), source=OGB,
                            protocol="best validation"),
    "ogb-molhiv-pna": dict(data=HIV, model="pna", extra=["--norm", "batch"], published=(79.05, 1.32),
                           source=OGB_PNA, protocol="best validation"),
    # PNA's own settings for HIV (lukecavabarrett/pna, realworld_benchmark/configs/
    # molecules_graph_classification_PNA_HIV.json): 4 layers of 70, residual, BatchNorm, dropout 0.3, mean readout,
    # batches of 128, Adam 0.01 with weight decay 3e-6 halved after 20 epochs without a better validation ROC-AUC
    # (down to 1e-4), 200 epochs; its layer as PyG's PNAConv (a pre-layer, OGB's bond features), not the authors'
    # PNASimpleLayer, and a linear head for their 3-layer readout MLP.
    "ogb-molhiv-pna-authors": dict(data=HIV, model="pna", published=(79.05, 1.32), source=OGB_PNA_AUTHORS,
                                   protocol="best validation", epochs=200,
                                   extra=["--norm", "batch", "--residual", "--schedule", "plateau", "--gamma", "0.5",
                                          "--patience", "20", "--min-lr", "1e-4", "--weight-decay", "3e-6"],
                                   args=["--layers", "4", "--hidden", "70", "--pool", "mean", "--dropout", "0.3",
                                         "--batch-size", "128", "--lr", "0.01"]),
    "ogb-molhiv-gcn": dict(data=HIV, model="gcn", extra=["--norm", "batch"], published=(76.06, 0.97), source=OGB,
                           protocol="best validation"),
    "ogb-molhiv-gcn-virtual": dict(data=HIV, model="gcn", extra=["--norm", "batch", "--virtual-node"],
                                   published=(75.99, 1.19), source=OGB, protocol="best validation"),
}
WU2018 = ("Wu et al., MoleculeNet, Chem. Sci. 2018, random split, graph convolution (GC) test RMSE; no std quoted "
          "here")
CHEMPROP = "Chemprop's published table (README since v1.1; Yang et al., JCIM 2019), D-MPNN test RMSE, random split"
REGRESSION = dict(metric="rmse", split="random", epochs=50, protocol="best validation")
for _set, _data, _gc, _chemprop in (("esol", ESOL, 0.97, (0.555, 0.047)), ("freesolv", FREESOLV, 1.40, (1.075, 0.054)),
                                    ("lipo", LIPO, 0.655, (0.555, 0.023))):
    for _m in ("gin", "gcn"):
        ROWS[f"wu2018-{_set}-{_m}"] = dict(data=_data, model=_m, extra=[], published=(_gc, None), source=WU2018,
                                           **REGRESSION)
    ROWS[f"chemprop-{_set}-dmpnn"] = dict(data=_data, model="dmpnn", extra=[], published=_chemprop or (None, None),
                                          source=CHEMPROP, **REGRESSION)
PAPER_EPOCHS = 100


def row_epochs(row):
    """A row's protocol epochs: the classification papers' 100, the regression rows' 50."""
    return ROWS[row].get("epochs", PAPER_EPOCHS)


def metric_of(row):
    """The JSON name of a row's test metric: rocauc (reported in %) or rmse."""
    return ROWS[row].get("metric", "rocauc")


def shown(row, value):
    """A metric value as the table shows it: ROC-AUC in %, RMSE as it is."""
    return 100 * value if metric_of(row) == "rocauc" else value


for _name, _r in ROWS.items():
    if "runs_of" in _r:
        _t = ROWS[_r["runs_of"]]
        assert (_r["data"], _r["model"], _r["extra"]) == (_t["data"], _t["model"], _t["extra"]), _name


def runs_of(row):
    """The row whose runs (files) a row reads: itself, or the row with the same command."""
    return ROWS[row].get("runs_of", row)


def parse_seeds(text):
    """'0-9' or '0,3,5' or '0-2,7' -> sorted unique seeds."""
    seeds = set()
    try:
        for part in text.split(","):
            if "-" in part:
                lo, hi = part.split("-", 1)
                seeds.update(range(int(lo), int(hi) + 1))
            elif part.strip():
                seeds.add(int(part))
    except ValueError:
        fail(f"--seeds {text}: expected seeds like 0-9 or 0,3,5")
    if not seeds or min(seeds) < 0:
        fail(f"--seeds {text}: expected non-negative seeds")
    return sorted(seeds)


def stem(row, seed, epochs):
    return f"{row}-seed{seed}" if epochs == row_epochs(row) else f"{row}-epochs{epochs}-seed{seed}"


def command(prog, row, seed, epochs, threads):
    """The run's command line, relative paths inside the output folder. hu2020-bbbp-gin-layernorm's first seeds ran
    without --norm layer, when LayerNorm was the default (the same model)."""
    r = ROWS[row]
    data, target = r["data"]
    s = stem(row, seed, epochs)
    common = ["--epochs", str(epochs), "--seed", str(seed), "--threads", str(threads), "--test-every-epoch", "--log",
              s + ".log.jsonl", "--json", "--checkpoint-dir", s + ".ckpt", "--resume"]
    if metric_of(row) == "rmse":  # the program's defaults
        return ([prog, "--data", data, "--target-cols", target, "--split", r["split"], "--model", r["model"]] +
                r["extra"] + ["--metric", "rmse,mae,r2"] + common)
    papers = ["--layers", "5", "--hidden", "300", "--pool", "mean", "--dropout", "0.5", "--batch-size", "32", "--lr",
              "0.001"]
    return ([prog, "--data", data, "--target-cols", target, "--split", "scaffold", "--model", r["model"]] + r["extra"] +
            r.get("args", papers) + common)


def run_one(prog, out, row, seed, epochs, threads):
    row = runs_of(row)
    s = stem(row, seed, epochs)
    final = os.path.join(out, s + ".json")
    if os.path.exists(final):
        print(f"skip {s}: {final} exists", file=sys.stderr)
        return
    cmd = command(prog, row, seed, epochs, threads)
    ckpt = os.path.join(out, s + ".ckpt")
    resuming = os.path.isdir(ckpt) and any(n.endswith(".ckpt") for n in os.listdir(ckpt))
    print(f"{'resume' if resuming else 'run'} {s}: {' '.join(cmd)}", file=sys.stderr)
    part = final + ".part"
    # stderr appended: a resumed run's messages follow the stopped part's.
    with open(part, "w") as stdout, open(os.path.join(out, s + ".err"), "a" if resuming else "w") as stderr:
        code = subprocess.run(cmd, stdout=stdout, stderr=stderr, cwd=out).returncode
    if code != 0:
        print(f"{os.path.basename(sys.argv[0])}: {s} exited with status {code} (see {s}.err)", file=sys.stderr)
        sys.exit(1)
    os.replace(part, final)
    shutil.rmtree(ckpt, ignore_errors=True)


def epoch_lines(log_path):
    """The epoch lines of a run's --log (JSON objects with an integer "epoch"), unreadable lines skipped; None
    when the log cannot be read."""
    lines = []
    try:
        with open(log_path) as f:
            for line in f:
                try:
                    j = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(j, dict) and isinstance(j.get("epoch"), int):
                    lines.append(j)
    except OSError:
        return None
    return lines


def log_hours(lines):
    """Training hours the log's epoch lines record (each epoch's seconds, an epoch repeated after a resume counted
    once), or None: the final JSON's seconds cover only a resumed run's last part."""
    seconds = {j["epoch"]: j["seconds"] for j in lines or [] if isinstance(j.get("seconds"), (int, float))}
    return sum(seconds.values()) / 3600 if seconds else None


def last_epoch_test(lines, epochs, metric):
    """The test metric the log's epoch lines hold for the last epoch (--test-every-epoch), or None."""
    value = None
    for j in lines or []:
        if j["epoch"] == epochs and "test_" + metric in j:
            value = j["test_" + metric]
    return value


def seed_files(out, row, epochs, suffix):
    """(seed, path without suffix) of the files <row>-seed<k><suffix> in `out`, by name."""
    prefix = stem(row, 0, epochs).rsplit("seed0", 1)[0] + "seed"
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        if name.startswith(prefix) and name.endswith(suffix) and name[len(prefix):-len(suffix)].isdigit():
            yield int(name[len(prefix):-len(suffix)]), os.path.join(out, name[:-len(suffix)])


def mean_std(xs):
    """Mean and sample standard deviation (n - 1; 0 for one value)."""
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    if len(xs) == 1:
        return m, 0.0
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def summarise(out, row, epochs):
    """Per row: the seeds with results, its test metric (ROC-AUC in %, RMSE) at the best validation epoch and at the
    last epoch, hours per seed."""
    metric = metric_of(row)
    best, last, hours, seeds = [], [], [], []
    for seed, base in seed_files(out, runs_of(row), epochs, ".json"):
        try:
            with open(base + ".json") as f:
                j = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            print(f"{os.path.basename(sys.argv[0])}: {os.path.basename(base)}.json: unreadable ({e}); left out",
                  file=sys.stderr)
            continue
        seeds.append(seed)
        if "test_" + metric in j:
            best.append(shown(row, j["test_" + metric]))
        lines = epoch_lines(base + ".log.jsonl")
        t = last_epoch_test(lines, j.get("epochs", epochs), metric)
        if t is not None:
            last.append(shown(row, t))
        h = log_hours(lines)
        if h is None and "seconds" in j:
            h = j["seconds"] / 3600
        if h is not None:
            hours.append(h)
    return dict(seeds=sorted(seeds), best=best, last=last, hours=hours)


def fmt(xs, digits=1):
    m, s = mean_std(xs)
    return "not run" if m is None else f"{m:.{digits}f} ± {s:.{digits}f} (n={len(xs)})"


def within(xs, published):
    m, _ = mean_std(xs)
    pm, ps = published
    if m is None or pm is None or ps is None:
        return "-"
    return "yes" if abs(m - pm) <= 1.5 * ps else "no"


def fmt_published(row):
    pm, ps = ROWS[row]["published"]
    digits = 2 if metric_of(row) == "rocauc" else 3
    if pm is None:
        return "none found"
    return f"{pm:.{digits}f}" + ("" if ps is None else f" ± {ps:.{digits}f}")


def report(out, rows, epochs):
    """`epochs`: None for each row's own (its protocol's), else a smoke run's."""
    print(f"Test ROC-AUC (%) or RMSE, mean ± sample std over seeds; results in {out}" +
          (f"; SMOKE RUN: {epochs} epochs, not the protocols'" if epochs else ""))
    print()
    print("| row | metric | seeds | test @ best valid | test @ last epoch | published | paper reports | within 1.5 std "
          "(best / last) | h per seed |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        r = ROWS[row]
        e = epochs or row_epochs(row)
        s = summarise(out, row, e)
        hours = mean_std(s["hours"])[0]
        seeds = ",".join(str(k) for k in s["seeds"]) or "-"
        digits = 1 if metric_of(row) == "rocauc" else 3
        print(f"| {row}{' (smoke)' if e != row_epochs(row) else ''} | {metric_of(row)} | {seeds} | "
              f"{fmt(s['best'], digits)} | {fmt(s['last'], digits)} | {fmt_published(row)} | {r['protocol']} | "
              f"{within(s['best'], r['published'])} / {within(s['last'], r['published'])} | "
              f"{'-' if hours is None else f'{hours:.2f}'} |")
    print()
    for row in dict.fromkeys(runs_of(r) for r in rows):
        e = epochs or row_epochs(row)
        for seed, epoch in unfinished(out, row, e):
            print(f"- unfinished: {stem(row, seed, e)} at epoch {epoch} of {e} (the same command resumes it)")
    for source in dict.fromkeys(ROWS[row]["source"] for row in rows):
        print(f"- {source}")


def unfinished(out, row, epochs):
    """(seed, last logged epoch) of the runs of `row` stopped part way: a checkpoint folder and no final JSON."""
    return [(seed, max((j["epoch"] for j in epoch_lines(base + ".log.jsonl") or []), default=0))
            for seed, base in seed_files(out, row, epochs, ".ckpt") if not os.path.exists(base + ".json")]


SEED_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                "#17becf"]


def curve_panel(out, row, epochs, w, h):
    """SVG elements of one panel: validation (dashed) and test (solid) metric (ROC-AUC, RMSE) per epoch of each
    finished seed of `row`'s runs, the best validation epoch as a dot on the test curve; [] when no seed is
    finished."""
    metric = metric_of(row)
    runs = []
    for seed, base in seed_files(out, row, epochs, ".json"):
        try:
            with open(base + ".json") as f:
                best_epoch = json.load(f).get("best_epoch")  # the run's own choice, as --report's figure
        except (OSError, json.JSONDecodeError):
            continue  # summarise() has already said so
        lines = sorted(epoch_lines(base + ".log.jsonl") or [], key=lambda j: j["epoch"])
        pts = [(j["epoch"], j.get("valid_" + metric), j.get("test_" + metric)) for j in lines]
        pts = [p for p in pts if isinstance(p[1], (int, float)) and isinstance(p[2], (int, float))]
        if pts:
            runs.append((seed, pts, best_epoch))
    if not runs:
        return []
    lo = min(min(v, t) for _, pts, _ in runs for _, v, t in pts)
    if metric == "rocauc":
        lo, hi, tick = max(0.0, math.floor(lo * 20) / 20), 1.0, 0.05  # from a multiple of 0.05 to 1
    else:  # RMSE: 0 to the largest value of the run's second half (the first epochs' can be far larger)
        late = [max(v, t) for _, pts, _ in runs for e, v, t in pts if e > epochs // 2] or [1.0]
        lo, hi = 0.0, math.ceil(max(late) * 1.5 * 4) / 4
        tick = hi / 5
    px = lambda e: 50 + (w - 60) * (e - 1) / max(1, epochs - 1)
    py = lambda v: 25 + (h - 60) * (hi - v) / (hi - lo)
    el = [f'<text x="{w / 2}" y="15" text-anchor="middle" font-weight="bold">{row}</text>',
          f'<rect x="50" y="25" width="{w - 60}" height="{h - 60}" fill="none" stroke="#999"/>']
    v = lo
    while v <= hi + 1e-9:
        el.append(f'<line x1="50" x2="{w - 10}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>')
        el.append(f'<text x="45" y="{py(v) + 4:.1f}" text-anchor="end">{v:.2f}</text>')
        v += tick
    for e in range(0, epochs + 1, max(1, epochs // 5)):
        ee = max(e, 1)
        el.append(f'<text x="{px(ee):.1f}" y="{h - 20}" text-anchor="middle">{ee}</text>')
    el.append(f'<text x="{w / 2}" y="{h - 4}" text-anchor="middle">epoch</text>')
    for i, (seed, pts, best_epoch) in enumerate(runs):
        c = SEED_COLOURS[i % len(SEED_COLOURS)]
        for k, dash in ((1, ' stroke-dasharray="4 3"'), (2, "")):
            path = " ".join(f"{px(p[0]):.1f},{py(min(p[k], hi)):.1f}" for p in pts)
            el.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="1.2"{dash}/>')
        best = next((p for p in pts if p[0] == best_epoch), None)
        at_best = "no best epoch in its JSON"
        digits = 1 if metric == "rocauc" else 3
        if best:
            el.append(f'<circle cx="{px(best[0]):.1f}" cy="{py(min(best[2], hi)):.1f}" r="3.5" fill="{c}"/>')
            at_best = f"test {shown(row, best[2]):.{digits}f} at best valid (epoch {best[0]})"
        el.append(f'<text x="60" y="{40 + 14 * i}" fill="{c}">seed {seed}: {at_best}, '
                  f'{shown(row, pts[-1][2]):.{digits}f} at epoch {pts[-1][0]}</text>')
    return el


def write_curves(path, out, rows, epochs):
    """One SVG image: a panel per distinct run row (rows sharing runs drawn once)."""
    w, h = 720, 360
    panels = [p for p in (curve_panel(out, r, epochs or row_epochs(r), w, h) for r in dict.fromkeys(runs_of(r) for r in rows))
              if p]
    if not panels:
        fail(f"--curves: no finished run of {', '.join(rows)} in {out}")
    body = [f'<g transform="translate(0,{i * h})">' + "".join(el) + "</g>" for i, el in enumerate(panels)]
    legend = (f'<text x="10" y="{len(panels) * h + 16}">dashed: validation; solid: test (ROC-AUC or RMSE, as the '
              'panel\'s row); dot: test at the best validation epoch</text>')
    with open(path, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{len(panels) * h + 24}" '
                f'font-family="sans-serif" font-size="11"><rect width="100%" height="100%" fill="white"/>'
                + "".join(body) + legend + "</svg>\n")
    print(f"curves: {path}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=RESULTS,
                    help="folder of the runs' files (created if missing; default: the repository's "
                         "bench/results/published-tables)")
    ap.add_argument("--rows", default=",".join(ROWS), help="comma-separated rows (default: all): " + ", ".join(ROWS))
    ap.add_argument("--seeds", default="0-9", help="seeds, e.g. 0-9 or 0,3,5 (default 0-9, as the papers' 10)")
    ap.add_argument("--epochs", type=int, default=None,
                    help=f"epochs per run (default: each row's protocol, {PAPER_EPOCHS} for classification, "
                         f"{REGRESSION['epochs']} for regression; others only for a smoke run)")
    ap.add_argument("--threads", type=int, default=1, help="--threads of each run (default 1)")
    ap.add_argument("--build", default=os.path.join(REPO, "build", "release"))
    ap.add_argument("--report", action="store_true", help="only summarise the results in --out; run nothing")
    ap.add_argument("--curves", metavar="FILE.svg",
                    help="also write the finished runs' validation and test metric per epoch as an SVG image")
    a = ap.parse_args()
    rows = [r.strip() for r in a.rows.split(",") if r.strip()]
    for r in rows:
        if r not in ROWS:
            fail(f"--rows: unknown row '{r}' (rows: {', '.join(ROWS)})")
    if a.epochs is not None and a.epochs < 1:
        fail(f"--epochs {a.epochs}: must be >= 1")
    if a.threads < 0:
        fail(f"--threads {a.threads}: must be >= 0 (0 = all cores)")
    seeds = parse_seeds(a.seeds)
    if a.curves and not a.curves.endswith(".svg"):
        fail(f"--curves {a.curves}: expected a file name ending in .svg")
    if a.report:
        report(a.out, rows, a.epochs)
        if a.curves:
            write_curves(a.curves, a.out, rows, a.epochs)
        return
    prog = os.path.abspath(example_program(a.build, "molecule_property"))
    os.makedirs(a.out, exist_ok=True)
    for row in dict.fromkeys(runs_of(r) for r in rows):  # rows sharing a command run once
        for seed in seeds:
            run_one(prog, a.out, row, seed, a.epochs or row_epochs(row), a.threads)
    report(a.out, rows, a.epochs)
    if a.curves:
        write_curves(a.curves, a.out, rows, a.epochs)


if __name__ == "__main__":
    main()
