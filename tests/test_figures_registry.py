"""The registry of the seed papers' figures, and the recipes that name the figures they regenerate."""

from __future__ import annotations

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
        ("mocose-ema-paper", ("mocose/figure8,", "simcse/figure2,"), "stsbench does not draw it"),
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
    from stsbench.reproduce.listing import markdown, summary

    s = summary(load_recipe("mocose-ema-paper"))
    assert s["figures"] == ["mocose/figure8", "mocose/figure2"] and s["analyses"] == []
    md = markdown([s])
    assert "| `mocose/figure8` |" in md and "`sweep` (ema_decay_start) | `mocose-ema-paper` |" in md
    assert "| `gaussian-dropout/figure1` |" in md and "out of scope" in md
