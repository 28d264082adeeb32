"""One module per positional-encoding family, pure and vectorised numpy. See ``registry`` for the list."""
