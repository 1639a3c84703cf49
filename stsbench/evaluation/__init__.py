"""The evaluation run: an encoder on tasks -> scored, written results.

:mod:`stsbench.evaluation.run` holds the one entry point (:func:`~stsbench.evaluation.run.evaluate`, public as
``stsbench.evaluate``; ``stsbench run`` calls it) and :func:`~stsbench.evaluation.run.evaluate_encoder`;
:mod:`stsbench.evaluation.seeds` runs it on every seed of a ``stsbench train --seeds`` folder and aggregates.
Importing the package imports neither module.
"""
