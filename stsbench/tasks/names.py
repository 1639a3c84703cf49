"""Task names, task sets and the spellings users type, without importing a task (no torch, no scipy).

A command checks ``--tasks`` here before anything heavy loads, so a typo is refused at once, with the nearest
name. The names are SentEval's; the short names are the papers' column headers, which stsbench prints too and
so accepts.
"""

from __future__ import annotations

import difflib
import re

from stsbench.errors import StsbenchError

STS_TASK_NAMES = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness")
TRANSFER_TASK_NAMES = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")  # SimCSE's order
TASK_NAMES = STS_TASK_NAMES + TRANSFER_TASK_NAMES
TASK_SETS: dict[str, tuple[str, ...]] = {"sts": STS_TASK_NAMES, "transfer": TRANSFER_TASK_NAMES, "full": TASK_NAMES}
SHORT_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}  # the papers' column headers


def _key(name: str) -> str:
    """A spelling reduced to what tells tasks apart: ``STS-B``, ``sts_b`` and ``STSB`` all give ``stsb``."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


_SPELLINGS: dict[str, str] = {
    **{_key(n): n for n in TASK_NAMES},
    **{_key(short): n for n, short in SHORT_NAMES.items()},
}


def task_names(spec: str | list[str]) -> list[str]:
    """``sts``, ``full``, ``STS12,STS-B`` (or a list of those) as SentEval task names, in order, once each.

    Raises ``StsbenchError`` for an unknown name, suggesting the nearest known one.
    """
    items = spec.split(",") if isinstance(spec, str) else [s for x in spec for s in x.split(",")]
    names: list[str] = []
    for raw in (i.strip() for i in items):
        if not raw:
            continue
        if raw.lower() in TASK_SETS:
            names += TASK_SETS[raw.lower()]
        elif _key(raw) in _SPELLINGS:
            names.append(_SPELLINGS[_key(raw)])
        else:
            known = [*TASK_SETS, *TASK_NAMES, *SHORT_NAMES.values()]
            near = difflib.get_close_matches(raw, known, n=1, cutoff=0.6) or difflib.get_close_matches(
                raw.lower(), [k.lower() for k in known], n=1, cutoff=0.6
            )
            hint = f"did you mean '{_SPELLINGS.get(_key(near[0]), near[0])}'? " if near else ""
            raise StsbenchError(
                f"unknown task '{raw}'; {hint}choose from: {', '.join([*TASK_SETS, *TASK_NAMES])}"
            )
    if not names:
        raise StsbenchError("no task given; use --tasks sts (or transfer, full, or task names)")
    return list(dict.fromkeys(names))
