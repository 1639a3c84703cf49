"""The five built-in analyses: one registry line each, in the order the commands and the report's sections follow.

Each analysis is one module: its options (a frozen dataclass: the CLI's flags come from its fields), the data
files it reads (they go into provenance), its compute, result type, the report's tables, its figure, its figures
one by one, and the class that names them (see :mod:`stsbench.analyses.registry`). A module is imported when its
analysis is first looked up; it imports numpy at the top, and pandas, scipy and matplotlib only where a table or a
figure is made, so building the CLI stays fast.
"""

from __future__ import annotations

from stsbench.analyses.registry import ANALYSES

ANALYSES.register("length_bias", "stsbench.analyses.length_bias:LengthBias")
ANALYSES.register("repetition_probe", "stsbench.analyses.repetition:RepetitionProbe")
ANALYSES.register("align_uniform", "stsbench.analyses.geometry:AlignUniform")
ANALYSES.register("spectrum", "stsbench.analyses.geometry:SpectrumAnalysis")
ANALYSES.register("cosine_density", "stsbench.analyses.geometry:CosineDensity")
