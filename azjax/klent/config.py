"""KLENT's settings, declared once by section with `azjax.config.Section` (as the AlphaZero
`Config`'s are), so each carries its help, unit and range and `validate` checks them all.

Defaults. The algorithm's own (`alpha`, `beta`, `td_lambda`, `discount`) are the regularised
update and the lambda-returns of Ota et al. 2026 (arXiv 2602.10894); see docs/klent.md for
which of their values are the paper's and which are ours. The sizes (games, plies, buffer,
batch, network) are scaled to a 2-core CPU and a small board, as the AlphaZero presets are;
the paper trains pgx games on GPUs with far larger batches.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from azjax import config as config_lib
from azjax import games, nets
from azjax.config import Config, checks
from azjax.config.fields import (
  ABOVE_0,
  AT_LEAST_0,
  AT_LEAST_1,
  FRACTION,
  PROBABILITY,
  ConfigError,
  Section,
)
from azjax.runs import layout

CONFIG_FILE = layout.settings_file("klent")  # marks a KLENT run directory

_GAME = Section("game", "Game", "Which game, and its options (`game_options`, those its class "
                "declares; `--set rows=5` sets one).")
_NETWORK = Section(
    "network", "Networks", "Two `azjax.nets` networks of this kind: the policy network "
    "(logits and a value head: the network that is played, and searched, like any other) and "
    "the Q network (its `A` logits read as action values through tanh; its value head unused).")
_SELFPLAY = Section(
    "selfplay", "Self-play (no search)",
    "Each iteration plays `selfplay_steps` plies in each of `selfplay_batch` games with moves "
    "drawn from the policy network; a finished game's slot starts a new game at once, and the "
    "games running at the end continue in the next iteration.")
_KLENT = Section(
    "klent", "KLENT's update", "The regularised policy target "
    "pi' ~ pi^(beta/(alpha+beta)) exp(Q/(alpha+beta)) and the lambda-returns (docs/klent.md).")
_TRAINING = Section("training", "Training", "SGD on samples of the device buffer.")
_RUN = Section("run", "Run", "Seed and run length.")
_EVALUATION = Section(
    "evaluation", "Evaluation during training",
    "As an AlphaZero run's (`azjax.config`'s section of that name): the policy network with "
    "the noiseless evaluation search against uniform random and rollout MCTS, and on solved "
    "games its mistakes against perfect play, raw and searched.")


@dataclasses.dataclass(frozen=True)
class KlentConfig:
  """Everything a KLENT run depends on (each field's meaning is in its declaration)."""

  game: str = _GAME("tic_tac_toe", "the game to train", choices=games.GAMES)
  game_options: dict = _GAME(
      {}, "the game's constructor options by name (`games.make(game, **game_options)`), e.g. "
      "{rows = 5, cols = 5}")

  net: str = _NETWORK("mlp", "both networks' kind", choices=nets.KINDS)
  channels: int = _NETWORK(32, "convolution channels (resnet, cnn)", check=AT_LEAST_1)
  blocks: int = _NETWORK(2, "residual blocks / conv layers / extra MLP layers",
                         check=AT_LEAST_1)
  hidden: int = _NETWORK(64, "MLP width", check=AT_LEAST_1)
  value_hidden: int = _NETWORK(32, "width of the value head's hidden layer", check=AT_LEAST_1)

  selfplay_batch: int = _SELFPLAY(64, "games played side by side", unit="games",
                                  check=AT_LEAST_1)
  selfplay_steps: int = _SELFPLAY(16, "plies each game advances per iteration", unit="plies",
                                  check=AT_LEAST_1)
  buffer_size: int = _SELFPLAY(8192, "device buffer capacity (the newest samples overwrite "
                               "the oldest)", unit="positions", check=AT_LEAST_1)
  min_buffer: int = _SELFPLAY(512, "samples in the buffer before SGD starts",
                              unit="positions", check=AT_LEAST_0)

  alpha: float = _KLENT(0.1, "entropy weight: the target's temperature when beta = 0",
                        check=AT_LEAST_0)
  beta: float = _KLENT(1.0, "reverse-KL weight: how far one update may move from the "
                       "previous policy (larger: smaller steps)", check=AT_LEAST_0)
  td_lambda: float = _KLENT(0.95, "lambda of the lambda-returns (0: one-step TD, 1: the "
                            "game's result)", check=FRACTION)
  discount: float = _KLENT(1.0, "discount per ply (board games: 1)", check=PROBABILITY)

  train_batch: int = _TRAINING(128, "samples per SGD step", unit="positions",
                               check=AT_LEAST_1)
  sgd_steps: int = _TRAINING(8, "SGD steps per iteration", unit="steps", check=AT_LEAST_0)
  learning_rate: float = _TRAINING(1e-3, "Adam(W)'s learning rate", check=ABOVE_0)
  weight_decay: float = _TRAINING(1e-4, "AdamW's decoupled weight decay", check=AT_LEAST_0)
  value_weight: float = _TRAINING(1.0, "weight of the value head's squared error",
                                  check=AT_LEAST_0)
  q_weight: float = _TRAINING(1.0, "weight of the Q network's squared error",
                              check=AT_LEAST_0)

  seed: int = _RUN(0, "the run's seed", check=AT_LEAST_0)
  iterations: int = _RUN(1_000_000, "stop after this many iterations", unit="iterations",
                         check=AT_LEAST_1)
  minutes: float = _RUN(60.0, "stop after this many minutes of training (0: no limit)",
                        unit="minutes", check=AT_LEAST_0)
  checkpoint_every: int = _RUN(25, "iterations between checkpoints", unit="iterations",
                               check=AT_LEAST_1)

  eval_every: int = _EVALUATION(10, "iterations between evaluations; 0 = only at the end",
                                unit="iterations", check=AT_LEAST_0)
  eval_games: int = _EVALUATION(64, "games against each opponent, half with each colour; "
                                "even; 0 = none", unit="games", check=AT_LEAST_0)
  eval_simulations: int = _EVALUATION(
      32, "simulations of the evaluation search over the policy network (a search-free "
      "learner can still be searched at play time)", unit="simulations", check=AT_LEAST_1)
  eval_mcts_simulations: int = _EVALUATION(64, "simulations of the rollout-MCTS opponent",
                                           unit="simulations", check=AT_LEAST_1)
  solver_every: int = _EVALUATION(
      0, "iterations between scorings on the game's solver benchmark (Connect Four, "
      "tic-tac-toe); 0 = never", unit="iterations", check=AT_LEAST_0)
  solver_positions: str = _EVALUATION(
      "", "the labelled positions solver_every scores on: '' the game's default set, a "
      "packaged set's name ('strong') or a .npz file")

  def __hash__(self) -> int:  # A dict field (`game_options`) has no hash of its own.
    return hash(json.dumps(dataclasses.asdict(self), sort_keys=True))

  def validate(self) -> "KlentConfig":
    """Returns self, or raises `ConfigError` naming the bad field."""
    def need(ok: bool, key: str, why: str) -> None:
      if not ok:
        raise ConfigError(f"klent {key}={getattr(self, key)!r}: {why}", key)

    checks.check_game(self, need)
    checks.check_declared(self, need)
    need(self.alpha + self.beta > 0, "alpha", f"alpha and beta={self.beta!r} cannot both be 0 "
         "(the target would be the argmax of Q, which the closed form does not give)")
    need(self.buffer_size >= self.train_batch, "buffer_size",
         f"must hold one training batch (train_batch={self.train_batch})")
    need(self.min_buffer <= self.buffer_size, "min_buffer", "must be <= buffer_size")
    need(self.eval_games % 2 == 0, "eval_games", "must be even (half the games with each "
         "colour)")
    return self

  def player_config(self) -> Config:
    """The AlphaZero `Config` that describes this run's network and its evaluation player:
    what `azjax.agents.load`, the evaluators and the solver benchmark read (its config.json).
    Its self-play and training fields are the AlphaZero defaults and mean nothing here."""
    return Config(
        game=self.game, game_options=self.game_options, net=self.net, channels=self.channels,
        blocks=self.blocks, hidden=self.hidden, value_hidden=self.value_hidden,
        iterations=self.iterations, minutes=self.minutes,
        checkpoint_every=self.checkpoint_every, seed=self.seed, eval_every=self.eval_every,
        eval_games=self.eval_games, eval_simulations=self.eval_simulations,
        eval_mcts_simulations=self.eval_mcts_simulations,
        solver_every=self.solver_every, solver_positions=self.solver_positions).validate()

  def override(self, pairs: list[str]) -> "KlentConfig":
    """This config with `key=value` settings over it, parsed and checked by the config system
    (`azjax.config.override`: plain or dotted keys, the nearest name for an unknown one), then
    validated.

    Raises:
      ValueError: an unknown key, a value of the wrong type, or a value `validate` refuses.
    """
    return config_lib.override(self, config_lib.parse_overrides(pairs)).validate()

  def describe(self) -> str:
    """Every setting, by section, with its value and help, as the TOML `--config` reads
    (`azjax klent --print-config`)."""
    return config_lib.to_toml(self)

  def net_config(self) -> nets.NetConfig:
    return nets.NetConfig(kind=self.net, channels=self.channels, blocks=self.blocks,
                          hidden=self.hidden, value_hidden=self.value_hidden)

  def make_env(self):
    return games.make(self.game, **self.game_options)

  def save(self, run_dir: str | Path) -> None:
    path = Path(run_dir) / CONFIG_FILE
    path.write_text(json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n")

  @classmethod
  def load(cls, run_dir: str | Path) -> "KlentConfig":
    """The settings a run saved; those of older versions' flat game options (`rows`, `cols`)
    become `game_options` (`azjax.config.override`)."""
    values = json.loads((Path(run_dir) / CONFIG_FILE).read_text())
    known = {f.name for f in dataclasses.fields(cls)} | {"rows", "cols"}
    return config_lib.override(cls(), [(k, v) for k, v in values.items() if k in known]
                               ).validate()
