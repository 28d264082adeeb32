"""The bottom layer every other package of posviz uses, importing none of them: argument checks that turn a bad
value into a sentence (``checks``) and the sampling of positions and blocks (``sampling``)."""
