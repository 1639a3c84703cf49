"""Results: what stsbench writes to read back, its schema, paths, readers, training runs and labels.

``schema.py`` documents every file (task and analysis results, training-run metadata, seeds, a reproduction's
state) with one typed definition each, validates them and publishes their JSON schemas; ``write.py`` builds
their paths, labels and portable paths and writes them; ``read.py`` reads one file (the one loader), a whole
results folder (the one reader behind check, compare, report and export-mteb), several of them as one, and the
sides ``compare`` compares; ``runs.py`` training runs, seeds and what a recipe declares; ``mteb_layout.py``
MTEB's layout.
"""
