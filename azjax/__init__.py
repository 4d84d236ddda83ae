"""azjax: AlphaZero-style self-play research in JAX."""

__version__ = "0.1.0"
