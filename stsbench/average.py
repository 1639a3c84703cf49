"""The name of SimCSE's Avg. wherever stsbench writes it: a table's column, a seed aggregate's or a comparison's key.

The figure itself is :func:`stsbench.metrics.simcse_average` (the mean of the rounded task figures). This module
imports nothing, so every layer (statistics, published numbers, results, reports) takes the one spelling here.
"""

AVG = "Avg."
