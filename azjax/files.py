"""Small file helpers every layer uses: atomic writes, a folder's files replaced together, and
JSONL tables of rows."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence


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


@contextlib.contextmanager
def staged(directory: str | os.PathLike, replaces: Sequence[str] = ()) -> Iterator[Path]:
  """Yields a new folder inside `directory` (made if need be) for the block to write its files
  into; once the block has ended without an error, they are renamed into `directory` one by one
  with Ctrl-C held off (a moment), and the files named in `replaces` that it did not write are
  removed (an earlier output's leftovers, which would not match). A block ended by an error or a
  Ctrl-C leaves `directory` as it was, and no half-written file: the folder is removed, and so
  is `directory` if this made it and it holds nothing else.
  """
  directory = Path(directory)
  made = not directory.exists()
  directory.mkdir(parents=True, exist_ok=True)
  stage = Path(tempfile.mkdtemp(prefix=".staged-", dir=directory))
  try:
    yield stage
    written = sorted(stage.iterdir())
    # Only the main thread may set a handler (and only there does Ctrl-C raise).
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
      for name in set(replaces) - {p.name for p in written}:
        (directory / name).unlink(missing_ok=True)
      for path in written:
        os.replace(path, directory / path.name)
    finally:
      if previous is not None:  # None: a handler not set from Python, left as it was.
        signal.signal(signal.SIGINT, previous)
  finally:
    shutil.rmtree(stage, ignore_errors=True)
    if made and not any(directory.iterdir()):
      directory.rmdir()


def read_jsonl(path: str | os.PathLike) -> list[dict[str, Any]]:
  """The rows of a JSONL file (gzip-compressed if its name ends in .gz), oldest first; a last
  line cut short by a crash (in the middle of appending it) is skipped.

  Raises:
    ValueError: another line is not JSON (the message names the file and the line).
  """
  path = Path(path)
  if path.suffix == ".gz":
    with gzip.open(path, "rt") as f:
      lines = f.read().splitlines()
  else:
    lines = path.read_text().splitlines()
  rows = []
  for number, line in enumerate(lines, 1):
    if not line.strip():
      continue
    try:
      rows.append(json.loads(line))
    except ValueError:
      if number == len(lines):
        break
      raise ValueError(f"{path}, line {number}: not a JSON row") from None
  return rows


def write_jsonl(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> Path:
  """Writes `rows`, one JSON object a line, atomically (creating the folder)."""
  path = Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  return write_atomic(path, "".join(json.dumps(dict(r)) + "\n" for r in rows))


def append_jsonl(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> Path:
  """Appends `rows` to a JSONL file (creating it and its folder); a crash can only tear the
  last line, which `read_jsonl` skips."""
  path = Path(path)
  path.parent.mkdir(parents=True, exist_ok=True)
  with open(path, "a") as f:
    f.write("".join(json.dumps(dict(r)) + "\n" for r in rows))
  return path
