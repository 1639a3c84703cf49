"""Uncertainty: bootstrap intervals over pairs, paired comparisons, tests, seed statistics."""
