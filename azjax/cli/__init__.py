"""azjax's commands: one module per command, each with a `main(argv)`, behind one front door.

    azjax train GAME [options]      azjax.cli.train      (python -m experiments.<game>)
    azjax evaluate [options]        azjax.cli.evaluate   (python -m experiments.evaluate)
    azjax play [options]            azjax.cli.play      (python -m experiments.play)
    azjax sweep [options]           azjax.cli.sweep      (python -m experiments.sweep)
    azjax probe [options]           azjax.cli.probe      (python -m experiments.probe)
    azjax export [options]          azjax.cli.export     (python -m experiments.export)
    azjax efficiency [options]      azjax.cli.efficiency (python -m experiments.efficiency)

`azjax.cli.main` is the console command `azjax` (pyproject's [project.scripts]); it imports a
command's module only when that command runs, so `azjax --help` imports no JAX. The scripts
in experiments/ are shims over the same `main`s. `azjax.cli.common` holds what the commands
share: how the user called them, the command line they record, checks of counts.
"""
