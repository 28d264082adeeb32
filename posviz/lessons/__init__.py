"""What the lesson pages compute beyond the encodings themselves: each module serves one page (or a few), from the
encodings in ``posviz.encodings`` and the analyses of any table in ``posviz.analysis``.

- ``attention_demo``: Home's attention head over a sentence and its shuffle;
- ``sinusoidal``: the Sinusoidal page's views without building the whole table (sampled rows, closed forms);
- ``precision``: float16 / bfloat16 / float32 tables against float64;
- ``compare``: every family on the same axes, and what each costs;
- ``pitfalls``: the mistakes, each beside the correct version;
- ``claims``: the articles' claims, each computed with its verdict;
- ``frequency_usage``: the inspector's frequency usage of a RoPE checkpoint and the score patterns its heads imply.
"""
