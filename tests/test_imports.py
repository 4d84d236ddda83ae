"""azjax's import graph, read from the source (ast), has no cycle.

A cycle between modules works only as long as they happen to be imported in a lucky order (the
first one's names are missing while the second runs), so the layering is checked here instead
of found by a user: the contracts and algorithms (`azjax.search`, `azjax.uct`,
`azjax.alphabeta`, `azjax.solver`) below `azjax.agents`, which names them, below the arena,
play and the entry points.
"""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "azjax"


def _module_name(path: Path) -> str:
  parts = path.relative_to(ROOT).with_suffix("").parts
  return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _statements(body, *, functions: bool):
  """The statements of `body` run on import (class bodies, if/try blocks; not `if
  TYPE_CHECKING`), and with `functions` also those inside functions."""
  for node in body:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
      if functions:
        yield from _statements(node.body, functions=functions)
      continue
    if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
      continue
    yield node
    for field in ("body", "orelse", "finalbody", "handlers"):
      inner = getattr(node, field, None)
      if isinstance(inner, list):
        yield from _statements(inner, functions=functions)


def _target(name: str) -> str | None:
  """The azjax module `name` denotes: itself, or its longest module prefix (a name in it)."""
  while name and name not in MODULES:
    name = name.rpartition(".")[0]
  return name or None


def imports(module: str, *, functions: bool = False) -> set[str]:
  """The azjax modules `module` imports (at import time; with `functions`, anywhere)."""
  path = MODULES[module]
  package = module if path.name == "__init__.py" else module.rpartition(".")[0]
  found = set()
  for node in _statements(ast.parse(path.read_text()).body, functions=functions):
    if isinstance(node, ast.Import):
      names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
      base = node.module or ""
      if node.level:
        up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
        base = ".".join(up + ([node.module] if node.module else []))
      # `from azjax import agents` imports the module azjax.agents; `from azjax.agents import
      # Agent` the module azjax.agents.
      names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
               for alias in node.names]
    else:
      continue
    found |= {t for t in map(_target, names) if t is not None and t != module}
  found.discard("azjax")  # The root package holds only a version string.
  return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
  """A cycle of `graph` as a path `[a, b, ..., a]`, or None (iterative depth-first search)."""
  state: dict[str, int] = {}  # 1: on the current path, 2: done
  for start in sorted(graph):
    if state.get(start):
      continue
    path, stack = [start], [iter(sorted(graph[start]))]
    state[start] = 1
    while stack:
      child = next(stack[-1], None)
      if child is None:
        state[path.pop()] = 2
        stack.pop()
      elif state.get(child) == 1:
        return path[path.index(child):] + [child]
      elif not state.get(child):
        state[child] = 1
        path.append(child)
        stack.append(iter(sorted(graph.get(child, ()))))
  return None


def test_find_cycle_finds_cycles():
  assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
  assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
  assert find_cycle({"a": {"a"}}) == ["a", "a"]


def test_the_graph_is_read_right():
  assert "azjax.agents" in MODULES and "azjax.games" in MODULES
  assert {"azjax.search", "azjax.uct", "azjax.alphabeta", "azjax.solver"} <= imports("azjax.agents")
  assert "azjax.games.base" in imports("azjax.uct")
  assert "azjax.nets" in imports("azjax.search")  # `from azjax.nets import mask_logits`


def test_no_import_cycles():
  graph = {module: imports(module) for module in MODULES}
  cycle = find_cycle(graph)
  assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_config_names_no_game():
  """The config imports no game's module: a game's options are the game's own declaration
  (`Game.options_spec`), asked for through the registry (`azjax.games.check_options`)."""
  game_modules = {m for m in MODULES if m.startswith("azjax.games.")} - {
      "azjax.games.base", "azjax.games.notation"}
  for module in (m for m in MODULES if m == "azjax.config" or m.startswith("azjax.config.")):
    assert not imports(module, functions=True) & game_modules, module


def test_the_algorithms_know_nothing_of_agents():
  for module in ("azjax.search", "azjax.uct", "azjax.alphabeta", "azjax.solver"):
    assert "azjax.agents" not in imports(module, functions=True), module


@pytest.mark.slow
def test_every_module_imports_alone():
  """Each module of the layers this file protects imports first, before any other azjax
  module. One interpreter does them all: it forgets every azjax module between two (the
  libraries they use stay loaded, since their order is not azjax's business), which is a
  fresh interpreter for azjax's part and saves seven starts of JAX."""
  modules = ["azjax.alphabeta", "azjax.uct", "azjax.solver", "azjax.search", "azjax.agents",
             "azjax.arena", "azjax.play", "azjax.play.web"]
  code = ("import importlib, sys\n"
          "for m in sys.argv[1:]:\n"
          "  for name in [n for n in sys.modules if n == 'azjax' or n.startswith('azjax.')]:\n"
          "    del sys.modules[name]\n"
          "  try:\n"
          "    importlib.import_module(m)\n"
          "  except Exception as err:\n"
          "    sys.exit(f'{m}: {type(err).__name__}: {err}')\n")
  result = subprocess.run([sys.executable, "-c", code, *modules], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
  assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.slow
def test_the_package_exposes_its_public_modules_lazily():
  """`import azjax; azjax.runs.load(...)` works, and `import azjax` alone imports no JAX."""
  code = ("import sys, azjax; assert 'jax' not in sys.modules; "
          "mods = [getattr(azjax, name) for name in azjax.__all__]; "
          "assert azjax.runs.load and azjax.games.make; print(len(mods))")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
  assert int(out.stdout) == len(__import__("azjax").__all__)


def test_modules_and_scripts_stay_short():
  """A module over 600 lines (or an entry script over 200) does several jobs: split it by job
  (as azjax/config/ and the evaluation modules were) rather than raise the limit."""
  long = [f"{p.relative_to(ROOT)}: {n} lines" for p in sorted((ROOT / "azjax").rglob("*.py"))
          if (n := len(p.read_text().splitlines())) > 600]
  long += [f"{p.relative_to(ROOT)}: {n} lines" for p in sorted((ROOT / "experiments").glob("*.py"))
           if (n := len(p.read_text().splitlines())) > 200]
  assert not long, "\n".join(long)



def test_no_import_cycles_function_level_imports_included():
  """Imports inside functions count too: a lazy import only hides a cycle until the day two
  modules are imported in an unlucky order, and it hides the layering from a reader."""
  graph = {module: imports(module, functions=True) for module in MODULES}
  cycle = find_cycle(graph)
  assert cycle is None, "import cycle (function-level imports included): " + " -> ".join(cycle)
