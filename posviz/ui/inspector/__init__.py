"""The checkpoint inspector's views (page_scripts/8_inspect.py): the page picks a model and a tab, these draw.

``source``: the source controls, loading a table, its summary and the links to the other pages; ``tables``: the
tabs about the loaded table (the table, similarity, projection, spectrum, probe, beside the sinusoidal table) and a
T5 bias; ``findings``: the classic findings about learned tables; ``compare``: a second checkpoint beside the
first; ``usage``: a RoPE model's frequencies from its config and what its q/k weights do with each.
"""
