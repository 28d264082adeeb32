"""The bottom layer every other package of posviz uses, importing none of them: argument checks that turn a bad
value into a sentence (``checks``), the sampling of positions and blocks (``sampling``), and the one store bounded
by bytes (``store``)."""
