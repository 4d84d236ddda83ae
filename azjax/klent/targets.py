"""KLENT's targets as pure functions: the regularised policy target and the lambda-returns.

The policy improvement step (Ota et al. 2026, "Resource-Efficient Model-Free Reinforcement
Learning for Board Games": the regularised policy optimisation it names; docs/klent.md says what
of the paper could be read) solves, in each state, over the distributions `p` on the legal
actions,

    max_p  E_{a~p}[Q(s, a)]  -  beta * KL(p || pi(.|s))  +  alpha * H(p)

with `pi` the current (previous) policy, `beta >= 0` the weight of the reverse KL divergence
and `alpha >= 0` the weight of the entropy bonus. Setting the derivative of the Lagrangian to
zero gives the closed form

    pi'(a|s)  proportional to  pi(a|s) ** (beta / (alpha + beta)) * exp(Q(s, a) / (alpha + beta))

over the legal actions (zero elsewhere). In logits: `(beta * log pi + Q) / (alpha + beta)`, a
masked softmax. Its two limits, which the tests check by hand: `beta = 0` gives the
entropy-regularised softmax `softmax(Q / alpha)`; `alpha = 0` gives `pi * exp(Q / beta)`
normalised, a tilt of the previous policy towards the better actions.

Values are from the mover's side throughout (the convention of `azjax.search` and the
networks): a move that passes the turn flips the sign of the next position's value.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from azjax import nets

Array = jax.Array


def policy_target_logits(log_pi: Array, q: Array, legal_mask: Array, *, alpha: float,
                         beta: float) -> Array:
  """`[..., A]` logits of the regularised target `pi'` (masked: illegal actions get
  `nets.MASKED_LOGIT`, finite, so a softmax of them is never NaN).

  Args:
    log_pi: `[..., A]` log-probabilities (or logits: a constant shift changes nothing) of the
      previous policy; illegal entries are ignored.
    q: `[..., A]` action values from the mover's side; illegal entries are ignored.
    legal_mask: `[..., A]` bool.
    alpha: the entropy weight (>= 0); beta: the reverse-KL weight (>= 0); `alpha + beta > 0`.
  """
  if alpha < 0 or beta < 0 or alpha + beta <= 0:
    raise ValueError(f"policy_target: need alpha, beta >= 0 and alpha + beta > 0, got "
                     f"alpha={alpha}, beta={beta}")
  # Illegal entries of log_pi can be about -1e9 (a masked log-softmax): zero them before the
  # product, so beta * log_pi cannot overflow or give 0 * inf.
  log_pi = jnp.where(legal_mask, log_pi, 0.0)
  q = jnp.where(legal_mask, q, 0.0)
  logits = (beta * log_pi + q) / (alpha + beta)
  return nets.mask_logits(logits, legal_mask)


def policy_target(log_pi: Array, q: Array, legal_mask: Array, *, alpha: float,
                  beta: float) -> Array:
  """`[..., A]` the target policy `pi'` (see the module docstring): sums to 1 over the legal
  actions, exactly 0 on the illegal ones, 1 on the only legal action when there is one."""
  return nets.masked_softmax(
      policy_target_logits(log_pi, q, legal_mask, alpha=alpha, beta=beta), legal_mask)


def lambda_returns(value: Array, reward: Array, done: Array, flip: Array, bootstrap: Array, *,
                   td_lambda: float, discount: float = 1.0) -> Array:
  """`[T, ...]` lambda-returns of a trajectory of `T` plies, each from its mover's side.

  Ply `t` is the move played in position `s_t` by its mover; the next position `s_{t+1}` is
  the next ply's (or, after the last ply, the one `bootstrap` values). The return is

      G_t = r_t + discount * (1 - done_t) * sign_t * ((1 - lambda) * V_{t+1} + lambda * G_{t+1})

  with `V_{t+1}` the value of `s_{t+1}` from its own mover's side, `sign_t = -1` where the
  move passed the turn (`flip_t`) and `+1` where the mover moves again (a checkers jump), and
  at the end `G_T = V_T = bootstrap`. `done_t` cuts the sum at a game's last move, so the next
  ply (a new game in the same slot) adds nothing. `lambda = 0` is the one-step TD target,
  `lambda = 1` the game's (discounted) result when the game ends within the trajectory.

  Args:
    value: `[T, ...]` V(s_t) from s_t's mover's side (targets: pass it stop-gradiented).
    reward: `[T, ...]` the reward of ply t's move to its mover (the result at a final move).
    done: `[T, ...]` bool, True where ply t's move ended the game.
    flip: `[T, ...]` bool, True where s_{t+1}'s mover is not s_t's.
    bootstrap: `[...]` V(s_T) from s_T's mover's side: the position after the last ply.
    td_lambda: lambda in [0, 1]; discount: gamma in [0, 1] (board games: 1).
  """
  value_next = jnp.concatenate([value[1:], bootstrap[None]], axis=0)

  def back(g_next, x):
    v_next, r, d, f = x
    sign = jnp.where(f, -1.0, 1.0)
    g = r + discount * jnp.where(d, 0.0, sign * ((1.0 - td_lambda) * v_next
                                                  + td_lambda * g_next))
    return g, g

  _, g = jax.lax.scan(back, bootstrap.astype(jnp.float32),
                      (value_next, reward, done, flip), reverse=True)
  return g
