"""SimCSE Figure 2 from training logs: the rows, the CSV beside the figure, and the figure's axes and arrows."""

from __future__ import annotations

import json

import pytest


def _log(folder, seed, points, method="simcse"):
    folder.mkdir(parents=True)
    records = [{"event": "start", "step": 0, "config": {"method": method, "seed": seed}}]
    records += [
        {"event": "eval", "step": s, "dev_spearman": 0.8, "best": s == 10, "alignment": a, "uniformity": u}
        for s, a, u in points
    ]
    (folder / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_rows_follow_each_runs_logged_evaluations(tmp_path):
    from stsbench.reports.paper_figures import trajectory_rows
    from stsbench.results.runs import load_train_run

    _log(tmp_path / "a", 1, [(0, 0.2, -2.0), (10, 0.25, -3.0), (20, None, None)])
    _log(tmp_path / "b", 2, [])
    runs = [load_train_run(tmp_path / n, n)[0] for n in ("a", "b")]
    rows = trajectory_rows([], runs, {"a": "SimCSE"})
    # a non-finite point (null in the log) is left out; a run without a trajectory gives no rows
    assert rows == [["SimCSE", "1", "0", "-2.0", "0.2"], ["SimCSE", "1", "10", "-3.0", "0.25"]]


def test_the_figure_has_the_papers_axes_the_mean_path_and_its_arrows(tmp_path):
    from stsbench.analyses import figures
    from stsbench.reports.collect import write_csv
    from stsbench.reports.paper_figures import ARROWS, draw_trajectories
    from stsbench.reports.paper_figures import TRAJECTORY_COLUMNS as COLUMNS

    steps = range(0, 160, 10)  # 16 points: more segments than ARROWS, so arrows are spread
    rows = [
        [group, str(seed), str(s), repr(-1.0 - s / 100 - seed / 10), repr(0.1 + k * s / 1000 + seed / 100)]
        for k, group in enumerate(("unsup-SimCSE (n=3)", "fixed 0.1 (n=3)"))
        for seed in (1, 2, 3)
        for s in steps
    ]
    data = write_csv(tmp_path / "align_uniform_trajectories.csv", COLUMNS, rows)
    assert data.read_text().splitlines()[0] == ",".join(COLUMNS)
    fig = draw_trajectories(data)
    (ax,) = fig.axes
    assert ax.get_xlabel() == r"$\ell_{uniform}$" and ax.get_ylabel() == r"$\ell_{align}$"  # SimCSE's axes
    assert "every 10 steps" in ax.get_title()
    # per group: three faint seed paths, then the mean path over the seeds
    assert len(ax.lines) == 8
    mean = ax.lines[3]
    assert list(mean.get_xdata()) == pytest.approx([-1.2 - s / 100 for s in steps])
    assert list(mean.get_ydata()) == pytest.approx([0.12 for _ in steps])
    arrows = [c for c in ax.get_children() if type(c).__name__ == "Annotation"]
    assert 0 < len(arrows) <= 2 * ARROWS
    # the figure re-renders from its CSV: the same bytes twice
    written = []
    for name in ("one", "two"):
        written.append(figures.save(draw_trajectories(data), tmp_path / name)[1].read_bytes())
    assert written[0] == written[1]


def test_a_seed_missing_a_step_leaves_that_step_off_the_mean(tmp_path):
    import pandas as pd

    from stsbench.reports.paper_figures import mean_path

    frame = pd.DataFrame(
        [["g", "1", 0, -1.0, 0.1], ["g", "2", 0, -2.0, 0.3], ["g", "1", 10, -3.0, 0.2]],
        columns=["group", "seed", "step", "l_uniform", "l_align"],
    )
    path = mean_path(frame)
    assert (
        list(path.index) == [0]
        and path.loc[0, "l_uniform"] == -1.5
        and path.loc[0, "l_align"] == pytest.approx(0.2)
    )


def test_the_report_puts_the_trajectories_under_simcse_figure_2(tmp_path):
    from stsbench.published.figures import get_figure
    from stsbench.reports.collect import FigureOut
    from stsbench.reports.paper_figures import matches

    entry = get_figure("simcse/figure2")
    assert entry.renderer == "trajectory" and entry.x == "l_uniform" and entry.y == "l_align"
    drawn = FigureOut("t", "figures/align_uniform_trajectories.svg", "", "trajectory")
    the_map = FigureOut("m", "figures/align_uniform_dev_map.svg", "", "align-map", "align_uniform")
    assert matches(entry, drawn) and not matches(entry, the_map)  # by the tags it was drawn with
    assert not matches(get_figure("simcse/figure3"), drawn) and matches(get_figure("simcse/figure3"), the_map)


def test_the_report_draws_the_logged_trajectories_under_the_papers_caption(tmp_path):
    import csv

    from seed_results import SEEDS, make_seed_results

    from stsbench.reports.render import write_report

    root = make_seed_results(tmp_path / "results")
    for log in sorted((root / "train").glob("*/seed-*/train_log.jsonl")):
        lines = []
        for line in log.read_text().splitlines():
            rec = json.loads(line)
            if rec.get("event") == "eval":
                rec.update(alignment=0.2 + rec["step"] / 1000, uniformity=-2.0 - rec["step"] / 100)
            lines.append(json.dumps(rec))
        log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "report"
    write_report(root, out, "trajectories", "stsbench report (test)", figures=["simcse/figure2"])
    md = (out / "report.md").read_text()
    data = out / "figures" / "align_uniform_trajectories.csv"
    with data.open() as f:
        rows = list(csv.DictReader(f))
    assert {r["seed"] for r in rows} == {str(s) for s in SEEDS} and len({r["group"] for r in rows}) >= 2
    assert all(float(r["l_align"]) == pytest.approx(0.2 + int(r["step"]) / 1000) for r in rows)
    assert data.with_suffix(".svg").is_file() and f"data: `{data.name}`" in md
    # the dev curves (MoCoSE Figures 5-6's renderer) are drawn from the CSV beside them too, one row per evaluation
    with (out / "figures" / "dev_curves_seeds.csv").open() as f:
        dev = list(csv.DictReader(f))
    logged = [
        json.loads(x)
        for x in (root / "train" / "esimcse" / "seed-2" / "train_log.jsonl").read_text().splitlines()
    ]
    evals = [(str(r["step"]), r["dev_spearman"] * 100) for r in logged if r.get("event") == "eval"]
    mine = [
        (r["step"], float(r["dev_spearman_x100"]))
        for r in dev
        if r["seed"] == "2" and r["group"].startswith("ESimCSE")
    ]
    assert mine == evals and "data: `dev_curves_seeds.csv`" in md
    # under the paper's number and caption, and the drawing found by the renderer the registry names
    assert "Figure 2" in md and "visualize checkpoints every 10 training steps" in md
    section = md[md.index("visualize checkpoints every 10 training steps") :]
    assert "align_uniform_trajectories.svg" in section.split("\n## ")[0]
