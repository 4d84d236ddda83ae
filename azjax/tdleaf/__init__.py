"""TD-Leaf(lambda): an alpha-beta player whose evaluation learns from its own games.

The KnightCap algorithm (Baxter, Tridgell and Weaver, 1998), as the Slider source project used
it, batched: `batch` games are played at once, every move chosen by `azjax.alphabeta.search` at
`depth` plies with the current evaluation (a random legal move with probability `epsilon`, for
exploration). For each position the search's principal-variation leaf is kept; after
`max_plies` plies, every leaf evaluation moves toward its lambda-return of the later leaf
evaluations and the game's result, by a few optax steps of regression (the forward view of
KnightCap's update, `sum_j lambda^(j-t) d_j` with temporal differences `d_j` of leaf values).
A game that ends is replaced by a fresh one in its slot at once (as AlphaZero's self-play
does), so no search is spent on finished games; the games still running after `max_plies`
plies are cut off. One jitted iteration plays and learns; runs train through the one outer
loop (`azjax.runs.loop`), checkpointed and resumable like AlphaZero runs (`azjax tdleaf GAME`).

>>> config = Config(game="slider", game_options={"size": 5}, depth=3)
>>> learner = Learner(config)
>>> state = learner.init(jax.random.key(0))
>>> kept = learner.empty_replay()                    # None unless config.replay > 1
>>> state, kept, metrics = learner.iteration(state, kept)  # plays max_plies plies, learns
>>> player = learner.player(state.params)          # an `agents.Agent` (alpha-beta)

**Evaluations** (`Config.evaluation`): "features" is the source project's small network, the
game's `evaluation_features` (Slider: five board-size-independent differences) into two hidden
layers of `hidden` ReLU units and a tanh output, so one network plays every board size; "local"
(`LocalSum`) sums what a few convolutions make of each piece's neighbourhood and its steps to go
(the game's `evaluation_planes`), also one network for every size; any
`azjax.nets` kind ("mlp", "resnet", ...) evaluates the observation with its value head (its
BatchNorm statistics, where it has them, stay at their initial values: TD-Leaf applies it in
inference mode). Either way the value is from the mover's side, in (-1, 1).

**Targets.** With `u_t` the value of position `t` (its PV leaf's evaluation, or the exact
result when the PV ends the game), all from player 0's side, and `z` the game's result, the
lambda-return is `G_t = (1 - lambda) u_{t+1} + lambda G_{t+1}`, ending at `G = z` after the
game's last move. Learning stops at an exploratory (random) move: its position's target is its
own value, so earlier positions bootstrap from it rather than from where the random move led; a
game cut off at the end of the iteration bootstraps the same way. Only evaluated leaves carry
a gradient.

**Replay** (`Config.replay`): the learning steps fit the games of the last `replay` iterations,
not only the newest, their lambda-returns recomputed with the current evaluation at every step
(so old games are read as KnightCap would read them today). Playing is what costs here (every
move a search), so a game learned from `replay` times is that much more learning per CPU-minute.
The kept games are not checkpointed (they are large and old runs' checkpoints have none): a
resumed run refills them within `replay` iterations.

The package: `config.py` (the settings, declared by section in the config system),
`learner.py` (evaluations, targets and loss, the `Learner`) and `runs.py` (training runs through
the one outer loop, and TD-Leaf's run kind); every name is importable from `azjax.tdleaf`.
"""

from azjax.tdleaf.config import CONFIG_FILE, Config  # noqa: F401
from azjax.tdleaf.learner import (  # noqa: F401
    Evaluator,
    FeatureMLP,
    Learner,
    LocalSum,
    TrainState,
    Trajectory,
    keep,
    lambda_returns,
    make_evaluator,
    position_values,
    replayed,
    td_loss,
)
from azjax.tdleaf.runs import KIND, load, solver_scorer, train  # noqa: F401
