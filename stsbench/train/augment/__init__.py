"""Augmentations, at the three stages the papers' augmentations act at; importing this package imports none.

The registry (:mod:`stsbench.train.config.options`, no torch, beside the method registry) names each; the
stages' base classes are in :mod:`.base`; ESimCSE's repetition (tokens stage) is :mod:`.repetition`; SimCSE
Table 2's crop and deletions are :mod:`.deletion`.
"""
