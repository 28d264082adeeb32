"""The Models page's pieces that need Streamlit (page_scripts/13_models.py): ``source`` picks a config.json (a
preset, pasted, uploaded, a model folder, the local cache) and checks it; ``words`` notes the keys transformers
ignores. The figures and sentences are views, in ``posviz/ui/views/models.py``."""
