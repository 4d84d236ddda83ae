"""How close the TD-Leaf evaluation is to the hand-written one: correlation over positions of
random play and a linear fit of the learned pre-tanh value on the five features (pieces, three
move counts, distance, bias), every third snapshot. Run from the checkout: python
results/slider/compare_evaluations.py"""
import jax, jax.numpy as jnp, numpy as np
from azjax import tdleaf, checkpoint, games
from azjax.games import base
learner, _ = tdleaf.load("results/slider/tdleaf")
abstract = learner.evaluator.init(jax.random.key(0))
env = learner.env
B=256
key = jax.random.key(3)
states = jax.vmap(env.init)(jax.random.split(key, B))
step = jax.jit(jax.vmap(env.step))
allf=[]
for t in range(40):
  key,k=jax.random.split(key)
  states = step(states, base.uniform_legal_actions(k, states.legal_action_mask))
  if t % 4 == 3: allf.append(jax.vmap(env.evaluation_features)(states)[~states.terminated])
X = jnp.concatenate(allf)
hand = jnp.tanh(-2*X[:,4] + 0.25*X[:,1])
for it, _ in checkpoint.list_models("results/slider/tdleaf")[::3]:
  p = checkpoint.load_model("results/slider/tdleaf", abstract, step=it)
  v = jax.vmap(lambda x: learner.evaluator.value(p, x))(X)
  # linear fit of v on features
  A = np.c_[np.asarray(X), np.ones(len(X))]
  w = np.linalg.lstsq(A, np.arctanh(np.clip(np.asarray(v), -0.999, 0.999)), rcond=None)[0]
  print(it, "corr with hand", round(float(np.corrcoef(v, hand)[0,1]),3), "lin fit", np.round(w,2))
