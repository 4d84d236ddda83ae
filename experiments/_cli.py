"""The training command lives in `azjax.cli.train`; this name stays for scripts that import it."""

from azjax.cli.train import (  # noqa: F401
    add_compile_cache_options,
    build_config,
    main,
    new_run_dir,
    use_compile_cache,
)
