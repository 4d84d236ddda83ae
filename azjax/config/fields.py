"""The config's fields, declared once by section with their documentation and checks;
`Config`; the names of its keys (plain or dotted with the section) and overrides."""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Callable, Iterable, Sequence

from azjax import games, nets
from azjax.config import checks
from azjax.config.checks import ConfigError, field_choices  # noqa: F401 (the config's names)
from azjax.config.game_options import game_option, is_legacy_default, not_an_option
from azjax.nets import NetConfig
from azjax.search import ALGORITHMS, SearchConfig, for_evaluation

# The network's and the search's settings have their defaults in their own configs, once.
_NET_DEFAULTS = NetConfig()
_SEARCH_DEFAULTS = SearchConfig()

# -- Field declarations ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Check:
  """A range a number must lie in; an error says "must be <text>"."""

  text: str  # e.g. ">= 1", "in [0, 1]"
  ok: Callable[[Any], bool]


AT_LEAST_1 = Check(">= 1", lambda v: v >= 1)
AT_LEAST_0 = Check(">= 0", lambda v: v >= 0)
ABOVE_0 = Check("> 0", lambda v: v > 0)
FRACTION = Check("in [0, 1]", lambda v: 0 <= v <= 1)
PROBABILITY = Check("in (0, 1]", lambda v: 0 < v <= 1)
BELOW_1 = Check("in [0, 1)", lambda v: 0 <= v < 1)

OPTIMIZERS = ("adamw", "adam", "sgd")
LR_SCHEDULES = ("constant", "cosine")
GATING_PLAYERS = ("policy", "search")


@dataclasses.dataclass(frozen=True)
class Section:
  """A group of `Config` fields; calling it declares one field of the group.

  `section(default, help, unit=, choices=, check=, traced=)` is a `dataclasses.field` whose
  metadata is the field's documentation:

  * `help`: what the field means, in one line;
  * `unit`: what its number counts (positions, iterations, ...);
  * `choices`: the values a string field allows (checked by `Config.validate`), or a function
    returning them when asked (`field_choices`);
  * `check`: the range of a number (checked by `Config.validate`);
  * `traced`: the training iteration reads the value as a traced scalar (`azjax.train.Hyper`),
    so the runs of one vmapped sweep group may differ in it (`TRACED_KEYS`);
  * `to`: the field of the section's component config (`NetConfig`, `SearchConfig`) it sets,
    when its name there differs (`net` sets `NetConfig.kind`).
  """

  name: str  # the prefix of its keys' dotted names (`search.simulations`) and its TOML table
  title: str
  about: str = ""  # A paragraph for docs/config.md.

  def __call__(self, default: Any, help: str, *, unit: str = "",
               choices: Sequence[str] | Callable[[], Sequence[str]] = (),
               check: Check | None = None, traced: bool = False, to: str = "") -> Any:
    choices = choices if callable(choices) else tuple(choices)
    metadata = {"section": self, "help": help, "unit": unit, "choices": choices,
                "check": check, "traced": traced, "to": to}
    if isinstance(default, dict):  # A table of options (a learner's `game_options`).
      return dataclasses.field(default_factory=lambda: dict(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


_GAME = Section(
    "game", "Game", "Which game, and its options (`game_options`): those its class declares "
    "(`Game.options_spec`, listed below), each left out for the game's default. `--set rows=6` "
    "sets one (`--set game.blocks=none` where a setting has the name too).")
_NETWORK = Section("network", "Network", "The network (`azjax.nets.NetConfig`).")
_SEARCH = Section(
    "search", "Search", "The self-play search (`azjax.search.SearchConfig`): Gumbel MuZero's "
    "Sequential Halving (`gumbel`), or AlphaZero's PUCT with root Dirichlet noise (`puct`).")
_SELFPLAY = Section(
    "selfplay", "Self-play and replay buffer",
    "Each iteration plays `selfplay_steps` moves in each of `selfplay_batch` games side by side "
    "(a finished game starts again at once) and stores the positions in the replay buffer.")
_TRAINING = Section(
    "training", "Training", "After self-play, each iteration takes `sgd_steps` optimizer steps "
    "on batches sampled from the replay buffer. Samples trained per self-play position (the "
    "replay ratio) are `sgd_steps * train_batch / (selfplay_batch * selfplay_steps)`.")
_GATING = Section(
    "gating", "Gating",
    "AlphaGo Zero's gating, as in the Breakthrough thesis: self-play uses the best network so "
    "far; after each iteration's SGD the trained network plays it `gating_games` games and "
    "replaces it only with a score above `gating_threshold`.")
_RUN = Section("run", "Run length and checkpoints",
               "`--minutes` and `--iterations` on the command line set the first two.")
_EVALUATION = Section(
    "evaluation", "Evaluation during training",
    "Matches of the trained agent against uniform random play and rollout MCTS, and scorings "
    "on the game's solver benchmark; the results go to the metrics and the plots.")
_EFFICIENCY = Section(
    "efficiency", "Learning efficiency",
    "Options from the small-budget AlphaZero literature, compared at equal CPU time in "
    "[efficiency.md](efficiency.md).")


@dataclasses.dataclass(frozen=True)
class Config:
  """Everything a training run depends on. Defaults are a tiny tic-tac-toe run.

  Every field's meaning is in its declaration (`help`, `field_help(key)`); the presets are
  `PRESETS`, and docs/config.md lists both.
  """

  game: str = _GAME("tic_tac_toe", "the game to train", choices=games.GAMES)
  game_options: dict = _GAME(
      {}, "the game's constructor options by name (`games.make(game, **game_options)`), e.g. "
      "{rows = 6, cols = 6}")

  net: str = _NETWORK(_NET_DEFAULTS.kind, "the network's kind", choices=nets.KINDS, to="kind")
  channels: int = _NETWORK(
      _NET_DEFAULTS.channels, "convolution channels of the trunk (resnet, se_resnet, cnn)",
      check=AT_LEAST_1)
  blocks: int = _NETWORK(
      _NET_DEFAULTS.blocks, "residual blocks (resnet), conv layers after the stem (cnn) or "
      "hidden layers after the first (mlp)", check=AT_LEAST_1)
  hidden: int = _NETWORK(
      _NET_DEFAULTS.hidden, "width of the MLP's layers (trunk and policy head)",
      check=AT_LEAST_1)
  value_hidden: int = _NETWORK(
      _NET_DEFAULTS.value_hidden, "width of the value head's hidden layer", check=AT_LEAST_1)
  residual: bool = _NETWORK(
      _NET_DEFAULTS.residual, "mlp: each block two dense layers on a residual stream (pre-"
      "LayerNorm), so the trunk has 2 * blocks + 1 hidden layers instead of blocks + 1")
  policy_head: str = _NETWORK(
      _NET_DEFAULTS.policy_head, "dense (flatten, then a dense layer) or conv (fully "
      "convolutional: the same parameters on every board size; needs a convolutional net)",
      choices=nets.POLICY_HEADS)
  compute_dtype: str = _NETWORK(
      _NET_DEFAULTS.dtype, "the network's compute dtype (parameters stay float32)",
      choices=tuple(nets.DTYPES), to="dtype")
  conv_impl: str = _NETWORK(
      _NET_DEFAULTS.conv_impl, "how convolutions are computed: xla, or matmul (the same "
      "network as matrix products, which vmap better in sweeps)", choices=nets.CONV_IMPLS)

  search: str = _SEARCH(
      _SEARCH_DEFAULTS.algorithm, "the search algorithm: gumbel (Gumbel MuZero) or puct "
      "(AlphaZero)", choices=tuple(ALGORITHMS), to="algorithm")
  simulations: int = _SEARCH(
      _SEARCH_DEFAULTS.simulations, "simulations of each self-play move's search",
      unit="simulations", check=AT_LEAST_1)
  max_num_considered_actions: int = _SEARCH(
      _SEARCH_DEFAULTS.max_num_considered_actions,
      "gumbel: root actions that Sequential Halving considers", unit="actions",
      check=AT_LEAST_1)
  gumbel_scale: float = _SEARCH(
      _SEARCH_DEFAULTS.gumbel_scale, "gumbel: scale of the root's Gumbel noise (0: none)",
      check=AT_LEAST_0, traced=True)
  gumbel_moves: int = _SEARCH(
      _SEARCH_DEFAULTS.gumbel_moves, "gumbel: moves of each game played as Sequential "
      "Halving's noisy pick; later ones are the search's best (the most visited, ties by the "
      "improved policy); 0 = noisy throughout", unit="moves", check=AT_LEAST_0, traced=True)
  dirichlet_alpha: float = _SEARCH(
      _SEARCH_DEFAULTS.dirichlet_alpha, "puct: concentration of the root's Dirichlet noise",
      check=ABOVE_0, traced=True)
  dirichlet_fraction: float = _SEARCH(
      _SEARCH_DEFAULTS.dirichlet_fraction,
      "puct: weight of the Dirichlet noise in the root's prior", check=FRACTION, traced=True)
  pb_c_init: float = _SEARCH(
      _SEARCH_DEFAULTS.pb_c_init, "puct: the exploration constant of the PUCT formula",
      check=AT_LEAST_0, traced=True)
  temperature: float = _SEARCH(
      _SEARCH_DEFAULTS.temperature,
      "puct: early moves are drawn with probabilities visits ** (1 / temperature)",
      check=ABOVE_0, traced=True)
  temperature_moves: int = _SEARCH(
      _SEARCH_DEFAULTS.temperature_moves,
      "puct: moves of each game drawn with the temperature; then the most visited move",
      unit="moves", check=AT_LEAST_0, traced=True)

  selfplay_batch: int = _SELFPLAY(64, "games played side by side", unit="games",
                                  check=AT_LEAST_1)
  selfplay_steps: int = _SELFPLAY(16, "moves each game advances per iteration", unit="moves",
                                  check=AT_LEAST_1)
  buffer_size: int = _SELFPLAY(8192, "replay buffer capacity; a multiple of selfplay_batch",
                               unit="positions", check=AT_LEAST_1)
  min_buffer: int = _SELFPLAY(256, "positions with known outcomes needed before SGD starts",
                              unit="positions", check=AT_LEAST_0, traced=True)

  train_batch: int = _TRAINING(128, "positions per SGD batch", unit="positions",
                               check=AT_LEAST_1)
  sgd_steps: int = _TRAINING(8, "SGD steps per iteration", unit="steps", check=AT_LEAST_0)
  overlap_sgd: bool = _TRAINING(
      False, "SGD samples the buffer as it was before the iteration's self-play (the newest "
      "positions train from the next iteration on), so the two share no data and XLA could run "
      "them at the same time (no faster on 2 CPU cores: docs/efficiency.md, session 28)")
  optimizer: str = _TRAINING("adamw", "the optimizer", choices=OPTIMIZERS)
  learning_rate: float = _TRAINING(1e-3, "peak learning rate (a schedule multiplies it)",
                                   check=ABOVE_0, traced=True)
  lr_schedule: str = _TRAINING(
      "constant", "constant, or cosine decay over iterations * sgd_steps",
      choices=LR_SCHEDULES)
  lr_floor: float = _TRAINING(
      0.0, "with the cosine schedule: where it ends, a fraction of the peak learning rate",
      check=BELOW_1)
  warmup_steps: int = _TRAINING(0, "linear learning-rate warmup from 0", unit="SGD steps",
                                check=AT_LEAST_0)
  momentum: float = _TRAINING(0.9, "Nesterov momentum (sgd only)", check=BELOW_1, traced=True)
  weight_decay: float = _TRAINING(
      1e-4, "decoupled weight decay (adamw) or L2 coefficient in the loss (adam, sgd)",
      check=AT_LEAST_0, traced=True)
  value_weight: float = _TRAINING(1.0, "weight of the value loss against the policy loss",
                                  check=AT_LEAST_0, traced=True)
  max_grad_norm: float = _TRAINING(1.0, "clip gradients to this global norm; 0 disables it",
                                   check=AT_LEAST_0, traced=True)
  ema_decay: float = _TRAINING(
      0.0, "the run's network is an exponential moving average of the trained parameters, "
      "updated after each iteration's SGD with this decay (warmed up: azjax.train.ema_update); "
      "SGD and self-play go on with the trained parameters; 0 = the trained parameters "
      "themselves", check=BELOW_1)

  gating: bool = _GATING(False, "self-play with the best network so far, which a trained one "
                         "replaces only by winning a gating match")
  gating_games: int = _GATING(32, "games of each gating match; even and >= 2", unit="games")
  gating_threshold: float = _GATING(
      0.55, "score the trained network needs to replace the best one", check=FRACTION,
      traced=True)
  gating_player: str = _GATING(
      "policy", "how gating games are played: policy (sampling the raw policies) or search "
      "(Gumbel search with noise, eval_simulations)", choices=GATING_PLAYERS)

  iterations: int = _RUN(100, "iterations to train; minutes may end the run earlier",
                         check=AT_LEAST_1)
  minutes: float = _RUN(
      0.0, "training time budget, counted once the iteration has compiled; 0 = no limit",
      unit="minutes", check=AT_LEAST_0)
  checkpoint_every: int = _RUN(
      10, "iterations between checkpoints (also written at the end and on Ctrl-C)",
      unit="iterations", check=AT_LEAST_0)
  seed: int = _RUN(0, "the random seed (a sweep's seeds are traced too)")

  eval_every: int = _EVALUATION(10, "iterations between evaluations; 0 = only at the end",
                                unit="iterations", check=AT_LEAST_0)
  eval_games: int = _EVALUATION(
      64, "games against each opponent, half with each colour; even; 0 = none", unit="games",
      check=AT_LEAST_0)
  eval_simulations: int = _EVALUATION(
      16, "simulations of the trained agent's (noiseless) search in evaluations",
      unit="simulations", check=AT_LEAST_1)
  eval_mcts_simulations: int = _EVALUATION(64, "simulations of the rollout-MCTS opponent",
                                           unit="simulations", check=AT_LEAST_1)
  solver_every: int = _EVALUATION(
      0, "iterations between scorings on the game's solver benchmark (mistakes against "
      "perfect play; Connect Four, tic-tac-toe); 0 = never", unit="iterations",
      check=AT_LEAST_0)
  solver_positions: str = _EVALUATION(
      "", "the labelled positions solver_every scores on: '' the game's default set, a "
      "packaged set's name (Connect Four: 'strong', positions that strong play reaches) or a "
      ".npz file")

  augment: bool = _EFFICIENCY(
      False, "train on each sample under a random symmetry of the board (Game.symmetries)")
  value_target_mix: float = _EFFICIENCY(
      0.0, "value target: (1 - m) * game outcome + m * the search's root value",
      check=FRACTION, traced=True)
  value_lambda: float = _EFFICIENCY(
      1.0, "value target before value_target_mix: the TD(lambda) return of the search's root "
      "values at the game's next positions, the outcome standing in for those after "
      "value_lambda_moves moves and after the game's end; 1 = the outcome alone",
      check=FRACTION)
  value_lambda_moves: int = _EFFICIENCY(
      32, "with value_lambda < 1: the later positions whose root values the return reads",
      unit="moves", check=AT_LEAST_1)
  cheap_simulations: int = _EFFICIENCY(
      0, "playout cap randomisation (KataGo): simulations of the cheap searches, which train "
      "the value only; below simulations; 0 = off", unit="simulations", check=AT_LEAST_0)
  full_search_prob: float = _EFFICIENCY(
      0.25, "with cheap_simulations: the fraction of moves searched in full (and used as "
      "policy targets)", check=PROBABILITY)
  opening_moves: int = _EFFICIENCY(
      0, "self-play games start after a uniformly random number (0..opening_moves) of "
      "uniformly random moves, for a wider range of positions; 0 = off", unit="moves",
      check=AT_LEAST_0)
  archive_start: float = _EFFICIENCY(
      0.0, "Go-Exploit (Trudeau and Bowling 2023): the probability that a fresh self-play game "
      "starts from a position of an earlier self-play game, drawn uniformly from an archive of "
      "recent ones, instead of the start (or a random opening); 0 = off", check=FRACTION)
  archive_size: int = _EFFICIENCY(
      65536, "with archive_start: the archive's positions (self-play writes an eighth of its "
      "games' positions each move; the oldest go first)", unit="positions", check=AT_LEAST_1)
  reply_weight: float = _EFFICIENCY(
      0.0, "KataGo's auxiliary policy target: weight of a loss on predicting the opponent's "
      "reply (the search's policy at the game's next position), from a second output of the "
      "policy head that only training computes; 0 = off (no such output)", check=AT_LEAST_0)
  late_simulations: int = _EFFICIENCY(
      0, "self-play searches with this many simulations once late_from of the run's iterations "
      "are done (more search once the network is worth searching with); 0 = simulations "
      "throughout", unit="simulations", check=AT_LEAST_0)
  late_from: float = _EFFICIENCY(
      0.5, "with late_simulations: the fraction of iterations after which it applies",
      check=FRACTION)

  # -- Derived configs -----------------------------------------------------------------------------
  def game_kwargs(self) -> dict[str, Any]:
    """The game's constructor options (`games.make(self.game, **self.game_kwargs())`)."""
    return dict(self.game_options)

  def component_values(self, section: Section) -> dict[str, Any]:
    """The fields of `section` under their names in its component config (`NetConfig`,
    `SearchConfig`; a field's `to`), so each setting is declared once, here."""
    return {to: getattr(self, key) for key, to in self.component_keys(section.name).items()}

  def net_config(self) -> NetConfig:
    return NetConfig(**self.component_values(_NETWORK), reply_head=self.reply_weight > 0)

  def search_config(self, *, evaluation: bool = False, simulations: int | None = None,
                    **explicit: Any) -> SearchConfig:
    """The run's search: self-play's, or (`evaluation=True`) its evaluation player
    (`azjax.search.for_evaluation`: no noise, `eval_simulations` unless `simulations` says
    otherwise). `simulations` and `explicit` (SearchConfig fields) are the only changes.

    Raises:
      ValueError: for an unknown field or an impossible value in `explicit`.
    """
    search = SearchConfig(**self.component_values(_SEARCH))
    if evaluation:
      return for_evaluation(search, self.eval_simulations if simulations is None else simulations,
                            **explicit)
    if simulations is not None:
      explicit["simulations"] = simulations
    try:
      return dataclasses.replace(search, **explicit)
    except TypeError as err:
      raise ValueError(f"search: bad option: {err}") from None

  def component_keys(self, section: str, *, traced: bool | None = None) -> dict[str, str]:
    """`{config key: field of the component config}` for the section `section` ("network",
    "search"); with `traced`, only its fields declared traced (or not)."""
    return {f.name: f.metadata["to"] or f.name for f in dataclasses.fields(self)
            if f.metadata["section"].name == section
            and (traced is None or f.metadata["traced"] == traced)}

  def cheap_search_config(self) -> SearchConfig | None:
    """Playout cap randomisation's cheap self-play search (None when it is off)."""
    if not self.cheap_simulations:
      return None
    return dataclasses.replace(
        self.search_config(), simulations=self.cheap_simulations,
        max_num_considered_actions=min(self.max_num_considered_actions, self.cheap_simulations))

  def phases(self) -> list[tuple[int, "Config"]]:
    """`[(first iteration, config)]`: the self-play settings of each part of the run, one part
    unless `late_simulations` (from `late_from * iterations` on: `simulations` raised)."""
    if not self.late_simulations:
      return [(0, self)]
    late = dataclasses.replace(self, simulations=self.late_simulations, late_simulations=0)
    return [(0, self), (int(self.late_from * self.iterations), late)]

  # -- Checks --------------------------------------------------------------------------------------
  def __hash__(self) -> int:  # A dict field (`game_options`) has no hash of its own.
    return hash(self.to_json())

  def validate(self, num_devices: int = 1) -> "Config":
    """Raises `ConfigError` (a ValueError) naming the first impossible value; returns self.

    The ranges and choices declared with the fields are checked here, then what relates
    several fields.
    """

    def need(cond: bool, key: str, why: str) -> None:
      if not cond:
        raise ConfigError(f"config {key}={getattr(self, key)!r}: {why}", key)

    checks.check_game(self, need)
    # What the fields declare (int, finite float, range); their choices come last, after the
    # network's and the search's own checks, which name their settings ("kind", "algorithm").
    checks.check_declared(self, need, choices=False)
    need(self.gating_games >= 2 and self.gating_games % 2 == 0, "gating_games",
         "must be even and >= 2 (half the games with each colour)")
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
    need(self.cheap_simulations < self.simulations, "cheap_simulations",
         f"must be below simulations={self.simulations} (a cheap search)")
    need(self.late_simulations == 0 or self.late_simulations > self.cheap_simulations,
         "late_simulations", f"must be above cheap_simulations={self.cheap_simulations}")
    need(self.lr_floor == 0 or self.lr_schedule == "cosine", "lr_floor",
         f"is where the cosine schedule ends; lr_schedule={self.lr_schedule!r} has none")
    need(not (self.ema_decay and self.gating), "ema_decay",
         "cannot average the network of a gated run (gating keeps the best trained network "
         "instead); set gating=false or ema_decay=0")
    # The network's and the search's own checks name their settings ("kind", "algorithm").
    self.net_config().validate()
    self.search_config().validate()
    checks.check_choices(self, need)
    return self

  def to_json(self) -> str:
    return json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True)

  @classmethod
  def from_dict(cls, values: dict[str, Any]) -> "Config":
    """The defaults with `values` over them: flat (a run's config.json) or by section."""
    return override(cls(), flat_settings(values).items())


def declared_fields(cls: type = Config) -> dict[str, dataclasses.Field]:
  """`{name: field}` of a config class whose fields are declared by `Section` (`Config`, or a
  learner's own, e.g. `azjax.tdleaf.config.Config`), in the order of the class."""
  return {f.name: f for f in dataclasses.fields(cls)}


def section_names(cls: type = Config) -> tuple[str, ...]:
  """The sections of a config class, in the order of its fields."""
  return tuple(dict.fromkeys(f.metadata["section"].name for f in dataclasses.fields(cls)))


_FIELDS = declared_fields(Config)
# The keys the iteration reads as traced values: a vmapped sweep group's runs may differ in
# them (with `seed`). `azjax.train.Hyper` holds these.
TRACED_KEYS: tuple[str, ...] = tuple(k for k, f in _FIELDS.items() if f.metadata["traced"])


def field_help(key: str, cls: type = Config) -> str:
  """One line on `key` (a field of `cls`): its help, unit and allowed values (those the help
  does not name).

  Raises:
    KeyError: `key` is not a config field.
  """
  field = declared_fields(cls)[key]
  info, choices = field.metadata, field_choices(field)
  unit = info["unit"]
  text = info["help"] + (f" [{unit}]" if unit and unit not in info["help"] else "")
  if choices and not all(choice in info["help"] for choice in choices):
    text += f" ({' | '.join(choices)})"
  if info["check"] is not None:
    text += f"; {info['check'].text}"
  return text


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


def resolve_key(key: str, cls: type = Config) -> str:
  """The field of `cls` a key names: a field's own name (`simulations`) or its dotted name with
  its section (`search.simulations`, as in the TOML tables `--print-config` writes).

  Raises:
    ValueError: no such field (with the closest names), or the wrong section for it.
  """
  fields = declared_fields(cls)
  section, dot, name = key.rpartition(".")
  if name in fields and (not dot or section == fields[name].metadata["section"].name):
    return name
  if name in fields:
    right = fields[name].metadata["section"].name
    raise ValueError(f"config: {key!r}: {name} is in section {right!r} ({right}.{name})")
  import difflib  # noqa: PLC0415
  names = [*fields, *(f"{f.metadata['section'].name}.{k}" for k, f in fields.items())]
  close = difflib.get_close_matches(key, names, n=3)
  hint = f"; did you mean {', '.join(close)}?" if close else ""
  raise ValueError(f"config: unknown key {key!r}{hint}")


def override(config: Any, items: Iterable[tuple[str, Any]], *,
             source: str | os.PathLike | None = None) -> Any:
  """Returns `config` (a `Config`, or another class declared by `Section`) with `(key, value)`
  pairs applied; values may be strings to parse, keys plain or dotted (`resolve_key`).

  Where the class has `game_options`, a key that is an option of the game and names no setting
  sets that option (`rows=6`; `game.blocks=none` where a setting is named `blocks`), parsed and
  checked by the game's declaration (`Game.options_spec`); the game is set first, so that its
  options are known. A flat key of an older config at its "default" value is dropped
  (`game_options.LEGACY_UNSET`).

  Raises:
    ValueError: for an unknown key (with the closest names) or a value of the wrong type; the
      message starts with `source` (a file the pairs came from) if given.
  """
  items = list(items)
  is_game = lambda key: key.rpartition(".")[2] == "game"  # noqa: E731
  config = _apply(config, [(k, v) for k, v in items if is_game(k)], source)
  return _apply(config, [(k, v) for k, v in items if not is_game(k)], source)


def _apply(config: Any, items: list[tuple[str, Any]], source: str | os.PathLike | None) -> Any:
  """`override`'s work, with the game (if any in `items`) already set."""
  changes, options = {}, {}
  for key, raw in items:
    try:
      if is_legacy_default(config, key, raw):
        continue
      if (option := game_option(config, key)) is not None:
        options[option.name] = option.parse(config.game, raw)
        continue
      try:
        name = resolve_key(key, type(config))
      except ValueError as err:
        raise ValueError(not_an_option(config, key) or str(err)) from None
      changes[name] = _parse_value(key, raw, getattr(config, name))
    except ValueError as err:
      if source is None:
        raise
      raise ValueError(f"{source}: {err}") from None
  if options:
    changes["game_options"] = {**changes.get("game_options", config.game_options), **options}
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


def flat_settings(values: dict[str, Any], cls: type = Config) -> dict[str, Any]:
  """`values` with each section's table (`{"search": {"simulations": 32}}`) spelled out as
  dotted keys (`{"search.simulations": 32}`); other keys unchanged and unchecked.

  Raises:
    ValueError: a table that is not a section, or a table inside a section.
  """
  settings = {}
  # The fields whose value is itself a table (a learner's `game_options`).
  tables = {name for name, f in declared_fields(cls).items()
            if f.default_factory is not dataclasses.MISSING and isinstance(f.default_factory(),
                                                                           dict)}
  for key, value in values.items():
    if not isinstance(value, dict) or key.rpartition(".")[2] in tables:  # A table setting, too.
      settings[key] = value
      continue
    if key not in section_names(cls):
      raise ValueError(f"{key!r} is a table, but the tables of a config are its sections: "
                       f"{', '.join(section_names(cls))}")
    for name, inner in value.items():
      if isinstance(inner, dict) and name not in tables:
        raise ValueError(f"{key}.{name} is a table; a section holds settings only")
      settings[f"{key}.{name}"] = inner
  return settings
