"""The typed training config: CLI flags generated from it, method defaults and checks from Python, resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from helpers import train_config
from typer.testing import CliRunner

from stsbench.errors import StsbenchError
from stsbench.train.config import (
    BOOKKEEPING,
    METHODS,
    OPTIONS,
    ResolvedConfig,
    TrainConfig,
    finalize,
    make_config,
    option_fields,
    resume_conflicts,
)

ROOT = Path(__file__).resolve().parents[1]
BASE = {"model": "m", "train_file": "f", "output": "o"}


def train_params() -> dict:
    import typer

    from stsbench.cli import app

    return {p.name: p for p in typer.main.get_command(app).commands["train"].params}


def other_value(name: str):
    """A valid value of option ``name`` other than its default."""
    opt = OPTIONS[name]
    default = opt.default
    if opt.kind is bool:
        return not default
    if opt.choices:
        return next(c for c in reversed(opt.choices) if c != default)
    if opt.kind is int:
        return 3 if default is None else default + 1
    if opt.kind is float:
        return 0.5 if not default else default / 2
    known = {"queue_slice": "0:256", "device": "cpu", "report_to": "wandb", "pooler": "avg_top2"}
    known["batch_buckets"] = "3:8"
    # the entries whose options the test sets
    known["augment"] = (
        "repetition,crop,word-deletion,mlm,token-cutoff,feature-cutoff,typos,back-translation,synonyms,paraphrase"
    )
    return known.get(name, f"some-{name}")


def cli_args(values: dict) -> list[str]:
    args = []
    for name, value in values.items():
        flag = OPTIONS[name].flag
        if isinstance(value, bool):
            args.append(flag if value else f"--no-{flag[2:]}")
        else:
            args += [flag, str(value)]
    return args


def test_every_field_has_its_flag_with_type_choices_help_and_no_default():
    params = train_params()
    assert set(option_fields()) <= set(params)
    run_options = {"config", "resume", "overwrite", "quiet", "seeds", "parallel", "per_gpu", "witness_steps"}
    assert set(params) - set(option_fields()) == run_options
    for name in option_fields():
        p, opt = params[name], OPTIONS[name]
        assert p.opts[0] == "--" + name.replace("_", "-"), name
        assert p.default is None, name  # not given: YAML and the method's defaults decide
        assert opt.help in p.help, name
        if opt.kind is bool:
            assert p.secondary_opts == ["--no-" + name.replace("_", "-")], name
    assert OPTIONS["method"].choices == ("simcse", "esimcse", "mocose") == tuple(METHODS)
    assert params["model"].opts == ["--model", "-m"] and params["output"].opts == ["--output", "-o"]


def test_help_shows_the_choices_and_the_method_defaults():
    from stsbench.cli import app

    out = " ".join(CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "250"}).output.split())
    choices = [o.choices for o in OPTIONS.values() if o.choices]
    assert (
        len(choices) == 26
    )  # the first fidelity pass added 12: mlm_views, mlm_head_init, pooler_activation, pooler_init,
    # momentum_mlp, ema_schedule, target_view, key_gradient, target_embeddings, ddp_gradient, queue_scope,
    # weight_decay_exclude;
    # the second fidelity pass 2: optimizer, momentum_update; the pooler registry took pooler's (plugins too);
    # then select_on, and the augmentations augment_views, embedding_augment_tokens, batch_bucket_unit,
    # text_augment_input and synonym_action
    assert "Training pooler: cls, cls_before_pooler, avg, avg_first_last, avg_top2, or one another package" in out
    for values in choices:  # typer 0.29 writes <a|b>, the 0.19 floor (to 0.24 at least) [a|b]
        assert "<" + "|".join(values) + ">" in out or "[" + "|".join(values) + "]" in out
    assert "(default: 0.0; MoCoSE: 1e-06)" in out and "(default: 125; MoCoSE: 100)" in out
    params = train_params()  # grouped by method in rich's --help panels
    assert params["queue_size"].rich_help_panel == "MoCoSE options"
    assert params["dup_rate"].rich_help_panel == "ESimCSE options" and params["lr"].rich_help_panel is None


@pytest.mark.parametrize("method", ["simcse", "esimcse", "mocose"])
def test_every_flag_reaches_its_field(monkeypatch, method):
    """Each option of the method, set away from its default on the command line, arrives in the config."""
    import stsbench.train.loop as loop
    from stsbench.cli import app

    seen = {}

    def fake_train(cfg, **kw):
        seen["cfg"] = cfg
        return loop.TrainResult(Path("o"), 0, None, None, 0.0, [])

    monkeypatch.setattr(loop, "train", fake_train)
    spec = METHODS[method]
    values = {n: other_value(n) for n in OPTIONS if n != "method" and spec.accepts(n)}
    values["method"] = method
    # one mask for both views is refused with an augmentation (test_fixed_mask.py): its flag alone, below
    fixed = values.pop("fixed_dropout_mask", None)
    if method == "esimcse":  # the data as a dataset, exclusive with the train file: its three flags instead
        del values["train_file"]
    else:
        for name in ("train_dataset", "train_split", "text_column"):
            del values[name]
    result = CliRunner().invoke(app, ["train", *cli_args(values), "--quiet"])
    assert result.exit_code == 0, result.output
    assert seen["cfg"] == TrainConfig(**values)
    assert {n: getattr(seen["cfg"], n) for n in values} == values
    if fixed is not None:
        base = ["--method", method, "-m", "m", "-o", "o", "--train-file", "t.txt", "--fixed-dropout-mask", "-q"]
        assert CliRunner().invoke(app, ["train", *base]).exit_code == 0 and seen["cfg"].fixed_dropout_mask


def test_python_config_gets_the_method_defaults():
    moco = TrainConfig(method="mocose")
    assert (moco.weight_decay, moco.eval_steps) == (1e-6, 100)  # MoCoSE Sec. 4.1, not SimCSE's 0 and 125
    assert (TrainConfig(method="simcse").weight_decay, TrainConfig(method="simcse").eval_steps) == (0.0, 125)
    assert TrainConfig(method="mocose", weight_decay=0.0, eval_steps=7).weight_decay == 0.0
    assert make_config({**BASE, "method": "mocose"}) == TrainConfig(**BASE, method="mocose")
    for spec in METHODS.values():  # each method's defaults are valid values of their fields
        assert (
            TrainConfig(method=spec.name, **spec.defaults).to_dict()
            == TrainConfig(method=spec.name).to_dict()
        )


BAD = [
    ({"method": "mocose", "batch_size": 1}, "--batch-size 1 leaves no in-batch negatives"),
    ({"method": "mocose", "dropout": 1.0}, r"--dropout must be in \[0, 1\)"),
    ({"method": "mocose", "lr": 0.0}, "--lr must be positive"),
    (
        {"method": "mocose", "queue_start_size": 600},
        "--queue-start-size 600 must be between 0 and --queue-size",
    ),
    ({"method": "mocose", "queue_slice": "768:256"}, "--queue-slice '768:256': need 0 <= START < END"),
    ({"method": "mocose", "gaussian_noise_std": 0.1}, "--gaussian-noise-std: SimCSE or ESimCSE option"),
    # 1 is allowed: the official schedule's end
    ({"method": "mocose", "ema_decay_end": 1.5}, r"--ema-decay-end 1.5 is outside \[0, 1\] \(eq. 2\)"),
    ({"method": "simcse", "dup_rate": 0.1}, "--dup-rate: ESimCSE option, not for SimCSE"),
]


@pytest.mark.parametrize(("options", "message"), BAD)
def test_python_and_cli_refuse_a_bad_value_with_the_same_line(options, message):
    from stsbench.cli import app

    with pytest.raises(StsbenchError, match=message) as from_python:
        TrainConfig(**options)
    line = str(from_python.value)
    assert "\n" not in line
    result = CliRunner().invoke(app, ["train", *cli_args({**BASE, **options})])
    assert isinstance(result.exception, StsbenchError) and str(result.exception) == line


def test_python_type_errors_are_one_line():
    with pytest.raises(StsbenchError, match="^option batch_size must be int, got 'many'$"):
        TrainConfig(method="simcse", batch_size="many")
    with pytest.raises(StsbenchError, match="^unknown option 'bogus'"):
        TrainConfig(method="simcse", bogus=1)
    with pytest.raises(StsbenchError, match="^option seed cannot be empty$"):
        TrainConfig(method="simcse", seed=None)
    cfg = TrainConfig(method="simcse")
    with pytest.raises(Exception, match="frozen"):
        cfg.lr = 1.0


def test_config_is_not_changed_by_resolution_and_is_the_same_on_any_device():
    cfg = TrainConfig(**BASE, method="esimcse")
    before = cfg.to_dict()
    run = finalize(cfg, False)
    cpu, gpu = run.on_device("cpu"), run.on_device("cuda:0")
    assert cfg.to_dict() == before and cfg.length_buckets is None and cfg.mlp_only_train is None
    assert cpu.to_dict() == gpu.to_dict()  # the saved config
    assert (cpu.length_buckets, gpu.length_buckets) == (4, 1)  # only the resolution differs
    diff = {k for k, v in cpu.resolution.to_dict().items() if gpu.resolution.to_dict()[k] != v}
    assert diff == {"length_buckets", "device"}
    assert (
        run.on_device("cuda:0", world=2).resolution.queued_negatives
        == 2 * cpu.resolution.queued_negatives
        == 320
    )
    assert finalize(cfg.replace(length_buckets=2), False).on_device("cuda").length_buckets == 2


def test_saved_config_keeps_todays_flat_keys_and_old_runs_load():
    """A run saved before this config (reports/cpu-mini-replication) has the keys and values a run saves now."""
    path = ROOT / "tests" / "fixtures" / "old_run" / "mocose-minilm-stsbench.json"  # the first CPU replication
    saved = json.loads(path.read_text())["training"]
    again = finalize(TrainConfig.from_dict(saved), saved["supervised"])
    now = again.to_dict()
    assert {k: now[k] for k in saved} == saved  # every key, every value
    newer = {"pad_to_max_length", "compile", "tf32", "cuda_graph", "train_lines"}  # options added after this run
    newer |= {"train_dataset", "train_split", "text_column"}  # --train-dataset's
    fidelity = {  # the first fidelity pass's options: what the run did, which is not always today's default
        "target_view": "clean",
        "mlm_views": "anchor",
        "mlm_head_init": "random",
        "key_gradient": "stop",
        "ema_schedule": "run",
        "ema_schedule_steps": 15000,
        "pooler_activation": "tanh",
        "pooler_init": "random",
        "gaussian_dropout_p": 0.0,
        "gaussian_dropout_std": 0.1,
        "momentum_mlp": "momentum",
        "target_embeddings": "target",
        "ddp_gradient": "global",
        "queue_scope": "global",
        "weight_decay_exclude": "none",
        "optimizer": "torch-adamw",  # the second fidelity pass's: their defaults are what stsbench did
        "momentum_update": "after-step",
        "augment": "none",  # the augmentation registry: nothing added by default
        "augment_views": "declared",  # the augmentations'
        "crop_rate": 0.1,  # the augmentations' options, and SimCSE Table 4's one mask
        "word_deletion_rate": 0.1,
        "fixed_dropout_mask": False,
        "token_cutoff_rate": 0.1,  # MoCoSE Table 5's embeddings-stage entries, and Table 6(a)'s width
        "feature_cutoff_rate": 0.01,
        "embedding_augment_tokens": "content",
        "out_size": None,
        "batch_buckets": None,  # ESimCSE COLING Table 6's buc_len
        "batch_bucket_unit": "words",
        "mlm_replace_rate": 0.15,  # SimCSE Table 2's MLM
        "typos_dict": None,  # MoCoSE Table 5's text augmentations
        "back_translation_models": "facebook/wmt19-en-de,facebook/wmt19-de-en",
        "text_augment_input": "text",
        "synonym_model": "roberta-base",
        "synonym_action": "substitute",
        "paraphrase_model": "xlnet-base-cased",
        "select_on": "stsb-dev",  # MoCoSE's official test-set selection on offer, never the default
    }
    # --report-to's tracking options, whose defaults log nowhere
    tracking = {"report_to": "none", "tracking_project": "stsbench", "run_group": None, "run_name": None}
    assert set(now) - set(saved) == newer | set(fidelity) | set(tracking) and not any(now[k] for k in newer)
    assert {k: now[k] for k in tracking} == tracking
    assert {k: now[k] for k in fidelity} == fidelity
    for method in METHODS:
        c = TrainConfig(**BASE, method=method)
        assert TrainConfig.from_dict(c.to_dict()) == c


def test_one_bookkeeping_list_for_resume_and_reports():
    from stsbench.reports import training

    assert training.BOOKKEEPING is BOOKKEEPING and "length_buckets" not in BOOKKEEPING
    run = finalize(TrainConfig(**BASE, method="simcse"), False).on_device("cpu")
    saved = run.to_dict()
    assert resume_conflicts(saved, finalize(run.config.replace(log_steps=1), False).on_device("cpu")) == []
    other = finalize(run.config.replace(length_buckets=2), False).on_device("cpu")
    assert resume_conflicts(saved, other) == ["length_buckets"]  # other dropout draws: not bookkeeping
    old = {**saved, "length_buckets": 4}  # saved before the resolution: the value the CPU default chose
    assert resume_conflicts(old, run) == [] and resume_conflicts(old, run.on_device("cuda")) == [
        "length_buckets"
    ]


def test_resolved_config_reads_like_the_config_and_rebuilds_when_set():
    run = finalize(TrainConfig(**BASE, method="esimcse", batch_size=8), False)
    assert isinstance(run, ResolvedConfig) and run.batch_size == 8 and run.supervised is False
    assert run.mlp_only_train is True and run.save_steps == 125 and Path(run.train_file).is_absolute()
    run.batch_size = 16  # a new config, resolved again: the old one is untouched
    assert run.batch_size == 16 and run.resolution.queued_negatives == 40
    with pytest.raises(AttributeError):
        run.supervised = True
    import copy
    import pickle

    for twin in (copy.deepcopy(run), pickle.loads(pickle.dumps(run))):
        assert isinstance(twin, ResolvedConfig) and twin.to_dict() == run.to_dict()
        assert twin.resolution == run.resolution
    assert run.queue_size == 512  # an option (MoCoSE's K) is the config's, never the resolution's


def test_run_saves_the_same_config_with_and_without_cuda(files, tmp_path, monkeypatch):
    """The device only changes the resolution record (length_buckets chosen by device), not the saved config."""
    real = ResolvedConfig.on_device
    saved = {}
    from stsbench.train.loop import train

    for name, device in (("cpu", None), ("cuda", "cuda:0")):
        if device:  # as if on a GPU: the device the resolution sees (the run itself stays on the CPU)
            monkeypatch.setattr(
                ResolvedConfig, "on_device", lambda self, d, w=1, device=device: real(self, device, w)
            )
        cfg = train_config(files, tmp_path / name, max_steps=2, eval_at_start=False)
        before = cfg.to_dict()
        train(cfg, show_progress=False)
        assert cfg.to_dict() == before  # the caller's config is not changed by the run
        meta = json.loads((tmp_path / name / "stsbench.json").read_text())
        state = torch.load(tmp_path / name / "last" / "state.pt", weights_only=True)
        assert state["config"] == meta["training"] and state["resolution"] == meta["resolution"]
        saved[name] = meta
    strip = lambda d: {k: v for k, v in d.items() if k != "output"}  # noqa: E731
    assert strip(saved["cpu"]["training"]) == strip(saved["cuda"]["training"])
    assert saved["cpu"]["training"]["length_buckets"] is None
    assert (saved["cpu"]["resolution"]["length_buckets"], saved["cuda"]["resolution"]["length_buckets"]) == (
        4,
        1,
    )


def test_every_bound_refuses_with_a_line_that_names_its_flag():
    import annotated_types

    checked = 0
    for name, info in option_fields().items():
        method = next(s.name for s in METHODS.values() if s.accepts(name))
        for bound in info.metadata:
            step = 1 if OPTIONS[name].kind is int else 0.5
            bad = {
                annotated_types.Ge: lambda b, s=step: b.ge - s,
                annotated_types.Gt: lambda b: b.gt,
                annotated_types.Lt: lambda b: b.lt,
                annotated_types.Le: lambda b, s=step: b.le + s,
            }[type(bound)](bound)
            with pytest.raises(StsbenchError, match="^" + OPTIONS[name].flag + " ") as err:
                TrainConfig(method=method, **{name: OPTIONS[name].kind(bad)})
            assert "\n" not in str(err.value)
            checked += 1
    assert checked >= 30


def _saved_configs() -> list[Path]:
    return sorted([*ROOT.glob("reports/*/**/stsbench.json"), *ROOT.glob("tests/fixtures/**/stsbench.json")])


def test_every_saved_run_s_config_reads_as_a_train_config_with_its_values():
    """The training block of every checked-in run folder (the editions', the old-run fixture) is a TrainConfig
    whose options hold the values saved; what the data decided (FROM_DATA) is the resolution's, not compared."""
    import json

    from stsbench.train.config.resolve import FROM_DATA

    paths = _saved_configs()
    assert len(paths) > 100 and any("fixtures" in str(p) for p in paths)
    for path in paths:
        saved = json.loads(path.read_text(encoding="utf-8"))["training"]
        now = TrainConfig.from_dict(saved).to_dict()
        differs = sorted(k for k in saved if k in now and k not in FROM_DATA and saved[k] != now[k])
        assert not differs, f"{path}: {differs}"
