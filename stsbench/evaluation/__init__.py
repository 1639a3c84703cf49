"""The evaluation run: an encoder on tasks -> scored, written results.

:mod:`stsbench.evaluation.run` holds the one entry point (:func:`~stsbench.evaluation.run.evaluate`, public as
``stsbench.evaluate``, and :func:`~stsbench.evaluation.run.evaluate_model`, the same with its encoder options
as one :class:`~stsbench.encoders.base.EncodeOptions`, which ``stsbench run`` calls) and
:func:`~stsbench.evaluation.run.evaluate_encoder`;
:func:`~stsbench.evaluation.run.run_seeds` runs it on every seed of a ``stsbench train --seeds`` folder and
aggregates. Importing the package does not import the module.
"""
