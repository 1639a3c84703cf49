"""Augmentations, at the three stages the papers' augmentations act at; importing this package imports none.

The registry (:mod:`.registry`, no torch) names each; the stages' base classes are in :mod:`.base`;
ESimCSE's repetition (tokens stage) is :mod:`.repetition`.
"""
