"""The controls and drawing of Myth or fact (page_scripts/12_claims.py). ``verdicts``: how a claim is stated with its
sources, the table of every verdict, the claims' controls; one module per group of claims draws each claim's view:
``sinusoidal``, ``learned``, ``rope``, ``attention`` (ALiBi and attention).

Each claim's entry is a function of no arguments that reads its control and draws its view, a function of that
setting in ``posviz.ui.views.claims_<group>`` (its figures, from ``posviz.lessons.claims``' evidence, and its
verdict)."""
