"""``stsbench reproduce``: a recipe's plan (train -> evaluate -> analyses -> report), run by an executor.

:mod:`~stsbench.reproduce.plan` turns a recipe into steps, each keyed by what determines it
(:mod:`~stsbench.reproduce.state`); :mod:`~stsbench.reproduce.state` keeps what was done in ``OUT/reproduce.json``
and seals what each step wrote; :mod:`~stsbench.reproduce.estimate` counts and prices a plan (and lists the
recipes); :mod:`~stsbench.reproduce.executors` starts the steps' commands (locally here, on Slurm through
submitit) and runs the plan; :mod:`~stsbench.reproduce.view` shows where it stands.
"""
