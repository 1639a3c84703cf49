"""MoCoSE Figure 7 over seeds: a group's geometric-mean spectrum with its seeds' band, the backbone beside."""

from __future__ import annotations

from types import SimpleNamespace

import pytest


def _result(values, rank=None):
    from stsbench.analyses.geometry import Spectrum, SpectrumResult

    def spectrum(centered: bool) -> Spectrum:
        k = len(values) if rank is None else rank
        return Spectrum(centered, "centred" if centered else "uncentred", 10.0, values, 2.0, 0.3, k)

    return SpectrumResult(
        "STSBenchmark", "test", 20, len(values), spectrum(False), spectrum(True), 0.5, 10, 1, 0.5
    )


def test_a_groups_spectrum_is_its_seeds_geometric_mean_with_their_band(tmp_path):
    from stsbench.reports.paper_figures import FIRST, draw_spectra, read_curves, spectrum_rows
    from stsbench.reports.paper_figures import write_spectrum_rows as write_rows

    seeds = [(s, f"MoCoSE seed {s}", _result([1.0, 0.1 * s, 0.01 * s, 1e-9])) for s in (1, 2, 4)]
    found = [SimpleNamespace(label="MoCoSE (n=3)", seeds=tuple(seeds))]
    # the backbone's last value is below round-off (rank 2): not written, not drawn
    rows = spectrum_rows(found, {"BERT-base": _result([1.0, 0.5, 1e-9], rank=2)})
    assert rows[0] == ["MoCoSE (n=3)", "1", "uncentred", "1", "0.1", "0.01", "1e-09"]
    assert rows[-1] == ["BERT-base", "", "centred", "1", "0.5"]
    data = write_rows(rows, tmp_path / "spectrum_test_groups.csv")
    header = data.read_text().splitlines()[0].split(",")
    assert header == [*FIRST, "s1", "s2", "s3", "s4"]
    long = read_curves(data)
    assert len(long) == 3 * 2 * 4 + 2 * 2 and set(long["index"]) == {1, 2, 3, 4}
    fig = draw_spectra(data, "spectrum_test")
    raw, centred = fig.axes
    assert raw.get_ylabel() == "singular value / largest" and raw.get_yscale() == "log"
    assert raw.get_xlabel().startswith("index")
    group, backbone = raw.lines
    assert list(group.get_ydata()) == pytest.approx([1.0, 0.2, 0.02, 1e-9])  # (1 x 2 x 4)^(1/3) = 2
    assert list(backbone.get_ydata()) == pytest.approx([1.0, 0.5]) and backbone.get_linestyle() == "--"
    band = raw.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(1e-9) and band.max() == pytest.approx(1.0)


def test_the_report_draws_the_groups_spectra_under_mocose_figure_7():
    from stsbench.published.figures import get_figure
    from stsbench.reports.collect import FigureOut
    from stsbench.reports.paper_figures import matches

    entry = get_figure("mocose/figure7")
    groups = FigureOut("g", "figures/spectrum_test_groups.svg", "", "analysis-groups", "spectrum")
    one = FigureOut("c", "figures/spectrum_test.svg", "", "analysis", "spectrum")
    seeds = FigureOut("s", "figures/spectrum_test_seeds.svg", "", "analysis-seeds", "spectrum")
    assert matches(entry, groups) and matches(entry, one) and not matches(entry, seeds)
    # a file named like a spectrum is not one: what a figure draws is its tags, never its name
    assert not matches(entry, FigureOut("x", "figures/spectrum_test.svg", "", "analysis", "length_bias"))
