"""`python -m azjax.config --markdown` prints docs/config.md (`reference.main`)."""

from azjax.config.reference import main

main()
