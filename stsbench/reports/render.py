"""Render a :class:`~stsbench.reports.layout.Report` as ``report.md`` and a self-contained ``report.html``.

The templates (``templates/*.j2``) only loop; every string they print is made here or in the table and
section builders. ``report.md`` links the figures' SVG files beside it; ``report.html`` inlines them as
base64 PNG, so it reads offline on its own. No timestamp is written: the same results give the same bytes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stsbench.analyses.figures import stamped
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json, atomic_write_text
from stsbench.reports.build import ReportSpec, build_report
from stsbench.reports.collect import collect, only
from stsbench.reports.layout import Report
from stsbench.reports.reproduction import Target, reproduction_json
from stsbench.reports.seeds import BASELINE
from stsbench.results.runs import report_banner
from stsbench.results.write import Checkout
from stsbench.stats.claims import Claim
from stsbench.stats.decide import CELL_DELTA
from stsbench.tabular import to_html, to_markdown

FIGURES = "figures"
REPRODUCTION_JSON = "reproduction.json"
_CODE = re.compile(r"`([^`]+)`")


def _env():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("stsbench.reports", "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=lambda name: bool(name and name.endswith(".html.j2")),
        undefined=jinja2.StrictUndefined,
    )


_LINK = re.compile(r"\[([^\]]+)\]\((#[\w-]+)\)")  # a link to a section of the report
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def inline_html(text: str) -> Any:
    """Escape ``text``; its `code` spans, **bold** and links to the report's sections as HTML the template keeps."""
    from markupsafe import Markup

    out = _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text, quote=False))
    out = _LINK.sub(lambda m: f'<a href="{m.group(2)}">{m.group(1)}</a>', out)
    return Markup(_BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", out))


def _view(report: Report, for_html: bool) -> dict[str, Any]:
    """Plain data for a template: every string already rendered for its format."""
    from markupsafe import Markup

    text = inline_html if for_html else (lambda s: s)
    return {
        "title": report.title,
        "paragraphs": [text(p) for p in report.paragraphs],
        "sections": [
            {
                "title": s.title,
                "anchor": s.anchor,
                "paragraphs": [text(p) for p in s.paragraphs],
                "tables": [
                    {
                        "title": t.title,
                        "markdown": to_markdown(t),
                        "html": Markup(to_html(t)),
                        "notes": [text(n) for n in t.notes],
                    }
                    for t in s.tables
                ],
                "figures": [
                    {
                        "title": f.title,
                        "svg": f.svg,
                        "png": f.svg[: -len(".svg")] + ".png",
                        "png_base64": f.png_base64,
                    }
                    for f in s.figures
                ],
            }
            for s in report.sections
        ],
    }


def render_markdown(report: Report) -> str:
    """GitHub Markdown, figures linked relatively."""
    return _env().get_template("report.md.j2").render(report=_view(report, False))


def render_html(report: Report) -> str:
    """One HTML file with the figures inlined (base64 PNG) and its CSS in a ``<style>``."""
    return _env().get_template("report.html.j2").render(report=_view(report, True))


@dataclass
class ReportFiles:
    """What :func:`write_report` wrote, and the files it skipped."""

    markdown: Path
    html: Path
    figures: list[Path]
    warnings: list[str]
    report: Report
    reproduction: Path | None = None  # reproduction.json, when published rows were compared


def write_report(
    results: str | Path | Sequence[str | Path],
    out: str | Path,
    title: str | None = None,
    command: str | None = None,
    baseline: str = BASELINE,
    against: Sequence[Target] = (),
    difference: float = CELL_DELTA,
    strict: bool = False,
    notes: Sequence[str] = (),
    claims: Sequence[Claim] = (),
    banner: str | None = None,
    figures: Sequence[str] = (),
    align_point: tuple[float, float] | None = None,
    runs: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    checkout: Checkout | None = None,
) -> ReportFiles:
    """Collect ``results`` (a folder, or several merged), write ``out/report.md``, ``report.html``, ``figures/*``.

    Figures of an earlier report in ``out/figures`` that this one does not draw are removed, so the folder
    holds exactly what the report links. ``baseline``: the method (or group) the groups of seeds are
    compared with. ``against``: published rows to reproduce; their verdicts (``difference``: the difference
    that matters) are the Reproduction section and ``out/reproduction.json`` (an earlier one is removed when
    none is given). Results folders holding nothing to report are an error, before anything is written
    (``strict`` is the command's: a file that cannot be read then gives exit 1). ``notes``: lines in bold
    under the opening paragraph. ``claims``: a table's claims
    (:mod:`stsbench.stats.claims`), judged on the groups of seeds in a Claims section and in ``reproduction.json``.
    ``banner``: a line set on every table and figure (a mini edition's "not the paper's setting"). ``figures``:
    the papers' figures the results regenerate (:mod:`stsbench.published.figures` keys), each a section.
    ``align_point``: MoCoSE Figure 4's fixed point (l_align, l_uniform), default (0, -4). ``command``: the
    command line the report says it was made by, quoted as typed (its paths as given: an absolute ``--out`` stays
    absolute). ``checkout``: the stsbench checkout making the report (:func:`stsbench.results.write.checkout`);
    where its package files differ from its commit, the Provenance section names them (None: nothing said, as
    for a clean one).
    """
    out = Path(out)
    coll = only(collect(results), runs, seeds)  # a subset's report shows that subset, every table and figure
    if coll.empty:  # a report of empty sections says nothing: refused before anything is written
        raise StsbenchError(
            f"nothing to report under {', '.join(coll.folders)}: no task results, analyses or training runs; "
            "give the --results folder that `stsbench run`, the analyses or `stsbench train` wrote"
        )
    folders = [results] if isinstance(results, (str, Path)) else list(results)
    # the scale the results were made at is theirs: kept however the report is made
    banner = report_banner(coll.folders, banner)
    given = " ".join(f"--results {f}" for f in folders)
    # quoted as typed: a path made relative to the working folder read as written elsewhere ("--out ../runs/x")
    command = command or f"stsbench report {given} --out {out}"
    name = title or f"stsbench report: {out.resolve().name}"
    with stamped(banner):  # every image carries the banner itself
        spec = ReportSpec(
            name,
            command,
            baseline,
            tuple(against),
            difference,
            tuple(notes),
            tuple(claims),
            banner,
            tuple(figures),
            **({"align_point": align_point} if align_point is not None else {}),
            checkout=checkout,
        )
        report = build_report(coll, spec, out / FIGURES, out=out)
    kept = {p.resolve() for p in report.figures}
    for stale in sorted((out / FIGURES).glob("*")):
        if stale.suffix in (".png", ".svg", ".csv") and stale.resolve() not in kept:
            stale.unlink()
    md = atomic_write_text(out / "report.md", render_markdown(report))
    page = atomic_write_text(out / "report.html", render_html(report))
    verdicts = out / REPRODUCTION_JSON
    judged = bool(against or claims)
    if judged:
        atomic_write_json(verdicts, reproduction_json(report.reproduction, difference, report.claims))
    elif verdicts.is_file():  # an earlier report's verdicts, not this one's
        verdicts.unlink()
    return ReportFiles(md, page, report.figures, report.warnings, report, verdicts if judged else None)
