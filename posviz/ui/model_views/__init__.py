"""The Models page's pieces (page_scripts/13_models.py): ``source`` picks and reads a config.json (a preset, pasted,
uploaded, a model folder, the local cache); ``words`` says what a model does to positions, layer by layer, in words
and in the layer map."""
