"""The checkpoint inspector's controls and loading (page_scripts/8_inspect.py); its figures are the views of
``posviz.ui.views.inspect_tables``, ``inspect_findings`` and ``inspect_usage``.

``source``: the source controls, loading a table, its summary and the links to the other pages; ``tables``: the
verdict on the table, the projection tab, and the layouts the views leave to the page; ``compare``: a second
checkpoint beside the first; ``usage``: a RoPE model's frequencies, with the controls of its frequency usage.
"""
