"""Analyses the papers run: length bias, alignment/uniformity, spectra, repetition probe."""
