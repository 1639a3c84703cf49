"""Results: what stsbench writes to read back, its schema, paths, loader, training runs and labels.

``schema.py`` documents every file (task and analysis results, training-run metadata), ``store.py`` builds
their paths and reads them (one loader), ``runs.py`` reads a training run, ``labels.py`` names models.
"""
