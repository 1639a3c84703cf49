"""Task and pooler names: the spellings stsbench prints are accepted, a typo gets the nearest name, and both
are refused before torch imports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from stsbench.errors import StsbenchError
from stsbench.tasks.registry import SHORT_NAMES, TASK_NAMES, task_names


def test_the_names_module_lists_the_task_classes_in_order():
    from stsbench.tasks.registry import TASKS

    assert tuple(TASKS) == TASK_NAMES


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("STS-B", ["STSBenchmark"]),  # the column headers stsbench prints
        ("SICK-R", ["SICKRelatedness"]),
        ("stsb,sick_r,STS12", ["STSBenchmark", "SICKRelatedness", "STS12"]),
        ("sts-12,STS12", ["STS12"]),
        ("sts,STS-B", list(TASK_NAMES[:7])),
        (["MR,cr", "trec"], ["MR", "CR", "TREC"]),
    ],
)
def test_spellings_users_type(spec, names):
    assert task_names(spec) == names


def test_every_printed_short_name_is_accepted():
    for task, short in SHORT_NAMES.items():
        assert task_names(short) == [task]


@pytest.mark.parametrize(
    ("spec", "hint"),
    [("stsbenchmrk", "did you mean 'STSBenchmark'?"), ("SICK-Relatednes", "did you mean 'SICKRelatedness'?")],
)
def test_a_typo_names_the_nearest_task(spec, hint):
    with pytest.raises(StsbenchError, match="unknown task") as err:
        task_names(spec)
    assert hint in str(err.value)


def test_no_near_name_no_guess():
    with pytest.raises(StsbenchError) as err:
        task_names("imdb")
    assert "did you mean" not in str(err.value) and "choose from: sts, transfer, full" in str(err.value)


def test_pooler_typo_names_the_nearest_pooler():
    from stsbench.encoders.pooling import check_pooler

    assert check_pooler("avg_top2") == "avg_top2"
    with pytest.raises(StsbenchError, match="did you mean 'cls_before_pooler'"):
        check_pooler("cls_before_pool")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--tasks", "STS17"], "unknown task 'STS17'"),
        (["run", "--pooler", "clss"], "did you mean 'cls'"),
        (["length-bias", "--pooler", "mean"], "unknown pooler 'mean'"),
    ],
)
def test_names_are_refused_before_torch_imports(args, message):
    code = (
        "import sys\n"
        f"sys.argv = ['stsbench', *{args!r}]\n"
        "from stsbench.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    heavy = sorted(m for m in ('torch', 'transformers', 'scipy') if m in sys.modules)\n"
        "    print(exc.code, heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "2 []", done.stdout + done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_transfer_entries_are_the_transfer_objects():
    """The registry knows each transfer task's name, kind and version without importing it; they agree."""
    from stsbench.tasks.registry import TRANSFER_TASK_NAMES, resolve_tasks, task_entry
    from stsbench.tasks.transfer.tasks import TRANSFER_TASKS

    tasks = resolve_tasks("transfer")
    assert [t.name for t in tasks] == list(TRANSFER_TASK_NAMES) and all(
        a is b for a, b in zip(tasks, TRANSFER_TASKS, strict=True)
    )
    assert [(task_entry(t.name).kind, task_entry(t.name).version) for t in tasks] == [
        (t.kind, t.version) for t in tasks
    ]


def test_task_versions_and_columns():
    from stsbench.tasks.registry import task_columns, task_version

    assert [task_version(n) for n in TASK_NAMES] == [1] * len(TASK_NAMES)
    assert task_version("sts-b") == 1 and task_columns("sts") == list(TASK_NAMES[:7])
    with pytest.raises(StsbenchError, match="unknown task 'STS17'"):
        task_version("STS17")


def test_an_alias_cannot_take_another_tasks_name():
    from stsbench.data.sts_spec import STSSpec
    from stsbench.tasks.registry import register_task

    with pytest.raises(StsbenchError, match="its alias 'STS-B' already names 'STSBenchmark'"):
        register_task(STSSpec("MySTSB", "x", splits={"test": "t.tsv"}, aliases=("STS-B",)))
    assert task_names("STS-B") == ["STSBenchmark"]
