"""The views of Myth or fact (page_scripts/12_claims.py). ``verdicts``: how a claim is stated with its sources and
judged, and the table of every verdict; one module per group of claims draws each claim's evidence
(``posviz.lessons.claims`` computes it): ``sinusoidal``, ``learned``, ``rope``, ``attention`` (ALiBi and attention).

Each claim's view is a function of no arguments that reads its controls, draws its figures and returns the
``claims.Evidence`` its verdict is read from."""
