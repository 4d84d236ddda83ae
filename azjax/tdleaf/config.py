"""TD-Leaf's settings, declared once by section in the config system (`azjax.config`): the
game, the evaluation it learns, how it plays, how it learns, the run, and its scoring during
training. `--set KEY=VALUE`, `--config FILE` and `--print-config` read and write them as they do
AlphaZero's (`azjax.config.override`, `read_settings`, `to_toml`; `--set size=7` sets an
option of the game); a run keeps them in
`tdleaf.json` (`azjax.runs.layout.settings_file("tdleaf")`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from azjax import games, nets
from azjax.config import checks
from azjax.config.fields import (
  ABOVE_0,
  AT_LEAST_0,
  AT_LEAST_1,
  BELOW_1,
  FRACTION,
  ConfigError,
  Section,
  declared_fields,
)
from azjax.files import write_atomic
from azjax.games import base
from azjax.runs import layout

CONFIG_FILE = layout.settings_file("tdleaf")

_GAME = Section("game", "Game", "Which game, and its constructor's options (Slider: size, "
                "blocks); `--set size=7` sets an option of the game, `--set game.blocks=none` "
                "one whose name a setting has too.")
_EVALUATION = Section(
    "evaluation", "Evaluation", "The evaluation TD-Leaf learns: the game's features into a small "
    "MLP, a sum over the pieces' neighbourhoods (`LocalSum`), or an `azjax.nets` network's "
    "value head on the observation.")
_PLAY = Section("play", "Self-play", "Every move is alpha-beta at `depth` plies with the current "
                "evaluation; `batch` games step together for `max_plies` plies an iteration.")
_LEARNING = Section("learning", "Learning", "After the plies of an iteration, full-batch Adam "
                    "steps move every leaf evaluation toward its lambda-return.")
_RUN = Section("run", "Run length and checkpoints",
               "`--minutes` and `--iterations` on the command line set the first two.")
_SCORING = Section("scoring", "Evaluation during training",
                   "Matches against alpha-beta with the game's hand-written evaluation at the "
                   "same depth, and scorings on the game's solver benchmark.")

EVALUATIONS = ("features", "local", *nets.KINDS)


@dataclasses.dataclass(frozen=True)
class Config:
  """A TD-Leaf run. Every field's meaning is in its declaration (`azjax.config.field_help(key,
  Config)`, `--print-config`)."""

  game: str = _GAME("slider", "the game to learn", choices=games.GAMES)
  game_options: dict = _GAME({}, "the game's constructor options (`games.make(game, **options)`)")
  evaluation: str = _EVALUATION(
      "features", "features (the game's evaluation_features into an MLP), local (its "
      "evaluation_planes into LocalSum) or an azjax.nets kind on the observation",
      choices=EVALUATIONS)
  hidden: int = _EVALUATION(6, "the feature MLP's two hidden widths, or the network's width",
                            check=AT_LEAST_1)
  channels: int = _EVALUATION(32, "a convolutional trunk's channels (LocalSum: its width)",
                              check=AT_LEAST_1)
  blocks: int = _EVALUATION(2, "a trunk's blocks (LocalSum: its 3x3 convolutions, each widening "
                            "what a piece sees by one square a side)", check=AT_LEAST_0)
  # 64: the width every committed TD-Leaf network was built with (NetConfig's default before
  # its defaults became the AlphaZero config's), so their tdleaf.json files load as they are.
  value_hidden: int = _EVALUATION(64, "a network's value-head width", check=AT_LEAST_1)
  head: str = _EVALUATION("dense", "a network's heads: dense, or conv (the value pooled over "
                          "the board: one network for every board size)",
                          choices=nets.POLICY_HEADS)
  depth: int = _PLAY(3, "alpha-beta plies, in training and for the trained player",
                     unit="plies", check=AT_LEAST_1)
  batch: int = _PLAY(64, "games played at once (a finished game's slot starts a new one)",
                     unit="games", check=AT_LEAST_1)
  max_plies: int = _PLAY(200, "plies every slot plays an iteration (the games running then are "
                         "cut off and bootstrapped)", unit="plies", check=AT_LEAST_1)
  opening_moves: int = _PLAY(0, "every game starts after 0..opening_moves uniformly random "
                             "moves (not searched, not learned from)", unit="moves",
                             check=AT_LEAST_0)
  epsilon: float = _PLAY(0.05, "the probability of a random (exploratory) move", check=BELOW_1)
  versus_hand: float = _PLAY(0.0, "the share of slots whose games are against alpha-beta with "
                             "the game's hand-written evaluation, not self-play", check=FRACTION)
  td_lambda: float = _LEARNING(0.7, "lambda of the lambda-returns", check=FRACTION)
  learning_rate: float = _LEARNING(3e-3, "Adam's learning rate", check=ABOVE_0)
  sgd_steps: int = _LEARNING(4, "Adam steps (full batch) on each iteration's positions",
                             unit="steps", check=AT_LEAST_1)
  replay: int = _LEARNING(1, "the iterations whose games those steps fit (1: the newest only)",
                          unit="iterations", check=AT_LEAST_1)
  iterations: int = _RUN(1_000_000, "stop after this many iterations", unit="iterations",
                         check=AT_LEAST_1)
  minutes: float = _RUN(60.0, "stop after this many minutes of training (compiling excluded); "
                        "0: no limit", unit="minutes", check=AT_LEAST_0)
  seed: int = _RUN(0, "the random seed")
  checkpoint_every: int = _RUN(25, "iterations between checkpoints (and snapshots in "
                               "models/<iteration>)", unit="iterations", check=AT_LEAST_1)
  eval_every: int = _SCORING(25, "iterations between matches against the hand-written "
                             "evaluation; 0: none", unit="iterations", check=AT_LEAST_0)
  eval_games: int = _SCORING(64, "games of each of those matches, half with each colour",
                             unit="games", check=AT_LEAST_0)
  solver_every: int = _SCORING(0, "iterations between scorings on the game's solver benchmark "
                               "(tic-tac-toe, Connect Four); 0: none", unit="iterations",
                               check=AT_LEAST_0)

  def __hash__(self):
    return hash(json.dumps(dataclasses.asdict(self), sort_keys=True))

  def validate(self) -> "Config":
    """Returns self, or raises `ConfigError` (a ValueError) naming the bad field."""

    def need(cond: bool, key: str, why: str) -> None:
      if not cond:
        raise ConfigError(f"tdleaf {key}={getattr(self, key)!r}: {why}", key)

    checks.check_game(self, need)
    checks.check_declared(self, need)
    need(self.eval_games % 2 == 0, "eval_games", "must be even (half the games per colour)")
    return self

  def make_env(self) -> base.Game:
    return games.make(self.game, **self.game_options)

  def save(self, run_dir: str | os.PathLike) -> None:
    text = json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)
    write_atomic(Path(run_dir) / CONFIG_FILE, text + "\n")

  @classmethod
  def load(cls, run_dir: str | os.PathLike) -> "Config":
    """The settings a run saved (`tdleaf.json`); keys of older versions that are no longer
    settings are left out."""
    values = json.loads((Path(run_dir) / CONFIG_FILE).read_text())
    known = declared_fields(cls)
    return cls(**{k: v for k, v in values.items() if k in known}).validate()


def defaults(game: str) -> Config:
  """TD-Leaf's defaults for `game`: the feature MLP where the game has evaluation features
  (Slider), else an MLP value head on the observation (`evaluation="mlp"`), so that every game
  trains without a setting."""
  has_features = games.game_class(game).evaluation_features is not base.Game.evaluation_features
  return Config(game=game, evaluation="features" if has_features else "mlp")
