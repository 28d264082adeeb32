"""Core (pure numpy) test-suite of posviz: every encoding checked against an independent oracle."""
