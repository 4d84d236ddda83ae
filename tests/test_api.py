"""One conformance test, run on every registered game (cf. pgx's api_test)."""

import ast
import inspect
import pathlib

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from azjax import games
from azjax.games import base, notation

BATCH = 32
# (name, make kwargs): every game, plus a small Breakthrough board and its thesis encoding.
CASES = [
    ("tic_tac_toe", {}),
    ("connect_four", {}),
    ("breakthrough", {}),
    ("breakthrough", {"rows": 5, "cols": 5, "observation": "thesis"}),
    ("checkers", {}),
    ("slider", {}),
]


def _id(case):
  name, kwargs = case
  return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.fixture(scope="module", params=CASES, ids=_id)
def case(request):
  return request.param


@pytest.fixture(scope="module")
def env(case):
  name, kwargs = case
  return games.make(name, **kwargs)


def _random_play(env, num_steps):
  """Batched random play with automatic reset inside one `lax.scan`.

  Returns per-step (terminated, rewards, legal mask, current player, observation) and the number
  of traces of the step function.
  """
  traces = {"step": 0}

  def step(state, action):
    traces["step"] += 1  # Counts Python executions, i.e. traces.
    return env.step(state, action)

  def body(carry, key):
    states, = carry
    act_key, reset_key = jax.random.split(key)
    actions = jax.vmap(base.uniform_legal_action)(jax.random.split(act_key, BATCH),
                                                   states.legal_action_mask)
    stepped = jax.vmap(step)(states, actions)
    fresh = jax.vmap(env.init)(jax.random.split(reset_key, BATCH))
    next_states = jax.tree.map(
        lambda f, s: jnp.where(
            states.terminated.reshape((-1,) + (1,) * (f.ndim - 1)), f, s), fresh, stepped)
    out = (stepped.terminated, stepped.rewards, stepped.legal_action_mask,
           stepped.current_player, stepped.observation, actions, states.legal_action_mask)
    return (next_states,), out

  @jax.jit
  def run(key):
    init_key, scan_key = jax.random.split(key)
    states = jax.vmap(env.init)(jax.random.split(init_key, BATCH))
    return jax.lax.scan(body, (states,), jax.random.split(scan_key, num_steps))[1]

  return run(jax.random.key(0)), traces


def test_attributes(env):
  assert env.num_players == 2
  assert env.num_actions > 0 and isinstance(env.num_actions, int)
  assert len(env.observation_shape) == 3
  assert env.observation_shape[:2] == (env.rows, env.cols)
  assert env.max_game_length > 0
  if env.name != "connect_four":  # Connect Four's action is a column.
    passes = int(env.name == "slider")  # Slider's pass is one more action, after the squares.
    assert env.num_actions == env.rows * env.cols * env.action_planes + passes


def test_init_dtypes_and_shapes(env):
  state = jax.jit(env.init)(jax.random.key(0))
  assert state.current_player.dtype == jnp.int32 and state.current_player.shape == ()
  assert state.legal_action_mask.dtype == jnp.bool_
  assert state.legal_action_mask.shape == (env.num_actions,)
  assert state.terminated.dtype == jnp.bool_ and state.terminated.shape == ()
  assert state.rewards.dtype == jnp.float32 and state.rewards.shape == (2,)
  assert state.step_count.dtype == jnp.int32
  assert state.last_move.shape == (2,) and state.last_move.dtype == jnp.int32
  assert state.observation.dtype == jnp.float32
  assert state.observation.shape == env.observation_shape
  assert int(state.current_player) == 0
  assert not bool(state.terminated)
  assert bool(state.legal_action_mask.any())
  np.testing.assert_array_equal(state.rewards, 0.0)
  np.testing.assert_array_equal(env.observe(state), state.observation)


def test_step_is_traced_once():
  env = games.make("tic_tac_toe")
  step = jax.jit(chex.assert_max_traces(env.step, n=1))
  state = env.init(jax.random.key(0))
  state = step(state, jnp.int32(4))
  state = step(state, jnp.int32(0))  # Same shapes and dtypes: no retrace.
  assert int(state.step_count) == 2


@pytest.mark.slow
def test_no_retrace_in_batched_play(env):
  num_steps = 8
  _, traces = _random_play(env, num_steps)
  assert traces["step"] == 1


@pytest.mark.slow
def test_random_batched_play_to_the_end(env):
  """Random play with automatic reset: games end, rewards are zero-sum and only at the end."""
  steps = {"tic_tac_toe": 40, "connect_four": 90, "breakthrough": 300, "checkers": 300,
           "slider": 300}[env.name]
  outputs, _ = _random_play(env, steps)
  terminated, rewards, mask, player, obs, actions, mask_before = map(np.asarray, outputs)
  assert terminated.any(), "no game ended"
  # Every sampled action was legal in the live state it was played in.
  live = mask_before.any(-1)
  assert np.take_along_axis(mask_before, actions[..., None], axis=-1)[..., 0][live].all()
  # Rewards are zero-sum and non-zero only on the terminating transition.
  np.testing.assert_allclose(rewards.sum(-1), 0.0)
  assert not np.any(rewards[~terminated] != 0)
  assert np.all(np.isin(rewards, [-1.0, 0.0, 1.0]))
  # The legal mask is all False once terminated, and non-empty otherwise.
  assert not mask[terminated].any()
  assert mask[~terminated].any(-1).all()
  assert np.all((player == 0) | (player == 1))
  assert np.isfinite(obs).all()


def _after_one_move(env):
  """A live position after at least one move, where some action is illegal.

  Plays the first legal action until one is illegal (Connect Four: until column a is full).
  """
  state = env.init(jax.random.key(0))
  while True:
    state = env.step(state, jnp.int32(env.legal_actions(state)[0]))
    if not bool(np.asarray(state.legal_action_mask).all()):
      break
  assert not bool(state.terminated)
  return state


@pytest.mark.slow
def test_terminated_step_is_noop_and_illegal_is_loss(env):
  state = _after_one_move(env)
  illegal = np.flatnonzero(~np.asarray(state.legal_action_mask))
  mover = int(state.current_player)
  lost = jax.jit(env.step)(state, jnp.int32(illegal[0]))
  assert bool(lost.terminated)
  np.testing.assert_array_equal(lost.rewards[mover], -1.0)
  np.testing.assert_array_equal(lost.rewards[1 - mover], 1.0)
  assert not bool(lost.legal_action_mask.any())
  np.testing.assert_array_equal(env.board_array(lost), env.board_array(state))
  again = jax.jit(env.step)(lost, jnp.int32(0))
  np.testing.assert_array_equal(again.rewards, [0.0, 0.0])
  chex.assert_trees_all_equal(again.replace(rewards=lost.rewards), lost)


@pytest.mark.slow
def test_illegal_action_does_not_touch_other_games(env):
  state = _after_one_move(env)
  states = base.stack_states([state] * 4)
  legal = np.flatnonzero(np.asarray(state.legal_action_mask))[0]
  illegal = np.flatnonzero(~np.asarray(state.legal_action_mask))
  actions = jnp.array([legal, illegal[0], legal, legal], dtype=jnp.int32)
  stepped = jax.jit(jax.vmap(env.step))(states, actions)
  single = env.step(state, jnp.int32(legal))
  for i in (0, 2, 3):
    chex.assert_trees_all_equal(jax.tree.map(lambda x: x[i], stepped), single)
  assert bool(stepped.terminated[1])


def test_notation_round_trip_at_start(env):
  state = env.init(jax.random.key(0))
  for action in env.legal_actions(state):
    move = env.action_to_move(state, action)
    assert env.move_to_action(state, move) == action
  with pytest.raises(ValueError, match="legal moves"):
    env.move_to_action(state, "??")


def test_make_rejects_unknown():
  with pytest.raises(ValueError, match="unknown game"):
    games.make("chess")
  with pytest.raises(ValueError, match="bad option"):
    games.make("tic_tac_toe", rows=4)


def test_uniform_legal_action_is_uniform_over_legal_actions():
  mask = jnp.zeros(192, bool).at[jnp.array([0, 5, 64, 100, 191])].set(True)
  masks = jnp.broadcast_to(mask, (50000, 192))
  actions = np.asarray(jax.jit(base.uniform_legal_actions)(jax.random.key(0), masks))
  counts = np.bincount(actions, minlength=192)
  assert counts.sum() == counts[[0, 5, 64, 100, 191]].sum()  # Only legal actions.
  expected = 50000 / 5
  chi2 = np.sum((counts[[0, 5, 64, 100, 191]] - expected) ** 2 / expected)
  assert chi2 < 18.5  # 99.9% quantile of chi-square with 4 degrees of freedom.
  # A single legal action is always chosen; no legal action gives 0.
  one = jnp.zeros((4, 7), bool).at[:, 3].set(True)
  np.testing.assert_array_equal(base.uniform_legal_actions(jax.random.key(1), one), 3)
  assert int(base.uniform_legal_action(jax.random.key(2), jnp.zeros(7, bool))) == 0


# -- What a game says about itself (`base.Game`'s hooks) -------------------------------------------


def test_cases_cover_every_registered_game():
  assert {name for name, _ in CASES} == set(games.GAMES)


def test_options_rebuild_the_variant(env):
  """`options()` gives every constructor argument, and the constructor given them builds the
  same variant (`variant_key`, hashable)."""
  params = inspect.signature(type(env).__init__).parameters.values()
  names = [p.name for p in params
           if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
  assert sorted(env.options()) == sorted(names)
  again = type(env)(**env.options())
  assert again.variant_key() == env.variant_key() and hash(env.variant_key()) is not None


def test_variant_key_tells_every_option_apart():
  """Two objects share a key only when every constructor option agrees: board sizes,
  Breakthrough's encodings, checkers' history, Slider's size and blocks."""
  variants = [games.make("breakthrough"), games.make("breakthrough", observation="thesis"),
              games.make("breakthrough", rows=6, cols=6), games.make("checkers"),
              games.make("checkers", history=2), games.make("slider"),
              games.make("slider", size=4), games.make("slider", blocks="none"),
              games.make("slider", blocks="c3,b4"), games.make("tic_tac_toe")]
  keys = [v.variant_key() for v in variants]
  assert len(set(keys)) == len(keys)
  assert (games.make("slider", blocks=["b4", "c3"]).variant_key()
          == games.make("slider", blocks="c3,b4").variant_key())


def test_step_is_the_base_wrapper(env):
  """Games write `_step`; the terminated-state no-op is applied once, by `base.Game.step`."""
  assert type(env).step is base.Game.step
  assert type(env)._step is not base.Game._step


def test_every_hook_answers(env):
  from azjax import alphabeta, solver
  from azjax.config import Config

  start = env.init(jax.random.key(0))
  # People's words: two distinct side names, a tutorial, a legal example move, a legend.
  sides = env.side_names
  assert isinstance(sides, tuple) and len(sides) == 2
  assert all(isinstance(s, str) and s for s in sides) and sides[0].lower() != sides[1].lower()
  assert isinstance(env.rules_text, str) and env.rules_text.strip()
  assert env.legal_moves(start)[0]  # (the default example move)
  assert env.move_to_action(start, env.example_move) in env.legal_actions(start)
  assert env.legend() is None or (isinstance(env.legend(), str) and env.legend())
  assert isinstance(env.describe(), str) and env.describe().startswith(env.name)
  for code in env.piece_symbols:
    if code:
      # None: a neutral piece (Slider's blocks).
      assert env.piece_owner(code) in (0, 1, None) and isinstance(env.piece_is_king(code), bool)
  assert env.move_order_scores(start).shape == (env.num_actions,)
  features = env.evaluation_features(start)
  assert features is None or (features.ndim == 1 and features.dtype == jax.numpy.float32)
  planes = env.evaluation_planes(start)
  assert planes is None or (planes.shape[:2] == (env.rows, env.cols) and planes.ndim == 3
                            and planes.dtype == jax.numpy.float32)
  # Rendering and search.
  assert isinstance(env.svg_style, base.SvgStyle)
  assert env.svg_style.kind in ("checkered", "frame", "grid")
  value = jax.jit(env.alphabeta_evaluation)(start)
  assert value.shape == () and value.dtype == jnp.float32
  assert abs(float(value)) < alphabeta.WIN_SCORE / 2
  # Probing: concepts are named, documented, and give a float32 scalar on a jitted state.
  concepts = env.concepts()
  assert isinstance(concepts, dict)
  for name, concept in concepts.items():
    assert isinstance(concept, base.Concept) and concept.name == name and concept.description
    assert isinstance(concept.binary, bool)
    label = jax.jit(concept.fn)(start)
    assert label.shape == () and label.dtype == jnp.float32
  # OpenSpiel: a (name, params) counterpart or None; the key names each legal move once.
  counterpart = env.openspiel_game()
  assert counterpart is None or (isinstance(counterpart[0], str)
                                 and isinstance(counterpart[1], dict))
  keys = [env.openspiel_key(start, a) for a in env.legal_actions(start)]
  assert all(isinstance(k, str) for k in keys) and len(set(keys)) == len(keys)
  assert isinstance(env.openspiel_action_key("x0"), str)
  # Move input: one move is a path of one; the squares of a move are on the board (a move
  # off the board or a pass may have no target), and a click plays a move whose target it is.
  assert env.move_path(env.example_move) == [env.example_move]
  assert isinstance(env.no_move_reason, str)
  for move in env.legal_moves(start):
    frm, targets = env.move_squares(move)
    assert isinstance(targets, list)
    for square in ([frm] if frm is not None else []) + targets:
      assert len(notation.parse_squares(square, env.rows, env.cols, env.name)) == 1
    for square in targets:
      click = env.one_click_move(square)
      assert click is None or (frm is None and env.move_to_action(start, click)
                               == env.move_to_action(start, move))
  # Perfect play: a solver's class or None, asked of the class (`solver.SOLVED_GAMES`); the
  # benchmark's ply ranges follow each other from the start and end within a game.
  solver_class = type(env).exact_solver()
  assert (solver_class is not None) == (env.name in solver.SOLVED_GAMES)
  assert solver_class is None or callable(solver_class)
  ranges = env.benchmark_ply_ranges
  assert isinstance(ranges, tuple)
  if ranges:
    assert ranges[0][0] == 0 and ranges[-1][1] < env.max_game_length
    assert all(first <= last for first, last in ranges)
    assert all(b[0] == a[1] + 1 for a, b in zip(ranges, ranges[1:]))
  # Options: each declared one is a constructor argument with a default of its kind, which
  # its declaration accepts; a config without options builds the default game.
  parameters = inspect.signature(type(env)).parameters
  for option in env.options_spec:
    assert isinstance(option, games.Option) and option.kind in (int, str) and option.help
    assert option.name in parameters, option.name
    default = parameters[option.name].default
    assert isinstance(default, option.kind) and option.check(env.name, default) == default
  assert set(games.option_defaults(env.name)) == {o.name for o in env.options_spec}
  built = games.make(env.name, **Config(game=env.name).game_kwargs())
  assert built.num_actions == games.make(env.name).num_actions


def test_paths_split_into_moves():
  checkers = games.make("checkers")
  assert checkers.move_path("c3e5g7") == ["c3e5", "e5g7"]
  assert checkers.move_path("c3d4") == ["c3d4"]
  assert games.make("breakthrough").move_path("a2a3") == ["a2a3"]


# Files whose module-level code is configuration data (defaults, presets, the command table).
DATA_FILES = ("azjax/config/presets.py", "azjax/config/fields.py", "azjax/tdleaf/config.py",
              "azjax/klent/config.py", "azjax/cli/main.py")


def test_no_game_name_outside_its_game():
  """Only a game's own files name it, so a new game is one file plus one registry line.

  The rule, over the Python files of azjax/ and experiments/: a string literal whose whole value
  is a registered game's name (`"checkers"`, as in a dict key or an `env.name == ...` test) may
  appear only in azjax/games/ (the games and the registry), in azjax/config/ outside its
  functions (Config's defaults and the PRESETS: configurations are data; the same for the
  configs of azjax/tdleaf/config.py and azjax/klent/config.py and the command table of
  azjax/cli/main.py), and in a game's own entry script, experiments/<game>.py or
  azjax/cli/<game>.py (Slider's command). Prose that mentions a game (docstrings, messages,
  `>>>` examples) is not a literal equal to the name and is allowed.
  """
  root = pathlib.Path(__file__).resolve().parent.parent
  names = set(games.GAMES)
  found = []
  for folder in ("azjax", "experiments"):
    for path in sorted((root / folder).rglob("*.py")):
      relative = path.relative_to(root).as_posix()
      if relative.startswith("azjax/games/"):
        continue
      tree = ast.parse(path.read_text(), filename=relative)
      in_functions = set()
      if relative in DATA_FILES:
        for node in ast.walk(tree):
          if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_functions.update(range(node.lineno, node.end_lineno + 1))
      for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and node.value in names):
          continue
        if relative in (f"experiments/{node.value}.py", f"azjax/cli/{node.value}.py"):
          continue
        if relative in DATA_FILES and node.lineno not in in_functions:
          continue
        found.append(f"{relative}:{node.lineno}: {node.value!r}")
  assert not found, "game names outside their games (ask the game instead):\n" + "\n".join(found)
