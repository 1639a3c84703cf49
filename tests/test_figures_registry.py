"""The registry of the seed papers' figures, and the recipes that name the figures they regenerate."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest


def test_every_experimental_figure_of_the_seed_papers_is_registered():
    from stsbench.published.figures import RENDERERS, experimental_figures, get_figure, load_figures

    figures = load_figures()
    assert (
        len(figures) == 17 and len(experimental_figures()) == 16
    )  # the Gaussian report's multitask bars: out
    assert get_figure("gaussian-dropout/figure1").out_of_scope
    assert get_figure("mocose/figure2").numbers == {"best MTD, BERT-base (approx.)": 14.67}
    assert get_figure("mocose/figure2").ref_only and not get_figure("mocose/figure3").ref_only
    assert get_figure("simcse/figure4").caption.startswith("Density plots of cosine similarities")
    for f in figures.values():
        assert f.renderer in (*RENDERERS, None) and (f.drawn or f.missing or f.out_of_scope), f.key


def test_an_unknown_figure_is_one_line_with_the_nearest():
    from stsbench.errors import StsbenchError
    from stsbench.published.figures import get_figure

    with pytest.raises(StsbenchError, match="unknown figure 'mocose/figure08'; did you mean mocose/figure8"):
        get_figure("mocose/figure08")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda f: f.update(captoin="x"), "figure 'mocose/figure3': unknown figure key 'captoin' (did you mean 'caption'?)"),
        (lambda f: f.update(renderer="swep"), "figure 'mocose/figure3': renderer must be one of sweep, grid,"),
        (lambda f: f.update(renderer="grid"), "figure 'mocose/figure3': a grid figure names its setting"),
        (lambda f: f.pop("renderer"), "figure 'mocose/figure3': without a renderer, say what is missing"),
        (lambda f: f.update(id="figure2"), "published figures.yaml: duplicate figure mocose/figure2"),
    ],
)  # fmt: skip
def test_a_malformed_figure_is_one_line_naming_it_and_its_key(tmp_path, monkeypatch, edit, message):
    import yaml

    from stsbench.errors import StsbenchError
    from stsbench.published import figures

    text = resources.files("stsbench.published").joinpath("figures.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    assert data["figures"][2]["paper"] == "mocose" and data["figures"][2]["id"] == "figure3"
    edit(data["figures"][2])
    (tmp_path / "figures.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    monkeypatch.setattr(figures.resources, "files", lambda package: tmp_path)
    figures.load_figures.cache_clear()
    try:
        with pytest.raises(StsbenchError) as caught:
            figures.load_figures()
    finally:
        figures.load_figures.cache_clear()
    assert message in str(caught.value) and "\n" not in str(caught.value)


def _recipe(tmp_path: Path, base: str, replace: tuple[str, str]) -> Path:
    text = Path(f"stsbench/recipes/{base}.yaml").read_text().replace(*replace)
    path = tmp_path / "r.yaml"
    path.write_text(text.replace(f"name: {base}", "name: r", 1))
    return path


@pytest.mark.parametrize(
    ("base", "replace", "message"),
    [
        ("mocose-ema-paper", ("mocose/figure8,", "mocose/figure10,"), "drawn against out_size, which no run"),
        ("mocose-ema-paper", ("mocose/figure8,", "gaussian-dropout/figure1,"), "stsbench does not draw it"),
        (
            "mocose-ema-paper",
            ("mocose/figure8,", "mocose/figure7,"),
            "the spectrum analysis, which the recipe",
        ),
        ("mocose-ema-paper", ("mocose/figure8,", "nope/figure1,"), "unknown figure 'nope/figure1'"),
    ],
)
def test_a_recipe_names_only_figures_it_draws(tmp_path, base, replace, message):
    from stsbench.errors import StsbenchError
    from stsbench.recipes import load_recipe

    with pytest.raises(StsbenchError, match=message):
        load_recipe(_recipe(tmp_path, base, replace))


def test_the_list_gives_each_recipes_figures_and_the_docs_each_figure():
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.estimate import markdown, summary

    s = summary(load_recipe("mocose-ema-paper"))
    assert s["figures"] == ["mocose/figure8", "mocose/figure2", "mocose/figure4"] and s["analyses"] == ["align_uniform"]
    md = markdown([s])
    assert "| `mocose/figure8` |" in md and "`sweep` (ema_decay_start) | `mocose-ema-paper` |" in md
    assert "| `gaussian-dropout/figure1` |" in md and "out of scope" in md


def test_the_training_curve_and_spectra_renderers_have_the_papers_axes(tmp_path, monkeypatch):
    """MoCoSE Figures 5-6 (correlation over training) and 7 (singular values by index), on synthetic data."""
    import numpy as np

    from stsbench.analyses import figures, geometry
    from stsbench.reports import seeds as spread

    drawn = []
    monkeypatch.setattr(figures, "save", lambda fig, stem: drawn.append(fig) or [])
    curves = [("EMA 0", step, 80.0 - step / 10 + seed) for seed in (1, 2, 3) for step in (0, 10, 20)]
    spread.dev_curves_figure(curves, tmp_path / "curves")
    (ax,) = drawn.pop().axes
    assert ax.get_xlabel() == "training step" and ax.get_ylabel() == "STS-B dev Spearman x100"
    assert list(ax.lines[0].get_ydata()) == pytest.approx([82.0, 81.0, 80.0])  # the mean over the seeds
    values = list(np.linspace(1.0, 0.01, 8))

    def spectrum(centered: bool) -> geometry.Spectrum:
        return geometry.Spectrum(centered, "centred" if centered else "uncentred", 10.0, values, 5.0, 0.3, 8)

    result = geometry.SpectrumResult("STSBenchmark", "test", 20, 8, spectrum(False), spectrum(True), 0.5, 10, 1, 0.5)
    geometry.spectrum_figure({"BERT-base": result, "MoCoSE": result}, tmp_path / "spectra")
    raw, centred = drawn.pop().axes
    assert raw.get_ylabel() == "singular value / largest" and raw.get_yscale() == "log"
    assert raw.get_xlabel().startswith("index") and [len(a.lines) for a in (raw, centred)] == [2, 2]


def test_every_drawn_figure_is_regenerated_by_some_recipe():
    from stsbench.published.figures import experimental_figures
    from stsbench.recipes import load_recipe, recipe_names

    named = {key for name in recipe_names() for key in load_recipe(name).figures}
    drawn = {f.key for f in experimental_figures() if f.drawn}
    assert named == drawn and len(drawn) == 16 and all(f.drawn for f in experimental_figures())
    # SimCSE Figure 2 from the training logs' dev evaluations, every 10 steps as its caption says
    for name in ("simcse-trajectory-paper", "simcse-trajectory-official", "simcse-trajectory-mini"):
        recipe = load_recipe(name)
        assert recipe.figures == ("simcse/figure2",)
        assert {r.overrides["eval_steps"] for r in recipe.runs} == {10} and len(recipe.runs) == 4
    # MoCoSE Figure 9 is drawn from runs set apart by hand (the augmentations), not a sweep: still checked
    assert "mocose/figure9" in load_recipe("mocose-fgsm-paper").figures


def test_the_distance_to_a_point_against_the_traceable_distance(tmp_path, monkeypatch):
    """MoCoSE Figure 4's axes on synthetic rows, and the point's option refused in one line when malformed."""
    from stsbench.errors import StsbenchError
    from stsbench.reports import ablations
    from stsbench.reports.ablations import DISTANCE
    from stsbench.reports.collect import write_csv

    rows = []
    for mtd in (10.0, 14.67, 28.0):
        for seed in (1, 2, 3):
            a, u = 0.2 + seed / 100, -3.8 + mtd / 100
            da, du = a - 0.0, u + 4.0
            rows.append(
                [
                    "x",
                    str(seed),
                    repr(mtd),
                    repr(a),
                    repr(u),
                    repr(abs(da) + abs(du)),
                    repr((da**2 + du**2) ** 0.5),
                ]
            )
    data = write_csv(tmp_path / "d.csv", ablations.ALIGN_COLUMNS, rows)
    (ax,) = ablations.draw_distance(data, (0.0, -4.0)).axes
    assert ax.get_xlabel() == DISTANCE and ax.get_ylabel() == "distance of (l_align, l_uniform) to (0, -4)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["L1 distance", "L2 distance"]
    l1 = ax.lines[0].get_ydata()
    assert l1[0] == pytest.approx(0.22 + 0.3)  # mean over seeds at MTD 10: align 0.22, uniform -3.7
    assert ablations.parse_point("0.1,-3.9") == (0.1, -3.9)
    for bad in ("0", "a,b", "1,2,3", "nan,1"):
        with pytest.raises(StsbenchError, match="--align-point"):
            ablations.parse_point(bad)
