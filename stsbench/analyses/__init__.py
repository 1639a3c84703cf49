"""Analyses the papers run: length bias, alignment/uniformity, spectra, repetition probe."""

# ESimCSE's finer length-difference buckets (``stsbench length-bias --buckets``'s default); here, not in
# length_bias.py, so the command's option needs no numpy
DEFAULT_BUCKETS = "0,1-2,3-4,5-7,8+"
