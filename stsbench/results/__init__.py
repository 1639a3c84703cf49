"""Results: what stsbench writes to read back, its schema, paths, readers, training runs and labels.

``schema.py`` documents every file (task and analysis results, training-run metadata), ``store.py`` builds
their paths and reads one file (one loader), ``folder.py`` reads a whole results folder (the one reader behind
check, compare, report and export-mteb; ``merge.py`` several of them as one, for report), ``sides.py`` the sides ``compare`` compares, ``runs.py`` a training
run, ``labels.py`` names models.
"""
