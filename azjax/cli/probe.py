"""Probe a trained network for human concepts: linear probes with controls, TCAV, causal check.

    azjax probe --checkpoint results/breakthrough_cpu        # the final network
    azjax probe --run results/breakthrough_cpu               # every snapshot too

(the same: `python -m experiments.probe`). Positions come from self-play of the final network
(`--states`, distinct positions, whole games), or from an export (`--dataset DIR`, written by
`azjax export`). For every network, layer and concept a linear probe is trained on games and
tested on other games, over `--seeds` seeds, beside two controls: the same probe on a randomly
initialised network of the same shape (a fresh one per seed) and on the raw input. Binary
concepts use the classifiers of `--probes` (balanced accuracy), counts use Ridge (R^2). The
probes read every unit of a layer (`--features flat`, as the thesis) or each channel summed over
the board (`--features pooled`, the natural reader of count concepts such as material; see
`azjax.probe.probes`). On the final network, TCAV of the chosen action's loss with a t-test
against `--tcav-runs` random-label CAVs, and the causal check (add alpha times the CAV at the
layer; watch the value head and the policy) run for the binary concepts at the input and every
body layer, on the flat activations whatever `--features` says (`--no-tcav` skips them).

Writes under `--out` (default `<run>/probe`):

    scores.csv      one row per (checkpoint, network, layer, concept, probe, seed)
    summary.csv     per (checkpoint, layer, concept, probe): trained, random-network and input
                    scores (mean and std over seeds) and the margins over the controls
    tcav.csv        per (layer, concept): TCAV scores of the concept and random CAVs, p-value
    causal.csv      per (layer, concept, direction, alpha): value, value change, KL, ...
    summary.md      the headline figures and the command
    layers.png      score per layer with both controls (final network)
    heatmaps.png    what-when-where: layers x checkpoints, one panel per concept
    tcav.png        TCAV bars with significance marks
    causal.png      value against alpha (concept direction and random direction)
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import jax
import numpy as np

from azjax import console, files
from azjax.cli.common import check_counts, command_line, prog
from azjax.runs import layout


def build_parser() -> argparse.ArgumentParser:
  parser = argparse.ArgumentParser(prog=prog("probe"),
                                   description=__doc__.split("\n")[0])
  source = parser.add_mutually_exclusive_group(required=True)
  source.add_argument("--checkpoint", help="a run directory: probe its final network")
  source.add_argument("--run", help="a run directory: probe every snapshot and the final network")
  parser.add_argument("--dataset", default=None,
                      help="an export directory (azjax export) whose states to use")
  parser.add_argument("--out", default=None, help="output directory (default <run>/probe)")
  parser.add_argument("--states", type=int, default=3000, help="distinct positions to collect")
  parser.add_argument("--batch", type=int, default=64, help="games played together")
  parser.add_argument("--simulations", type=int, default=None,
                      help="self-play search simulations (default: the run's)")
  parser.add_argument("--opening-moves", type=int, default=0,
                      help="uniformly random plies at the start of every game")
  parser.add_argument("--concepts", default=None, help="comma-separated (default: all)")
  parser.add_argument("--probes", default="sgd,logistic,ridge",
                      help="probes on the final network (sgd, logistic for binary concepts; "
                      "ridge for counts)")
  parser.add_argument("--sweep-probes", default="sgd,ridge",
                      help="probes on the earlier snapshots (the heatmaps use the first one "
                      "that fits each concept)")
  parser.add_argument("--features", choices=("flat", "pooled"), default="flat",
                      help="probe every unit of a layer (flat, as the thesis) or each channel "
                      "summed over the board (pooled)")
  parser.add_argument("--tune", action="store_true",
                      help="choose every probe's penalty on held-out training games (default: "
                      "only Ridge's; the classifiers keep scikit-learn's defaults)")
  parser.add_argument("--seeds", type=int, default=3, help="seeds on the final network")
  parser.add_argument("--sweep-seeds", type=int, default=2, help="seeds on earlier snapshots")
  parser.add_argument("--tcav-runs", type=int, default=10,
                      help="concept CAVs and random CAVs per TCAV test (>= 10)")
  parser.add_argument("--tcav-concepts", default=None,
                      help="comma-separated binary concepts for TCAV and the causal check "
                      "(default: every binary concept)")
  parser.add_argument("--tcav-layers", default=None,
                      help="comma-separated layers for TCAV and the causal check (default: "
                      "input, stem and every block)")
  parser.add_argument("--tcav-states", type=int, default=None,
                      help="run TCAV and the causal check on whole games drawn at random until "
                      "they hold this many positions (default: every position; on 12000 "
                      "positions of a 128x6 network they took 75 minutes of a 2-core CPU)")
  parser.add_argument("--no-tcav", action="store_true",
                      help="skip TCAV and the causal check (the probes' tables only)")
  parser.add_argument("--alphas", default="-2,-1,-0.5,0,0.5,1,2",
                      help="causal check: multiples of the class-mean gap along the CAV "
                      "(write --alphas=-1,0,1: a leading minus reads as an option)")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--replot", action="store_true",
                      help="only redraw the plots from the CSV tables in --out")
  return parser


def _csv(path: Path, rows: Sequence[dict]) -> None:
  """`rows` as a CSV table, written atomically (a Ctrl-C while writing leaves the old file)."""
  if not rows:
    return
  text = io.StringIO(newline="")
  writer = csv.DictWriter(text, fieldnames=list(rows[0]))
  writer.writeheader()
  for row in rows:
    writer.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})
  files.write_atomic(path, text.getvalue())


def _split(text: str | None) -> list[str] | None:
  return None if text is None else [t.strip() for t in text.split(",") if t.strip()]


def primary_probe(binary: bool, kinds: Sequence[str]) -> str | None:
  """The first probe of `kinds` that fits a binary concept (classifier) or a count (ridge)."""
  from azjax.probe import probes
  for kind in kinds:
    if (kind in probes.CLASSIFIERS) == binary:
      return kind
  return None


def probe_network(acts: dict[str, np.ndarray], ds, *, label: str, iteration, network: str,
                  concepts: Sequence[str], kinds: Sequence[str], seeds: Sequence[int],
                  layers: Sequence[str], tune: bool | None = None,
                  features: str = "flat") -> list[dict]:
  """Score rows of every (layer, concept, probe, seed) on one network's activations
  (`tune`: see `probes.fit`; `features`: see `probes.features`)."""
  from azjax.probe import probes
  inputs = {layer: probes.features(acts[layer], features) for layer in layers}
  rows = []
  for concept in concepts:
    binary = ds.is_binary(concept)
    for kind in kinds:
      if (kind in probes.CLASSIFIERS) != binary:
        continue
      for layer in layers:
        for seed in seeds:
          value = probes.score(kind, inputs[layer], ds.labels(concept), ds.groups, seed=seed,
                               tune=tune)
          rows.append(dict(checkpoint=label, iteration="" if iteration is None else iteration,
                           network=network, layer=layer, concept=concept, probe=kind,
                           features=features, metric=probes.METRICS[kind], seed=seed,
                           score=value))
  return rows


def random_activations(model, env, obs: np.ndarray, seed: int) -> dict[str, np.ndarray]:
  """Activations of a freshly initialised network of the same shape (the random control)."""
  from azjax.probe import dataset
  variables = dataset.random_network(model, env.observation_shape, 10_000 + seed)
  return dataset.activations(model, variables, obs)


def summarize(rows: Sequence[dict]) -> list[dict]:
  """Per (checkpoint, network, layer, concept, probe): mean and std over seeds, the controls'
  means at the same layer and the margins over them.

  Trained networks are compared with the random networks (checkpoint "init") at the same
  layer and with the raw input; the random networks' own rows have margin 0 over themselves.
  """
  groups: dict[tuple, list[dict]] = {}
  for r in rows:
    groups.setdefault((r["checkpoint"], r["network"], r["layer"], r["concept"], r["probe"]),
                      []).append(r)

  def stats(part):
    finite = [r["score"] for r in part if np.isfinite(r["score"])]
    if not finite:
      return float("nan"), float("nan")
    return float(np.mean(finite)), float(np.std(finite))

  randoms = {k[2:]: stats(v) for k, v in groups.items() if k[1] == "random"}
  inputs = {k[3:]: stats(v)[0] for k, v in groups.items() if k[1] == "input"}
  out = []
  for (checkpoint, network, layer, concept, kind), part in groups.items():
    if network == "input":
      continue
    mean, std = stats(part)
    random_mean, random_std = randoms.get((layer, concept, kind), (float("nan"), float("nan")))
    input_mean = inputs.get((concept, kind), float("nan"))
    out.append(dict(checkpoint=checkpoint, iteration=part[0]["iteration"], network=network,
                    layer=layer, concept=concept, probe=kind, metric=part[0]["metric"],
                    mean=mean, std=std, random_mean=random_mean, random_std=random_std,
                    input_mean=input_mean, over_random=mean - random_mean,
                    over_input=mean - input_mean))
  return out


def run_tcav(model, variables, ds, acts: dict[str, np.ndarray], *, concepts: Sequence[str],
             layers: Sequence[str], runs: int, alphas: Sequence[float],
             seed: int) -> tuple[list[dict], list[dict]]:
  """TCAV (with its t-test) and the causal curves for each (layer, concept)."""
  from azjax.probe import probes, tcav
  obs = acts["input"]
  mask, actions = ds.table["legal_mask"], ds.table["action"]
  tcav_rows, causal_rows = [], []
  for layer in layers:
    shape = acts[layer].shape[1:]
    grads = tcav.loss_gradients(model, variables, obs, mask, actions, layer, shape)
    for concept in concepts:
      y = ds.labels(concept)
      if min(np.sum(y > 0.5), np.sum(y <= 0.5)) < probes.MIN_PER_CLASS:
        print(f"probe: TCAV skips {concept}: fewer than {probes.MIN_PER_CLASS} positions in "
              "one of its classes")
        continue
      result = tcav.tcav_test(acts[layer], y, grads, ds.groups, runs=runs, seed=seed)
      tcav_rows.append(dict(layer=layer, concept=concept, tcav_mean=result.score,
                            tcav_std=result.score_std, random_mean=result.random_score,
                            random_std=result.random_std, p_value=result.p_value,
                            significant=int(result.significant()), runs=runs))
      v = tcav.cav(acts[layer], y, seed=seed)
      gap = tcav.class_gap(acts[layer], y, v)
      for direction, vector in (("concept", v),
                                ("random", tcav.random_direction(v.size, seed=seed))):
        curve = tcav.causal_curve(model, variables, obs, mask, actions, layer, vector, shape,
                                  alphas, scale=gap)
        for i in range(len(alphas)):
          causal_rows.append(dict(layer=layer, concept=concept, direction=direction,
                                  scale=gap, **{k: float(curve[k][i]) for k in curve}))
  return tcav_rows, causal_rows


def headline(summary: Sequence[dict], tcav_rows: Sequence[dict], final: str,
             concept: str = "material_advantage") -> list[str]:
  """Markdown lines: the best layer of `concept` per probe (final network), and its TCAV."""
  lines = []
  candidates = [r for r in summary if r["checkpoint"] == final and r["concept"] == concept]
  for kind in dict.fromkeys(r["probe"] for r in candidates):
    part = [r for r in candidates if r["probe"] == kind and np.isfinite(r["mean"])]
    if not part:
      continue
    best = max(part, key=lambda r: r["mean"])
    lines.append(
        f"- `{concept}`, {kind}: best layer `{best['layer']}` {best['mean']:.3f} "
        f"+- {best['std']:.3f}; random network at that layer {best['random_mean']:.3f} "
        f"(margin {best['over_random']:+.3f}); raw input {best['input_mean']:.3f}")
  for r in tcav_rows:
    if r["concept"] == concept:
      lines.append(f"- TCAV `{concept}` at `{r['layer']}`: {r['tcav_mean']:.3f} +- "
                   f"{r['tcav_std']:.3f} vs random CAVs {r['random_mean']:.3f} +- "
                   f"{r['random_std']:.3f}, p = {r['p_value']:.2g}")
  return lines


def tcav_table(tcav_rows: Sequence[dict], level: float = 0.05) -> list[str]:
  """Markdown table: TCAV score per concept (rows) and layer (columns), `*` where p < level."""
  layers = list(dict.fromkeys(r["layer"] for r in tcav_rows))
  lines = ["| concept | " + " | ".join(layers) + " |", "|---" * (len(layers) + 1) + "|"]
  for concept in dict.fromkeys(r["concept"] for r in tcav_rows):
    cells = []
    for layer in layers:
      r = next((r for r in tcav_rows if r["concept"] == concept and r["layer"] == layer), None)
      cells.append("" if r is None else f"{float(r['tcav_mean']):.3f} (p={float(r['p_value']):.1g})"
                   + ("*" if float(r["p_value"]) < level else ""))
    lines.append(f"| {concept} | " + " | ".join(cells) + " |")
  return lines


def causal_table(causal_rows: Sequence[dict], concept: str,
                 alphas: Sequence[float] = (-1.0, 0.0, 1.0)) -> list[str]:
  """Markdown table: mean value at a few alphas, concept direction and random direction."""
  lines = ["| layer | " + " | ".join(f"value, alpha {a:+g}" for a in alphas)
           + " | random direction, alpha " + " / ".join(f"{a:+g}" for a in alphas) + " |",
           "|---" * (len(alphas) + 2) + "|"]
  rows = [r for r in causal_rows if r["concept"] == concept]
  for layer in dict.fromkeys(r["layer"] for r in rows):
    def values(direction):
      found = {float(r["alpha"]): float(r["value"]) for r in rows
               if r["layer"] == layer and r["direction"] == direction}
      return [found.get(a, float("nan")) for a in alphas]
    lines.append(f"| {layer} | " + " | ".join(f"{v:+.3f}" for v in values("concept")) + " | "
                 + " / ".join(f"{v:+.3f}" for v in values("random")) + " |")
  return lines


def best_layers_table(summary: Sequence[dict], final: str, kinds: Sequence[str]) -> list[str]:
  """Markdown table: per concept, the primary probe's best layer with both controls."""
  lines = ["| concept | probe | best layer | trained | random network (same layer) | raw input |",
           "|---|---|---|---|---|---|"]
  for concept in dict.fromkeys(r["concept"] for r in summary):
    for kind in kinds:
      part = [r for r in summary if r["checkpoint"] == final and r["concept"] == concept
              and r["probe"] == kind and np.isfinite(r["mean"])]
      if not part:
        continue
      best = max(part, key=lambda r: r["mean"])
      lines.append(f"| {concept} | {kind} | {best['layer']} | {best['mean']:.3f} +- "
                   f"{best['std']:.3f} | {best['random_mean']:.3f} +- {best['random_std']:.3f} "
                   f"| {best['input_mean']:.3f} |")
  return lines


def summary_lines(summary: Sequence[dict], tcav_rows: Sequence[dict],
                  causal_rows: Sequence[dict], *, final: str, kinds: Sequence[str],
                  runs: int) -> list[str]:
  """The tables of `summary.md`: best layers with controls, material advantage, TCAV, causal."""
  lines = [f"Best layer per concept (network {final}, mean over seeds; chance: balanced "
           "accuracy 0.5, R^2 0):", ""]
  lines += best_layers_table(summary, final, kinds)
  lines += ["", "Material advantage:", ""] + headline(summary, tcav_rows, final)
  if tcav_rows:
    lines += ["", f"TCAV (share of positions whose chosen-action loss falls along the CAV; "
              f"{runs} concept CAVs against {runs} random-label CAVs, Welch t-test, * p < 0.05):",
              ""]
    lines += tcav_table(tcav_rows)
  for concept in dict.fromkeys(r["concept"] for r in causal_rows):
    lines += ["", f"Causal check, `{concept}`: mean value head output (mover's side) with alpha "
              "times the class-mean gap added along the CAV:", ""]
    lines += causal_table(causal_rows, concept)
  return lines


def write_plots(out: Path, summary: Sequence[dict], tcav_rows: Sequence[dict],
                causal_rows: Sequence[dict], *, title: str, kinds: Sequence[str],
                sweep_kinds: Sequence[str]) -> None:
  """layers.png, heatmaps.png, tcav.png and causal.png from the rows of the CSV tables.

  The last trained checkpoint of `summary` is the final network; each concept is drawn with
  the first probe of `kinds` (final network) or `sweep_kinds` (heatmaps) that fits it.
  """
  from azjax.probe import plots

  trained = [r for r in summary if r["network"] == "trained"]
  final = trained[-1]["checkpoint"]
  layers = list(dict.fromkeys(r["layer"] for r in trained))
  checkpoints = ["init"] + list(dict.fromkeys(r["checkpoint"] for r in trained))

  def primary(r, probes_):
    return r["probe"] == primary_probe(r["metric"] == "balanced_accuracy", probes_)

  plots.layer_scores([r for r in trained if r["checkpoint"] == final and primary(r, kinds)],
                     out / "layers.png", layers=layers,
                     title=f"{title}, network {final}: probes with controls")
  plots.heatmaps([r for r in summary if primary(r, sweep_kinds)], out / "heatmaps.png",
                 layers=layers, checkpoints=checkpoints,
                 title=f"{title}: what-when-where (init = random network)")
  if tcav_rows:
    plots.tcav_bars(tcav_rows, out / "tcav.png", title=f"{title}, network {final}: TCAV")
  if causal_rows:
    plots.causal_curves(causal_rows, out / "causal.png",
                        title=f"{title}, network {final}: value as the CAV is added")


def _read_csv(path: Path) -> list[dict]:
  if not path.exists():
    return []
  with open(path, newline="") as f:
    return list(csv.DictReader(f))


def positions(args, config, env, model, variables) -> tuple[Any, np.ndarray, str]:
  """`(dataset, observations [N, R, C, P], description)`: an export's positions (`--dataset`)
  or new ones from self-play of `variables` with the run's search."""
  from azjax.probe import dataset
  if args.dataset:
    ds = dataset.load(args.dataset)
    if "input" not in ds.activations:
      sys.exit(f"error: {args.dataset} has no activations.npz (exported with --no-activations)")
    obs = ds.activations["input"]
    ds.activations = {}  # each network's activations are recomputed from the inputs
    return ds, obs, f"export {args.dataset}"
  # Self-play with the run's own search, noise kept on purpose: the games differ.
  search_config = config.search_config(simulations=args.simulations or None)
  bar = console.progress(args.states, "probe: collecting positions", unit="pos")
  try:
    states, table = dataset.collect(
        env, model, variables, search_config, num_states=args.states,
        key=jax.random.key(args.seed), batch=args.batch, opening_moves=args.opening_moves,
        on_round=console.reach(bar, args.states))
  except KeyboardInterrupt:
    console.interrupted("nothing written: the positions were still being collected")
    sys.exit(console.INTERRUPTED)
  finally:
    bar.close()
  ds = dataset.Dataset(table=table, activations={}, meta={"concepts": dataset.concept_meta(env)})
  source = (f"self-play of the final network ({search_config.algorithm}, "
            f"{search_config.simulations} simulations, gumbel_scale "
            f"{search_config.gumbel_scale}), {args.opening_moves} random opening plies")
  return ds, np.asarray(states.observation), source


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
  """Exits with a message naming the flag for a count that cannot be."""
  check_counts(parser, (("--states", args.states, 1), ("--batch", args.batch, 1),
                        ("--simulations", args.simulations, 1),
                        ("--opening-moves", args.opening_moves, 0),
                        ("--seeds", args.seeds, 1), ("--sweep-seeds", args.sweep_seeds, 1)))


@console.command
def main(argv: list[str] | None = None) -> None:
  parser = build_parser()
  args = parser.parse_args(argv)
  check_args(parser, args)
  run_dir = Path(args.checkpoint or args.run)
  out = Path(args.out) if args.out else run_dir / layout.PROBE
  if args.tcav_runs < 2:
    sys.exit("error: --tcav-runs must be at least 2 (TCAV asks for 10 or more)")
  if args.tcav_states is not None and args.tcav_states < 1:
    sys.exit(f"error: --tcav-states must be positive, got {args.tcav_states}")
  alphas = [float(a) for a in args.alphas.split(",")]

  from azjax import games, nets
  from azjax.probe import concepts as concepts_lib
  from azjax.probe import dataset, probes
  from azjax.runs import checkpoint

  started = time.time()
  try:
    config = checkpoint.read_config(run_dir)
  except (FileNotFoundError, ValueError) as err:
    sys.exit(f"error: {err}")
  if args.replot:
    write_plots(out, _read_csv(out / "summary.csv"), _read_csv(out / "tcav.csv"),
                _read_csv(out / "causal.csv"),
                title=f"{games.make(config.game, **config.game_kwargs()).describe()}, "
                f"{run_dir.name}", kinds=_split(args.probes),
                sweep_kinds=_split(args.sweep_probes))
    print(f"probe: redrew the plots in {out}")
    return
  env = games.make(config.game, **config.game_kwargs())
  try:
    known = concepts_lib.concepts_for(env)  # Before the positions: a game may have none.
  except ValueError as err:
    sys.exit(f"error: {err}")
  model = nets.make(config.net_config(), env.num_actions)
  abstract = dataset.abstract_network(model, env.observation_shape)
  networks = dataset.run_networks(run_dir, abstract, snapshots=args.run is not None)
  final_label, _, final_variables = networks[-1]
  if args.run is not None and len(networks) == 1:
    print(f"probe: warning: {run_dir} has no network snapshots (models/<iteration> or "
          "checkpoints/), so --run probes the final network only", file=sys.stderr)
  print(f"probe: {config.game} {config.game_kwargs()}, networks: "
        f"{', '.join(label for label, _, _ in networks)}")

  ds, obs, source = positions(args, config, env, model, final_variables)
  concept_names = _split(args.concepts) or ds.concept_names
  for name in concept_names:
    if name not in known:
      sys.exit(f"error: unknown concept {name!r}; known: {', '.join(known)}")
  print(f"probe: {len(ds)} positions from {len(np.unique(ds.groups))} games ({source}); "
        f"{time.time() - started:.0f}s")

  kinds, sweep_kinds = _split(args.probes), _split(args.sweep_probes)
  tune = True if args.tune else None
  seeds = list(range(args.seed, args.seed + args.seeds))
  sweep_seeds = seeds[:args.sweep_seeds]
  rows: list[dict] = []

  # Progress: the controls (one unit per seed), each network, then TCAV; Ctrl-C stops after the
  # unit in flight and writes the tables of the units done.
  tcav_rows, causal_rows, tcav_note = [], [], "TCAV and the causal check skipped (--no-tcav)."
  bar = console.progress(len(seeds) + len(networks) + (not args.no_tcav), "probe", unit="step")
  interrupted = False
  try:
    # -- Controls: the raw input, and random networks of the same shape (one per seed; their
    # activations are dropped as soon as they are probed, as they can take gigabytes).
    rows += probe_network({"input": obs}, ds, label="input", iteration=None, network="input",
                          concepts=concept_names, kinds=kinds, seeds=seeds, layers=["input"],
                          tune=tune, features=args.features)
    for seed in seeds:
      random_acts = random_activations(model, env, obs, seed)
      layers = list(random_acts)
      body = [l for l in layers if l != "input"]
      rows += probe_network(random_acts, ds, label="init", iteration=0, network="random",
                            concepts=concept_names, kinds=kinds, seeds=[seed], layers=body,
                            tune=tune, features=args.features)
      del random_acts
      bar.update(1)
    console.echo(bar, f"probe: controls done; {time.time() - started:.0f}s")

    # -- Every network: its probes (all probes and seeds on the final one).
    final_acts = None
    for label, iteration, variables in networks:
      is_final = label == final_label
      acts = dataset.activations(model, variables, obs)
      rows += probe_network(acts, ds, label=label, iteration=iteration, network="trained",
                            concepts=concept_names, kinds=kinds if is_final else sweep_kinds,
                            seeds=seeds if is_final else sweep_seeds, layers=body, tune=tune,
                            features=args.features)
      if is_final and not args.no_tcav:
        final_acts = acts
      del acts
      bar.update(1)
      console.echo(bar, f"probe: network {label} done; {time.time() - started:.0f}s")

    summary = summarize(rows)

    # -- TCAV and the causal check on the final network.
    tcav_concepts = _split(args.tcav_concepts) or [c for c in concept_names if ds.is_binary(c)]
    for name in tcav_concepts:
      if name not in known or not ds.is_binary(name):
        sys.exit(f"error: --tcav-concepts: {name!r} is not a binary concept of {config.game}")
    tcav_layers = _split(args.tcav_layers) or [l for l in layers if l == "input" or l == "stem"
                                               or l.startswith("block_")]
    for layer in tcav_layers:
      if layer not in layers or not (layer in ("input", "stem") or layer.startswith("block_")):
        sys.exit(f"error: --tcav-layers: {layer!r} is not the input or a body layer "
                 f"({', '.join(l for l in layers if l not in ('policy_trunk', 'value_trunk'))})")
    if not args.no_tcav:
      tcav_ds = dataset.Dataset(table=ds.table, activations=final_acts, meta=ds.meta)
      if args.tcav_states is not None:
        tcav_ds = tcav_ds.take(probes.sample_games(ds.groups, args.tcav_states, seed=args.seed))
      tcav_note = (f"TCAV and the causal check on {len(tcav_ds)} positions from "
                   f"{len(np.unique(tcav_ds.groups))} games.")
      console.echo(bar, f"probe: {tcav_note}")
      tcav_rows, causal_rows = run_tcav(model, final_variables, tcav_ds, tcav_ds.activations,
                                        concepts=tcav_concepts, layers=tcav_layers,
                                        runs=args.tcav_runs, alphas=alphas, seed=args.seed)
      bar.update(1)
      console.echo(bar, f"probe: TCAV and causal check done; {time.time() - started:.0f}s")
  except KeyboardInterrupt:
    interrupted = console.interrupted(f"writing the tables of what was probed to {out}")
    tcav_note = "Interrupted (Ctrl-C): the tables hold what was probed before it."
    summary = summarize(rows)
  finally:
    bar.close()

  # -- Tables and plots.
  out.mkdir(parents=True, exist_ok=True)
  _csv(out / "scores.csv", rows)
  _csv(out / "summary.csv", summary)
  _csv(out / "tcav.csv", tcav_rows)
  _csv(out / "causal.csv", causal_rows)
  title = f"{env.describe()}, {run_dir.name}"
  if not interrupted:  # The plots need every network (`--replot` draws them later).
    write_plots(out, summary, tcav_rows, causal_rows, title=title, kinds=kinds,
                sweep_kinds=sweep_kinds)

  command = command_line(parser.prog, argv)
  balance = {c: float(np.mean(ds.labels(c) > 0.5)) for c in concept_names if ds.is_binary(c)}
  lines = [f"# Probing {run_dir}", "", f"`{command}`", "",
           f"{len(ds)} distinct positions from {len(np.unique(ds.groups))} games ({source}); "
           f"networks: init, {', '.join(label for label, _, _ in networks)}; seeds {seeds} on "
           f"the final network, {sweep_seeds} on the others; probe features: {args.features}; "
           f"{time.time() - started:.0f} s.",
           "", "Share of positive labels: "
           + ", ".join(f"{c} {v:.2f}" for c, v in balance.items()), "", tcav_note, ""]
  if not interrupted:
    lines += summary_lines(summary, tcav_rows, causal_rows, final=final_label, kinds=kinds,
                           runs=args.tcav_runs)
  files.write_atomic(out / "summary.md", "\n".join(lines) + "\n")
  files.write_atomic(out / "dataset.json", json.dumps(dict(
      positions=len(ds), games=int(len(np.unique(ds.groups))), source=source,
      positive_share=balance, concepts=ds.meta.get("concepts", {})), indent=2) + "\n")
  print("\n".join(lines))
  print(f"probe: wrote {out}")
  if interrupted:
    sys.exit(console.INTERRUPTED)


if __name__ == "__main__":
  main()
