"""``stsbench reproduce``: a recipe's plan (train -> evaluate -> analyses -> report), run by an executor.

:mod:`~stsbench.reproduce.plan` turns a recipe into steps, each keyed by what determines it;
:mod:`~stsbench.reproduce.state` keeps what was done in ``OUT/reproduce.json``; :mod:`~stsbench.reproduce.executors`
starts the steps' commands (locally here, on Slurm through submitit); :mod:`~stsbench.reproduce.scheduler`
runs the plan and shows the jobs.
"""
