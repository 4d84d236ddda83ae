"""The run directory: the one place that names its files, and the rules that keep a run safe.

Every kind of run (`azjax.runs.kinds`) writes the same layout:

    config.json | <learner>.json   the run's settings (AlphaZero's is config.json, TD-Leaf's
                                   tdleaf.json: `settings_file`); it marks the run's kind
    metrics.jsonl, metrics.csv     one row an iteration (`azjax.runs.loop.MetricsWriter`);
                                   a finished record in results/ may hold metrics.jsonl.gz
    checkpoints/<step>/            orbax: the whole training state (`azjax.runs.checkpoint`)
    model/                         the final network (what `azjax.runs.load` reads)
    models/<iteration>/            a snapshot of the network at every checkpoint
    losses.png, winrate.png,       the plots (`azjax.plots.plot_run`; mistakes.png with
      mistakes.png                 `solver_every`)
    tensorboard/                   TensorBoard's events, when asked for
    eval.md, matches.jsonl         evaluations made after training (`azjax evaluate`), with
      ladder.png, progress.png     their plots and the run's measured strength (strength.json,
      strength.json                `azjax.evaluate.strength`)
    final.json                     a sweep's run: what the sweep's summary reads of it
    probe/, export/                `azjax probe` and `azjax export`'s default outputs

The rules: a new run is refused where a run is (`check_run_dir`), a resumed one must have the
saved settings (only its budget may change), and `--overwrite` removes exactly what training
wrote (`clear_run`), leaving evaluations and probes. Committed runs under `results/` are
written to only when named as the output (`in_committed_results`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any, Callable

# AlphaZero's settings file is azjax.config's (which reads and writes it and imports nothing of
# runs); every other learner's is `<learner>.json` (`settings_file`).
from azjax.config.files import CONFIG_FILE as CONFIG

METRICS_JSONL = "metrics.jsonl"
METRICS_CSV = "metrics.csv"
METRICS_FILES = (METRICS_JSONL, METRICS_CSV)
# The exploratory runs of results/efficiency keep their metrics compressed (a 10th of the size):
# records that nobody trains on again, read by the same readers (`metrics_file`).
METRICS_RECORD = METRICS_JSONL + ".gz"
CHECKPOINTS = "checkpoints"
MODEL = "model"
MODELS = "models"
LOSSES_PLOT, WINRATE_PLOT, MISTAKES_PLOT = "losses.png", "winrate.png", "mistakes.png"
PLOTS = (LOSSES_PLOT, WINRATE_PLOT, MISTAKES_PLOT)
TENSORBOARD = "tensorboard"
EVAL_TABLE = "eval.md"
MATCHES = "matches.jsonl"
PROGRESS_PLOT = "progress.png"  # `azjax evaluate --progress`: Elo over training
STRENGTH = "strength.json"
SWEEP_RESULT = "final.json"
PROBE, EXPORT = "probe", "export"


def ladder_plot(engine: str = "azjax") -> str:
  """The plot of `azjax evaluate --ladder` against `engine`'s rollout MCTS: ladder.png for
  azjax's own, ladder_<engine>.png for another (openspiel)."""
  return "ladder.png" if engine == "azjax" else f"ladder_{engine}.png"

# What training writes besides the settings file: a new run is refused where any of it is (a
# directory counts when it is not empty).
_TRAINED = (*METRICS_FILES, METRICS_RECORD, MODEL, MODELS, CHECKPOINTS)
# Everything else training writes, also removed by `--overwrite`.
_OUTPUTS = (*PLOTS, TENSORBOARD)


def metrics_file(run_dir: str | os.PathLike) -> Path:
  """The run's metrics: `metrics.jsonl`, or a finished record's `metrics.jsonl.gz` where only
  that exists (`azjax.files.read_jsonl` reads either)."""
  path = Path(run_dir) / METRICS_JSONL
  record = Path(run_dir) / METRICS_RECORD
  return record if record.exists() and not path.exists() else path


def settings_file(learner: str) -> str:
  """The settings file of a learner's runs: config.json for AlphaZero (the first learner, whose
  name the file does not carry), `<learner>.json` for the others (TD-Leaf: tdleaf.json)."""
  return CONFIG if learner == "alphazero" else f"{learner}.json"


def model_path(run_dir: str | os.PathLike, step: int | None = None) -> Path:
  """The final network's directory (`model/`), or the snapshot `models/<step>`."""
  root = Path(run_dir).absolute()
  return root / MODEL if step is None else root / MODELS / str(int(step))


def has_checkpoint(run_dir: str | os.PathLike) -> bool:
  """Whether `run_dir/checkpoints` holds a step (a directory named by a number)."""
  checkpoints = Path(run_dir) / CHECKPOINTS
  return checkpoints.is_dir() and any(p.is_dir() and p.name.isdigit()
                                      for p in checkpoints.iterdir())


def run_files(run_dir: str | os.PathLike, settings: str = CONFIG) -> list[str]:
  """The files of a run present in `run_dir` (`settings`, config.json, metrics, networks,
  checkpoints): empty when it holds no run."""
  run_dir = Path(run_dir)
  found = []
  for name in dict.fromkeys((settings, CONFIG, *_TRAINED)):
    path = run_dir / name
    if path.is_file() or (path.is_dir() and any(path.iterdir())):
      found.append(name)
  return found


def check_run_dir(run_dir: str | os.PathLike, config: Any, *, resume: bool = False,
                  overwrite: bool = False, settings: str = CONFIG,
                  saved: Callable[[Path], Any] | None = None,
                  budget: tuple[str, ...] = ("minutes", "iterations")) -> None:
  """Raises (having written nothing) unless `run_dir` may take this run: a new run needs a
  directory that holds no run (or `overwrite`); a resumed one, the same settings as saved
  (`saved(run_dir)`, a dataclass like `config`; only the `budget` fields may change).

  A resume with no checkpoint starts over (the run stopped before its first one), unless the
  directory holds a network (`model/`, `models/`): a finished or committed run, which cannot be
  continued and must not be replaced.

  Raises:
    FileNotFoundError: `resume` where there is no settings file.
    ValueError: any other refusal, saying what to do instead.
  """
  run_dir = Path(run_dir)
  if resume and overwrite:
    raise ValueError("--resume continues the run in a directory and --overwrite replaces it: "
                     "give one of them")
  if resume:
    if not (run_dir / settings).is_file():
      raise FileNotFoundError(f"--resume: {run_dir} holds no run to continue (no {settings})")
    before = saved(run_dir) if saved is not None else None
    diff = {} if before is None else {
        k: (getattr(before, k), getattr(config, k)) for k in dataclasses.asdict(config)
        if getattr(before, k) != getattr(config, k) and k not in budget}
    if diff:
      raise ValueError(f"--resume: the config differs from {run_dir}/{settings}: "
                       + ", ".join(f"{k}: saved {a!r}, now {b!r}" for k, (a, b) in diff.items()))
    networks = [name for name in (MODEL, MODELS) if name in run_files(run_dir, settings)]
    if not has_checkpoint(run_dir) and networks:
      # Starting such a run over would replace its network and drop its metrics.
      raise ValueError(f"--resume: {run_dir} holds a trained network ({', '.join(networks)}) "
                       "but no checkpoint to continue from; start a new run, e.g. with "
                       f"--init-from {run_dir} to begin from its network")
    return
  held = run_files(run_dir, settings)
  if held and not overwrite:
    raise ValueError(f"{run_dir} already holds a run ({', '.join(held)}): pass --resume to "
                     "continue it, --overwrite to replace it, or leave out --run-dir to start "
                     "a new run in a new directory")


def clear_run(run_dir: str | os.PathLike, settings: str = CONFIG) -> list[str]:
  """Removes what a training run wrote to `run_dir` (its settings, metrics, networks,
  checkpoints, plots, TensorBoard events; not eval.md, probe/ or export/); returns the names."""
  removed = []
  for name in dict.fromkeys((settings, CONFIG, *_TRAINED, *_OUTPUTS)):
    path = Path(run_dir) / name
    if path.is_dir():
      shutil.rmtree(path)
    elif path.exists():
      path.unlink()
    else:
      continue
    removed.append(name)
  return removed


def committed_results_dirs() -> list[Path]:
  """The results/ directories of committed runs: the repository's, and ./results."""
  return [Path(__file__).resolve().parents[2] / "results", Path.cwd().resolve() / "results"]


def in_committed_results(path: str | os.PathLike) -> bool:
  """Whether `path` lies in a committed results/ directory, which commands write to only when
  it is named as their output (`--out`, `--run-dir` with `--resume` or `--overwrite`)."""
  path = Path(path).resolve()
  return any(path == root or root in path.parents for root in committed_results_dirs())
