"""Run configuration: one flat frozen dataclass, named presets, and `key=value` overrides.

A flat config keeps overrides short (`--set learning_rate=3e-4`) and lets a sweep name any
field. Everything is checked by `Config.validate()` before anything compiles.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any, Iterable

import jax

from azjax.nets import NetConfig
from azjax.search import SearchConfig


@dataclasses.dataclass(frozen=True)
class Config:
  """Everything a training run depends on. Defaults are a tiny tic-tac-toe run."""

  # Game.
  game: str = "tic_tac_toe"
  rows: int = 0  # Breakthrough board size; 0 keeps the game's default.
  cols: int = 0
  observation: str = "mover"  # Breakthrough: "mover" or "thesis".
  size: int = 0  # Slider's board side (4..12); 0 keeps the game's default (5).
  obstacles: str = ""  # Slider's blocks: random, none, or squares "c3,d4"; "" = the default.
  # Network (see azjax.nets.NetConfig).
  net: str = "resnet"  # resnet | se_resnet | mlp | cnn
  channels: int = 32
  blocks: int = 2
  hidden: int = 64
  value_hidden: int = 32
  policy_head: str = "dense"
  compute_dtype: str = "float32"  # or "bfloat16" (parameters stay float32)
  conv_impl: str = "xla"  # or "matmul" (same network; see azjax.nets.layers.MatmulConv)
  # Search (see azjax.search.SearchConfig).
  search: str = "gumbel"  # gumbel | puct
  simulations: int = 16
  max_num_considered_actions: int = 16
  gumbel_scale: float = 1.0
  dirichlet_alpha: float = 0.3
  dirichlet_fraction: float = 0.25
  pb_c_init: float = 1.25
  temperature: float = 1.0
  temperature_moves: int = 0
  # Self-play: `selfplay_batch` games step together, `selfplay_steps` moves per iteration.
  selfplay_batch: int = 64
  selfplay_steps: int = 16
  # Replay buffer (positions); a multiple of selfplay_batch.
  buffer_size: int = 8192
  min_buffer: int = 256  # positions with known outcomes before SGD starts
  # Training.
  train_batch: int = 128
  sgd_steps: int = 8  # SGD steps per iteration
  optimizer: str = "adamw"  # adamw | adam | sgd
  learning_rate: float = 1e-3
  lr_schedule: str = "constant"  # constant | cosine (over `iterations`)
  warmup_steps: int = 0
  momentum: float = 0.9  # sgd only
  weight_decay: float = 1e-4  # decoupled (adamw) or L2 in the loss (adam, sgd)
  value_weight: float = 1.0
  max_grad_norm: float = 1.0  # 0 disables clipping
  # Gating (AlphaGo Zero, the Breakthrough thesis): self-play uses the best network so far; after
  # each iteration's SGD the trained network plays it `gating_games` games and replaces it only
  # with a score above `gating_threshold`. "policy" sampling from the raw policies, or "search"
  # (Gumbel search with noise, `eval_simulations`).
  gating: bool = False
  gating_games: int = 32
  gating_threshold: float = 0.55
  gating_player: str = "policy"
  # Outer loop.
  iterations: int = 100  # upper bound; `minutes` may end the run earlier
  minutes: float = 0.0  # wall-clock budget for training; 0 = no limit
  eval_every: int = 10  # iterations between evaluations; 0 = only at the end
  eval_games: int = 64  # games per opponent (half with each colour)
  eval_simulations: int = 16  # the trained agent's search during evaluation
  eval_mcts_simulations: int = 64  # the rollout-MCTS opponent's simulations
  checkpoint_every: int = 10  # iterations between checkpoints (also at the end and on Ctrl-C)
  seed: int = 0
  # Learning efficiency (docs/efficiency.md compares them at equal CPU time).
  augment: bool = False  # train on each sample under a random board symmetry of the game
  value_target_mix: float = 0.0  # value target: (1 - m) * game outcome + m * search root value
  # Playout cap randomisation (KataGo): with cheap_simulations > 0, a random fraction
  # full_search_prob of the moves is searched with `simulations` and used as policy targets;
  # the others get a cheap search of cheap_simulations and train the value only.
  cheap_simulations: int = 0
  full_search_prob: float = 0.25
  # Iterations between scorings on the game's solver benchmark (mistakes against perfect play;
  # azjax.solver_benchmark; Connect Four and tic-tac-toe); 0 = never.
  solver_every: int = 0

  # -- Derived configs -----------------------------------------------------------------------------
  def game_kwargs(self) -> dict[str, Any]:
    """The game's constructor options: the fields its class names in `config_options`
    (Breakthrough: rows, cols, observation), except those left at 0 (the game's default)."""
    from azjax import games  # Local import: games import nothing from here.

    options = games.game_class(self.game).config_options
    names = options if isinstance(options, dict) else {key: key for key in options}
    return {arg: getattr(self, key) for key, arg in names.items()
            if getattr(self, key) not in (0, "")}

  def net_config(self) -> NetConfig:
    return NetConfig(kind=self.net, channels=self.channels, blocks=self.blocks,
                     hidden=self.hidden, value_hidden=self.value_hidden,
                     policy_head=self.policy_head, dtype=self.compute_dtype,
                     conv_impl=self.conv_impl)

  def search_config(self, *, evaluation: bool = False) -> SearchConfig:
    """The self-play search, or (`evaluation=True`) a noiseless one with `eval_simulations`."""
    if evaluation:
      return SearchConfig(algorithm=self.search, simulations=self.eval_simulations,
                          max_num_considered_actions=self.max_num_considered_actions,
                          gumbel_scale=0.0, dirichlet_fraction=0.0, pb_c_init=self.pb_c_init,
                          temperature_moves=0)
    return SearchConfig(algorithm=self.search, simulations=self.simulations,
                        max_num_considered_actions=self.max_num_considered_actions,
                        gumbel_scale=self.gumbel_scale, dirichlet_alpha=self.dirichlet_alpha,
                        dirichlet_fraction=self.dirichlet_fraction, pb_c_init=self.pb_c_init,
                        temperature=self.temperature, temperature_moves=self.temperature_moves)

  def cheap_search_config(self) -> SearchConfig | None:
    """Playout cap randomisation's cheap self-play search (None when it is off)."""
    if not self.cheap_simulations:
      return None
    return dataclasses.replace(
        self.search_config(), simulations=self.cheap_simulations,
        max_num_considered_actions=min(self.max_num_considered_actions, self.cheap_simulations))

  # -- Checks --------------------------------------------------------------------------------------
  def validate(self, num_devices: int = 1) -> "Config":
    """Raises ValueError naming the first impossible value; returns self."""
    from azjax import games  # Local import: games import nothing from here.

    def need(cond: bool, key: str, why: str) -> None:
      if not cond:
        raise ValueError(f"config {key}={getattr(self, key)!r}: {why}")

    need(self.game in games.GAMES, "game", f"unknown game; available: {', '.join(games.GAMES)}")
    # The game options a run may set are those the game's class names (`config_options`).
    options = games.game_class(self.game).config_options
    taking = lambda key: ", ".join(  # noqa: E731
        g for g in games.GAMES if key in games.game_class(g).config_options)
    # A board size: files are the letters a..z, and one rank or file leaves no game.
    for key in ("rows", "cols"):
      need(getattr(self, key) == 0 or 2 <= getattr(self, key) <= 26, key,
           "must be 0 (the game's default) or in 2..26")
      need(getattr(self, key) == 0 or key in options, key,
           f"only {taking(key)} takes a board size; {self.game} has one size (leave it 0)")
    for key in ("size", "obstacles"):
      need(getattr(self, key) in (0, "") or key in options, key,
           f"only {taking(key)} takes it; leave it unset for {self.game}")
    need(self.observation in ("mover", "thesis"), "observation", "use 'mover' or 'thesis'")
    need(self.observation == "mover" or "observation" in options, "observation",
         f"the thesis encoding exists for {taking('observation')} only")
    for key in ("simulations", "selfplay_batch", "selfplay_steps", "buffer_size", "train_batch",
                "iterations", "eval_simulations", "eval_mcts_simulations", "channels", "blocks",
                "hidden", "value_hidden"):
      need(getattr(self, key) >= 1, key, "must be >= 1")
    for key in ("sgd_steps", "min_buffer", "eval_every", "checkpoint_every", "warmup_steps",
                "temperature_moves", "eval_games"):
      need(getattr(self, key) >= 0, key, "must be >= 0")
    # Every float field, present and future: inf and nan pass most comparisons below
    # (inf > 0, and nan fails them with a misleading reason) and are not JSON.
    for field in dataclasses.fields(self):
      if isinstance(field.default, float):
        need(math.isfinite(getattr(self, field.name)), field.name, "must be a finite number")
    # The signs and ranges that make sense; a new float field that may not be negative adds a
    # line here (one whose default is a float is already checked for finiteness above).
    at_least_0, above_0, fraction = ((lambda v: v >= 0, "must be >= 0"),
                                     (lambda v: v > 0, "must be > 0"),
                                     (lambda v: 0 <= v <= 1, "must be in [0, 1]"))
    float_ranges = {
        "minutes": at_least_0, "learning_rate": above_0, "weight_decay": at_least_0,
        "value_weight": at_least_0, "max_grad_norm": at_least_0, "gumbel_scale": at_least_0,
        "dirichlet_alpha": above_0, "dirichlet_fraction": fraction, "pb_c_init": at_least_0,
        "temperature": above_0, "momentum": (lambda v: 0 <= v < 1, "must be in [0, 1)"),
        "gating_threshold": fraction}
    for key, (ok, why) in float_ranges.items():
      need(ok(getattr(self, key)), key, why)
    need(self.optimizer in ("adamw", "adam", "sgd"), "optimizer", "use adamw, adam or sgd")
    need(self.gating_games >= 2 and self.gating_games % 2 == 0, "gating_games",
         "must be even and >= 2 (half the games with each colour)")
    need(self.gating_player in ("policy", "search"), "gating_player", "use policy or search")
    need(self.lr_schedule in ("constant", "cosine"), "lr_schedule", "use constant or cosine")
    need(self.eval_games % 2 == 0, "eval_games", "must be even (half the games with each colour)")
    need(self.buffer_size % self.selfplay_batch == 0, "buffer_size",
         f"must be a multiple of selfplay_batch={self.selfplay_batch}")
    need(self.buffer_size >= self.train_batch, "buffer_size",
         f"must hold at least one training batch (train_batch={self.train_batch})")
    need(self.min_buffer <= self.buffer_size, "min_buffer", "must be <= buffer_size")
    need(self.selfplay_batch % num_devices == 0, "selfplay_batch",
         f"must be divisible by the number of devices ({num_devices})")
    need(self.train_batch % num_devices == 0, "train_batch",
         f"must be divisible by the number of devices ({num_devices})")
    need(0 <= self.value_target_mix <= 1, "value_target_mix", "must be in [0, 1]")
    need(self.cheap_simulations >= 0, "cheap_simulations", "must be >= 0 (0 = off)")
    need(self.cheap_simulations < self.simulations, "cheap_simulations",
         f"must be below simulations={self.simulations} (a cheap search)")
    need(0 < self.full_search_prob <= 1, "full_search_prob", "must be in (0, 1]")
    need(self.solver_every >= 0, "solver_every", "must be >= 0 (0 = never)")
    self.net_config().validate()
    self.search_config().validate()
    return self

  def to_json(self) -> str:
    return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)

  @classmethod
  def from_dict(cls, values: dict[str, Any]) -> "Config":
    return override(cls(), values.items())


_FIELDS = {f.name: f for f in dataclasses.fields(Config)}


def _parse_value(key: str, raw: Any, default: Any) -> Any:
  """Converts `raw` (a string from the command line, or a value) to the type of `default`."""
  kind = type(default)
  if isinstance(raw, kind) and not (kind is int and isinstance(raw, bool)):
    return raw
  if kind is float and isinstance(raw, int) and not isinstance(raw, bool):
    return float(raw)
  if not isinstance(raw, str):
    raise ValueError(f"config {key}: expected {kind.__name__}, got {raw!r}")
  try:
    if kind is bool:
      if raw.lower() not in ("true", "false", "1", "0"):
        raise ValueError
      return raw.lower() in ("true", "1")
    if kind is int:
      return int(raw)
    if kind is float:
      return float(raw)
    return raw
  except ValueError:
    raise ValueError(f"config {key}: expected {kind.__name__}, got {raw!r}") from None


def override(config: Config, items: Iterable[tuple[str, Any]]) -> Config:
  """Returns `config` with `(key, value)` pairs applied; values may be strings to parse.

  Raises:
    ValueError: for an unknown key (with the closest names) or a value of the wrong type.
  """
  changes = {}
  for key, raw in items:
    if key not in _FIELDS:
      import difflib
      close = difflib.get_close_matches(key, _FIELDS, n=3)
      hint = f"; did you mean {', '.join(close)}?" if close else ""
      raise ValueError(f"config: unknown key {key!r}{hint}")
    changes[key] = _parse_value(key, raw, getattr(config, key))
  return dataclasses.replace(config, **changes)


def parse_overrides(pairs: Iterable[str]) -> list[tuple[str, str]]:
  """Parses `["key=value", ...]` into pairs, with a clear error for a missing `=`."""
  out = []
  for pair in pairs:
    if "=" not in pair:
      raise ValueError(f"config override {pair!r}: expected key=value")
    key, value = pair.split("=", 1)
    out.append((key.strip(), value.strip()))
  return out


# -- A run directory's config.json ---------------------------------------------------------------

CONFIG_FILE = "config.json"


def write_atomic(path: str | os.PathLike, text: str) -> Path:
  """Writes `text` to `path` through a temporary file and a rename, so that a crash, a full
  disk or a reader at the same moment sees the old file or the new one, never half of one."""
  path = Path(path)
  tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
  try:
    with open(tmp, "w") as f:
      f.write(text)
      f.flush()
      os.fsync(f.fileno())
    os.replace(tmp, path)
  finally:
    tmp.unlink(missing_ok=True)
  return path


def write_config(run_dir: str | os.PathLike, config: Config) -> None:
  """Writes `run_dir/config.json` atomically; a non-finite float is refused (not JSON)."""
  path = Path(run_dir)
  path.mkdir(parents=True, exist_ok=True)
  try:
    text = json.dumps(dataclasses.asdict(config), indent=2, sort_keys=True, allow_nan=False)
  except ValueError:
    raise ValueError(f"{path / CONFIG_FILE}: a value is not a finite number; "
                     "run config.validate() first") from None
  write_atomic(path / CONFIG_FILE, text + "\n")


def _no_constant(name: str) -> float:
  raise ValueError(f"{name} is not a finite number")


def read_config(run_dir: str | os.PathLike) -> Config:
  """The config a run directory was trained with.

  Raises:
    FileNotFoundError: `run_dir/config.json` does not exist.
    ValueError: it cannot be read or parsed, or holds an unknown key or a value of the wrong
      type; the message names the file.
  """
  path = Path(run_dir) / CONFIG_FILE
  if not path.exists():
    raise FileNotFoundError(f"{path} does not exist; is {run_dir} an azjax run directory?")
  try:
    values = json.loads(path.read_text(), parse_constant=_no_constant)
  except OSError as err:
    raise ValueError(f"{path}: cannot read it ({err.strerror or err})") from None
  except ValueError as err:  # Also UnicodeDecodeError and JSONDecodeError.
    raise ValueError(f"{path}: not a valid config file ({err})") from None
  if not isinstance(values, dict):
    raise ValueError(f"{path}: not a valid config file (a JSON object of settings expected)")
  try:
    return Config.from_dict(values)
  except ValueError as err:
    raise ValueError(f"{path}: {err}") from None


# -- Presets -------------------------------------------------------------------------------------

PRESETS: dict[str, Config] = {
    # A smoke-size run, for tests.
    "tiny": Config(),
    "tic_tac_toe": Config(
        game="tic_tac_toe", net="mlp", hidden=64, blocks=2, simulations=32, selfplay_batch=128,
        selfplay_steps=9, buffer_size=16384, train_batch=256, sgd_steps=8, iterations=300,
        eval_every=50, eval_games=100, eval_simulations=32, eval_mcts_simulations=100),
    # Connect Four on 2 CPU cores. Symmetry augmentation, value targets half outcome and half
    # search value, and 32 SGD steps an iteration (replay ratio 4) halved its mistakes against
    # perfect play at equal training time (docs/efficiency.md); solver_every draws that curve.
    "connect_four": Config(
        game="connect_four", net="resnet", channels=32, blocks=3, simulations=16,
        selfplay_batch=128, selfplay_steps=16, buffer_size=65536, train_batch=256,
        sgd_steps=32, augment=True, value_target_mix=0.5, iterations=400, eval_every=20,
        eval_games=64, eval_simulations=32, eval_mcts_simulations=200, solver_every=50,
        checkpoint_every=50),
    # Connect Four on one GPU: ResNet 128x6 in bfloat16, 1024 games at a time.
    # The GPU presets check against few rollout-MCTS simulations during training: those
    # simulations run one after another, each a whole random game, which is thousands of tiny
    # sequential steps on an accelerator (checkers' first evaluation, 128 games against
    # MCTS-200, outlasted a whole 8-minute budget on an H100 shared with another run).
    # `experiments.evaluate` plays the strong opponents.
    "connect_four_gpu": Config(
        game="connect_four", net="resnet", channels=128, blocks=6, compute_dtype="bfloat16",
        simulations=32, selfplay_batch=1024, selfplay_steps=32, buffer_size=1048576,
        min_buffer=32768, train_batch=4096, sgd_steps=32, learning_rate=2e-3,
        iterations=100000, minutes=9.0, eval_every=50, eval_games=128, eval_simulations=32,
        eval_mcts_simulations=200, checkpoint_every=50),
    # Breakthrough 6x6 on 2 CPU cores within about 15 minutes.
    "breakthrough_cpu": Config(
        game="breakthrough", rows=6, cols=6, net="resnet", channels=32, blocks=3,
        policy_head="conv", simulations=16, selfplay_batch=128, selfplay_steps=16,
        buffer_size=65536, min_buffer=1024, train_batch=256, sgd_steps=16, learning_rate=2e-3,
        iterations=10000, minutes=15.0, eval_every=75, eval_games=64, eval_simulations=32,
        eval_mcts_simulations=200, checkpoint_every=25),
    # Breakthrough 8x8 on one GPU: the pgx AlphaZero example's network and search.
    "breakthrough_gpu": Config(
        game="breakthrough", rows=8, cols=8, net="resnet", channels=128, blocks=6,
        policy_head="conv", compute_dtype="bfloat16", simulations=32, selfplay_batch=1024,
        selfplay_steps=32, buffer_size=1048576, min_buffer=32768, train_batch=4096,
        sgd_steps=32, learning_rate=2e-3, iterations=100000, minutes=9.0, eval_every=20,
        eval_games=128, eval_simulations=32, eval_mcts_simulations=200, checkpoint_every=10),
    # Slider 5x5 with the course's random blocks, on 2 CPU cores (azjax.cli.slider compares it
    # with TD-Leaf). No training-time evaluation: rollout MCTS games can last thousands of
    # plies here; the comparison plays alpha-beta with the hand-written evaluation instead.
    "slider_cpu": Config(
        game="slider", size=5, obstacles="random", net="resnet", channels=32, blocks=3,
        simulations=16, selfplay_batch=128, selfplay_steps=16, buffer_size=65536,
        train_batch=256, sgd_steps=32, value_target_mix=0.5, iterations=100000, minutes=60.0,
        eval_every=0, checkpoint_every=25),
    "checkers_cpu": Config(
        game="checkers", net="resnet", channels=32, blocks=3, policy_head="conv",
        simulations=16, selfplay_batch=128, selfplay_steps=16, buffer_size=65536,
        min_buffer=1024, train_batch=256, sgd_steps=16, iterations=10000, minutes=15.0,
        eval_every=20, eval_games=64, eval_simulations=32, eval_mcts_simulations=100),
    "checkers_gpu": Config(
        game="checkers", net="resnet", channels=128, blocks=6, policy_head="conv",
        compute_dtype="bfloat16", simulations=32, selfplay_batch=1024, selfplay_steps=32,
        buffer_size=1048576, min_buffer=32768, train_batch=4096, sgd_steps=32,
        learning_rate=2e-3, iterations=100000, minutes=9.0, eval_every=50, eval_games=64,
        eval_simulations=32, eval_mcts_simulations=50, checkpoint_every=50),
}


def has_accelerator() -> bool:
  return jax.default_backend() in ("gpu", "tpu")


def resolve_preset_name(name: str, game: str | None = None) -> str:
  """"auto" becomes `<game>_gpu` with an accelerator, else `<game>_cpu` (or just `<game>`)."""
  if name != "auto":
    return name
  if game is None:
    raise ValueError("preset 'auto' needs a game")
  suffix = "gpu" if has_accelerator() else "cpu"
  return f"{game}_{suffix}" if f"{game}_{suffix}" in PRESETS else game


def preset(name: str, game: str | None = None) -> Config:
  """The preset `name` (see `resolve_preset_name` for "auto")."""
  name = resolve_preset_name(name, game)
  if name not in PRESETS:
    raise ValueError(f"unknown preset {name!r}; available: auto, {', '.join(PRESETS)}")
  return PRESETS[name]
