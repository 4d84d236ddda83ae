"""Run configuration: one flat frozen dataclass whose fields are declared by section, named
presets, config files and `key=value` overrides.

A flat config keeps overrides short (`--set learning_rate=3e-4`) and lets a sweep name any
field. Everything is checked by `Config.validate()` before anything compiles.

Each field is documented once, where it is declared (`fields.py`): a `Section` declares it with
its meaning, unit, allowed values (`choices`, or a range `check` that `validate` applies) and
whether the runs of one vmapped sweep group may differ in it (`traced`). `--print-config`, the
file `docs/config.md` (`python -m azjax.config --markdown`) and the checks read them from there.

A run's settings come from a preset (`presets.py`), then a file (`files.read_settings`: JSON
or TOML), then `key=value` overrides (`override`). The modules:

    fields.py     the declarations, `Config`, its checks, key names and overrides
    checks.py     what every learner's config checks of its declared fields (`ConfigError`)
    game_options.py  which keys are options of the game (`--set rows=6`), older flat keys
    files.py      config files (JSON, TOML), a run directory's config.json, `to_toml`
    presets.py    the named presets
    reference.py  docs/config.md, and `python -m azjax.config`
"""

from azjax.config.fields import (  # noqa: F401
    TRACED_KEYS,
    Check,
    Config,
    ConfigError,
    Section,
    field_choices,
    field_help,
    flat_settings,
    override,
    parse_overrides,
    resolve_key,
)
from azjax.config.files import CONFIG_FILE, read_config, read_settings, to_toml, write_config  # noqa: F401
from azjax.config.presets import PRESETS, has_accelerator, preset, resolve_preset_name  # noqa: F401
from azjax.config.reference import main, non_defaults, reference_markdown  # noqa: F401
