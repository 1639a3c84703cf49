"""Figures from sweeps: a figure against the swept setting, seeds as points, the mean and its interval, from a CSV."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli
from seed_results import OFFSETS, SEEDS, make_seed_results

T_975_DF2 = 4.302652729911275  # scipy.stats.t.ppf(0.975, 2): the t quantile of 3 seeds


def _csv(path: Path, rows: list[dict]) -> Path:
    from stsbench.reports.ablations import COLUMNS

    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "") for c in COLUMNS})
    return path


def test_a_batch_size_sweep_is_drawn_against_the_setting_with_the_seed_interval(tmp_path):
    from stsbench.reports.ablations import DEV, draw_sweep, sweep_figure

    # ESimCSE arXiv Figure 2's axes: STS-B dev against the batch size; seeds at mean -1, 0, +1
    means = {32: 80.0, 64: 82.0, 128: 81.0}
    rows = [
        {"setting": str(b), "seed": str(s), "best_dev": repr(m + OFFSETS[SEEDS.index(s)]), "published": ""}
        for b, m in means.items()
        for s in SEEDS
    ]
    rows[0]["published"], rows[0]["published_key"] = "84.0", "esimcse-arxiv/figure2#batch=32"
    data = _csv(tmp_path / "sweep.csv", rows)
    fig = draw_sweep(data, "batch_size", title="ESimCSE: against batch_size")
    ours, published = fig.axes
    assert (
        ours.get_xlabel() == "batch size" and ours.get_ylabel() == DEV
    )  # the option's label, the paper's words
    mean_line = ours.lines[0]
    assert list(mean_line.get_xdata()) == [32, 64, 128] and list(mean_line.get_ydata()) == [80.0, 82.0, 81.0]
    band = ours.collections[0].get_paths()[0].vertices[:, 1]  # the 95% t-interval over 3 seeds
    half = T_975_DF2 / 3**0.5
    assert band.min() == pytest.approx(80.0 - half) and band.max() == pytest.approx(82.0 + half)
    assert published.get_ylabel() == "published: esimcse-arxiv/figure2"  # an axis of its own: another model
    assert list(published.lines[0].get_ydata()) == [84.0]
    paths = sweep_figure(data, tmp_path / "sweep", "batch_size")
    assert sorted(p.suffix for p in paths) == [".png", ".svg"]
    assert sweep_figure(data, tmp_path / "again", "batch_size")[1].read_bytes() == paths[1].read_bytes()


def test_a_grid_draws_a_line_per_value_of_its_second_field(tmp_path):
    from stsbench.reports.ablations import draw_sweep

    # MoCoSE Figure 13's axes: a figure against the queue size, a line per initial queue size
    rows = [
        {
            "setting": str(q),
            "series": str(init),
            "seed": str(s),
            "best_dev": repr(70.0 + q / 1000 + init / 100 + s),
        }
        for q in (512, 1024, 4096)
        for init in (64, 256)
        for s in SEEDS
    ]
    fig = draw_sweep(_csv(tmp_path / "grid.csv", rows), "queue_size", "queue_init")
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert ax.get_xlabel() == "queue size" and labels == ["64", "256"]


@pytest.fixture(scope="module")
def swept(tmp_path_factory) -> Path:
    """The seeds fixture plus a second ESimCSE group, identical but for dup_rate 0.16 (the first has 0.32)."""
    root = make_seed_results(tmp_path_factory.mktemp("sweep") / "results")
    for seed in SEEDS:
        src, dest = (
            root / "train" / "esimcse" / f"seed-{seed}",
            root / "train" / "esimcse-dup" / f"seed-{seed}",
        )
        shutil.copytree(src, dest)
        meta = json.loads((dest / "stsbench.json").read_text())
        meta["training"].update(dup_rate=0.16, output=f"/runs/seeds/esimcse-dup/seed-{seed}")
        (dest / "stsbench.json").write_text(json.dumps(meta))
        lines = []
        for line in (dest / "train_log.jsonl").read_text().splitlines():
            rec = json.loads(line)
            if rec.get("event") == "start":
                rec["config"].update(dup_rate=0.16, output=f"/runs/seeds/esimcse-dup/seed-{seed}")
            if rec.get("event") == "end":
                rec["best_dev_spearman"] -= 0.01
            lines.append(json.dumps(rec))
        (dest / "train_log.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _sweep_rows(tmp_path: Path) -> tuple[list[dict], str]:
    (data,) = (tmp_path / "figures").glob("sweep_dup_rate_*.csv")
    with data.open() as f:
        return list(csv.DictReader(f)), data.name


def test_the_report_draws_each_sweep_over_seeds_from_the_csv_beside_it(swept, tmp_path):
    """Each setting beside the cell its runs are held against: the recipe's (its runs file), else --against's."""
    from stsbench.reports.render import write_report
    from stsbench.reports.reproduction import parse_against
    from stsbench.results.runs import RECIPE_RUNS_FILE

    table9 = "esimcse-arxiv/table9/dup-rate#dup_rate="
    write_report(swept, tmp_path / "bare", "sweep", "stsbench report (test)")  # no recipe, no --against: none
    rows, _ = _sweep_rows(tmp_path / "bare")
    assert {r["published"] for r in rows} == {""} and "Published: none" in (tmp_path / "bare" / "report.md").read_text()
    against = parse_against([f"esimcse-dup={table9}0.16", f"esimcse={table9}0.32"])
    write_report(swept, tmp_path / "against", "sweep", "stsbench report (test)", against=against)
    recipe = tmp_path / "recipe" / "results"
    shutil.copytree(swept, recipe)
    runs = [{"name": n, "label": None, "method": "esimcse", "sweep_of": "dup", "point": {"dup_rate": float(v)},
             "published": [f"{table9}{v}"]} for n, v in (("esimcse-dup", "0.16"), ("esimcse", "0.32"))]  # fmt: skip
    (recipe / RECIPE_RUNS_FILE).write_text(json.dumps({"kind": "stsbench.recipe_runs", "recipe": "toy", "runs": runs}))
    write_report(recipe, tmp_path / "recipe", "sweep", "stsbench report (test)")
    for out in (tmp_path / "against", tmp_path / "recipe"):
        rows, name = _sweep_rows(out)
        assert [(r["setting"], r["seed"]) for r in rows] == [(d, str(s)) for d in ("0.16", "0.32") for s in SEEDS]
        dev = {(r["setting"], r["seed"]): float(r["best_dev"]) for r in rows}
        assert dev[("0.32", "2")] - dev[("0.16", "2")] == pytest.approx(1.0)  # the fixture's 0.01 x100
        published = {r["setting"]: (r["published"], r["published_key"]) for r in rows}
        assert published == {"0.32": ("84.85", f"{table9}0.32"), "0.16": ("82.01", f"{table9}0.16")}  # Table 9
        md = (out / "report.md").read_text()
        assert (out / "figures" / name).with_suffix(".svg").is_file() and f"data: `{name}`" in md
        assert f"| {table9}0.16 |" in md and "Published: the cell the recipe (or --against) holds" in md


def test_a_sweep_against_the_traceable_distance_its_settings_set(tmp_path):
    from stsbench.reports.ablations import DISTANCE, draw_sweep, logged_distance, varies_in_distance
    from stsbench.results.runs import load_train_run

    # MoCoSE Figures 2 and 3's axis: the distance 1 / (1 - decay) + queue / batch each EMA decay sets
    rows = [
        {
            "setting": str(d),
            "seed": str(s),
            "best_dev": repr(80.0 + s),
            "traceable_distance": repr(1 / (1 - d) + 8),
        }
        for d in (0.5, 0.85, 0.99)
        for s in SEEDS
    ]
    data = _csv(tmp_path / "ema.csv", rows)
    from stsbench.reports.ablations import COLUMNS

    as_rows = [[r.get(c, "") for c in COLUMNS] for r in rows]
    assert varies_in_distance(as_rows) and not varies_in_distance([r[:7] + ["10.0", ""] for r in as_rows])
    (ax,) = draw_sweep(data, "ema_decay_start", x="traceable_distance").axes
    assert ax.get_xlabel() == DISTANCE
    assert list(ax.lines[0].get_xdata()) == pytest.approx([10.0, 1 / 0.15 + 8, 108.0])
    # the distance a run logged: a fixed weight's, or a ramped one's at its final weight, flagged
    folder = tmp_path / "run"
    folder.mkdir()
    for logged, expected in (
        ({"start": 14.67, "end": 14.67}, (14.67, False)),
        ({"start": 10.0, "end": 108.0}, (108.0, True)),
        (None, (None, False)),
    ):
        start = {"event": "start", "config": {"method": "mocose"}}
        start.update({"traceable_distance": logged} if logged else {})
        (folder / "train_log.jsonl").write_text(json.dumps(start) + "\n")
        run, warnings = load_train_run(folder, "run")
        assert run is not None and not warnings
        assert logged_distance(run) == expected


def test_a_sweep_of_named_settings_draws_the_same_bytes_twice(tmp_path):
    from stsbench.reports.ablations import sweep_figure

    # on/off (SimCSE Table 4's Fixed 0.1): a categorical axis, the seeds as points without random jitter
    rows = [
        {"setting": v, "seed": str(s), "best_dev": repr(87.0 + s / 10)} for v in ("off", "on") for s in SEEDS
    ]
    data = _csv(tmp_path / "mask.csv", rows)
    first = sweep_figure(data, tmp_path / "a", "fixed_dropout_mask")[1].read_bytes()
    assert sweep_figure(data, tmp_path / "b", "fixed_dropout_mask")[1].read_bytes() == first


def test_axes_and_titles_read_the_papers_words_and_the_seeds_once(tmp_path):
    from stsbench.reports.ablations import draw_sweep

    # MoCoSE Table 3 / Figure 8: STS against the "EMA decay weight", not the option's name ema_decay_start
    rows = [
        {"setting": str(w), "seed": str(s), "best_dev": repr(80.0 + s)} for w in (0.5, 0.9) for s in SEEDS
    ]
    fig = draw_sweep(_csv(tmp_path / "ema.csv", rows), "ema_decay_start")
    assert fig.axes[0].get_xlabel() == "EMA decay weight"
    title = fig._suptitle.get_text()
    assert "(3 seeds a setting)" in title and "3-3" not in title
    fewer = _csv(tmp_path / "fewer.csv", rows[:-1])  # the last setting lost a seed
    assert "(2-3 seeds a setting)" in draw_sweep(fewer, "ema_decay_start")._suptitle.get_text()
    # an option without a label (or one not a training option) keeps its name
    assert draw_sweep(fewer, "temperature").axes[0].get_xlabel() == "temperature"


def test_every_option_a_built_in_recipe_sweeps_has_a_label_in_its_definition():
    from stsbench.recipes import load_recipe, recipe_names
    from stsbench.train.config import OPTIONS

    swept = {
        o for name in recipe_names() for run in load_recipe(name).runs if run.sweep_of for o in run.point
    }
    assert swept  # the recipes sweep something
    assert {o for o in swept if not OPTIONS[o].label} == set()


def test_the_banner_belongs_to_the_results_and_the_images_carry_it(swept, tmp_path):
    from PIL import Image

    from stsbench.reports.render import write_report
    from stsbench.results.runs import write_scale

    results = tmp_path / "results"
    shutil.copytree(swept, results)
    banner = "Mini scale: tiny, 3 steps: not the paper's setting."
    write_scale(results, banner)  # as reproduce writes it beside a mini recipe's results
    write_report(results, tmp_path / "by-hand", "by hand", "stsbench report (by hand, no --banner)")
    md = (tmp_path / "by-hand" / "report.md").read_text()
    assert md.split("\n\n")[1] == f"**{banner}**"  # first under the title
    assert md.count(banner) == 1  # once: it was on every table and every figure's caption (39 times in an edition)
    figures = [line for line in md.splitlines() if line.startswith("![")]
    assert figures
    for png in (tmp_path / "by-hand" / "figures").glob("*.png"):  # and the image files themselves
        assert Image.open(png).text["Description"] == banner, png.name
        assert banner in png.with_suffix(".svg").read_text(), png.name
    # given again on the command line (write_report's --banner), it is said once; another one is added to it
    from stsbench.results.runs import report_banner

    assert report_banner([results], banner) == banner and report_banner([tmp_path], None) is None
    assert report_banner([results], "also: 2 seeds only") == f"{banner}; also: 2 seeds only"


def test_a_broken_scale_file_is_named_in_one_line(swept, tmp_path, capsys):
    results = tmp_path / "results"
    shutil.copytree(swept, results)
    (results / "scale.json").write_text("{", encoding="utf-8")
    code, out, err = run_cli(["report", "--results", results, "--out", tmp_path / "out"], capsys)
    assert code == 2 and "scale.json: not readable JSON" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "report.md").exists()
