"""One writer per output folder, seeds' processes that end with their parent, and full or read-only disks.

Real processes where the behaviour is about processes: a lock held by another one, a ``train --seeds`` parent
killed with SIGKILL. Full and read-only disks are injected (``OSError`` 28 and 30): the tests run as root,
where ``chmod`` does not stop a write.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import one_error_line, run_cli, train_args, train_config

from stsbench.errors import StsbenchError, os_error_line
from stsbench.files import HOLDER_FILE, LOCK_FILE, output_lock

HOLD = "import sys, time; from stsbench.files import output_lock\nwith output_lock(sys.argv[1]):\n"
HOLD += "    print('held', flush=True); time.sleep(120)\n"


def _holder(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder``'s lock (it says ``held`` once it does)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie, dead but not yet reaped by PID 1, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


def test_second_writer_is_refused_naming_the_holder_and_a_killed_holder_blocks_nothing(
    files, tmp_path, capsys
):
    out = tmp_path / "run"
    holder = _holder(out)
    try:
        named = f"is being written by pid {holder.pid} on {socket.gethostname()} since "
        for extra in ((), ("--resume",), ("--overwrite",), ("--seeds", "1,2")):
            code, _, err = run_cli(train_args(files, out, *extra), capsys)
            line = one_error_line(code, err)
            assert f"--output {out} {named}" in line and "pass another --output" in line, extra
        assert sorted(p.name for p in out.iterdir()) == sorted([LOCK_FILE, HOLDER_FILE])  # nothing written
    finally:
        holder.kill()
        holder.wait()
    # its lock file stays (and the holder file of a process killed outright): neither blocks a later run
    assert (out / LOCK_FILE).is_file() and (out / HOLDER_FILE).is_file()
    code, _, err = run_cli(train_args(files, out), capsys)
    assert code == 0, err
    assert (out / "stsbench.json").is_file() and not (out / HOLDER_FILE).exists()
    code, _, err = run_cli(train_args(files, out, "--overwrite"), capsys)  # keeps the lock file it holds
    assert code == 0, err
    assert (out / LOCK_FILE).is_file()


def test_resume_beside_a_training_run_is_refused(files, tmp_path, one_thread):
    """A real run holds its folder's lock from setup to its end record: a ``--resume`` beside it is refused."""
    from stsbench.train.loop import train

    out = tmp_path / "run"
    seen: list[subprocess.CompletedProcess] = []

    def beside(step: int) -> None:
        if step == 2:  # after a save: without the lock, --resume would find a resumable state and train
            args = train_args(files, out, "--resume", "--max-steps", "4", "--save-steps", "2")
            seen.append(
                subprocess.run([sys.executable, "-m", "stsbench", *args], capture_output=True, text=True)
            )

    cfg = train_config(
        files, out, method="simcse", max_steps=4, eval_steps=2, save_steps=2, eval_at_start=False
    )
    train(cfg, show_progress=False, on_step=beside)
    proc = seen[0]
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert f"is being written by pid {os.getpid()} on {socket.gethostname()}" in proc.stderr
    ends = [ln for ln in (out / "train_log.jsonl").read_text().splitlines() if '"end"' in ln]
    assert len(ends) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_killing_the_seeds_parent_stops_its_children_and_leaves_nothing_behind(files, tmp_path):
    out = tmp_path / "seeds"
    before = set(Path(tempfile.gettempdir()).glob("stsbench-seeds-*"))
    args = train_args(files, out, "--seeds", "1,2", "--parallel", "2", "--quiet")
    for flag in ("--max-steps", "--eval-steps"):  # trains until killed
        args[args.index(flag) + 1] = "100000"
    parent = subprocess.Popen(
        [sys.executable, "-m", "stsbench", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    holders = [out / f"seed-{s}" / HOLDER_FILE for s in (1, 2)]
    children: list[int] = []
    try:
        assert _wait(lambda: all(h.is_file() for h in holders), 180), "the seeds' processes did not start"
        children = [json.loads(h.read_text())["pid"] for h in holders]
        assert all(_alive(pid) for pid in children)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _wait(lambda: not any(_alive(pid) for pid in children), 30), "children outlived their parent"
    finally:
        parent.kill()
        for pid in children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert set(Path(tempfile.gettempdir()).glob("stsbench-seeds-*")) == before
    assert (out / "seed-options.yaml").is_file()  # the seeds' shared options: kept in OUT, not temporary
    for folder in (out, out / "seed-1", out / "seed-2"):  # no lock is left held (released within seconds)
        assert _wait(lambda folder=folder: _free(folder), 30), f"{folder} is still locked"


def _free(folder: Path) -> bool:
    try:
        with output_lock(folder):
            return True
    except StsbenchError:
        return False


def _full_on(marker: str):
    """``os.fsync`` on a disk that is full for the files whose name holds ``marker`` (Linux: reads /proc)."""
    fsync = os.fsync

    def full(fd: int) -> None:
        if marker in str(Path(f"/proc/self/fd/{fd}").readlink()):
            raise OSError(errno.ENOSPC, "No space left on device")
        fsync(fd)

    return full


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_full_disk_under_the_cache_is_one_line_and_the_cache_stays_valid(
    tiny_bert, mock_data, tmp_path, capsys, monkeypatch, one_thread
):
    cache = tmp_path / "cache"
    args = ["run", "--model", tiny_bert, "--pooler", "avg", "--tasks", "STS12", "--cache-dir", cache, "-q"]
    args += ["--data-dir", mock_data, "--output", tmp_path / "results"]
    monkeypatch.setattr(os, "fsync", _full_on(".npz."))  # the disk fills as the first embeddings are written
    code, _, err = run_cli(args, capsys)
    monkeypatch.undo()
    line = one_error_line(code, err)
    (folder,) = [p for p in (cache / "embeddings").iterdir() if p.is_dir()]  # the model's folder
    assert (
        line.startswith(f"error: no space left on device: {folder}/") and f"free space in {folder}," in line
    )
    assert not [p for p in cache.rglob("*") if p.name.endswith(".tmp")]  # nothing half-written
    code, _, err = run_cli(args, capsys)
    assert code == 0 and "corrupt" not in err, err


def test_read_only_model_cache_folder_is_one_line(
    tiny_bert, mock_data, tmp_path, capsys, monkeypatch, one_thread
):
    import stsbench.files

    cache = tmp_path / "cache"
    args = ["run", "--model", tiny_bert, "--pooler", "avg", "--tasks", "STS12", "--cache-dir", cache, "-q"]
    args += ["--data-dir", mock_data, "--output", tmp_path / "results"]
    mkstemp = tempfile.mkstemp

    def read_only(prefix="", suffix="", dir=None):  # noqa: A002 - mkstemp's own name
        if dir is not None and Path(dir).parent == cache / "embeddings":  # chmod 0o555 binds no root
            raise OSError(errno.EROFS, "Read-only file system", str(Path(dir) / f"{prefix}x{suffix}"))
        return mkstemp(prefix=prefix, suffix=suffix, dir=dir)

    monkeypatch.setattr(stsbench.files.tempfile, "mkstemp", read_only)
    code, _, err = run_cli(args, capsys)
    monkeypatch.undo()
    line = one_error_line(code, err)
    (folder,) = [p for p in (cache / "embeddings").iterdir() if p.is_dir()]
    assert line.startswith("error: read-only file system: ") and f"make {folder} writable," in line
    code, _, err = run_cli(args, capsys)
    assert code == 0, err


def test_full_disk_under_the_output_is_one_line_and_the_run_starts_again(
    files, tmp_path, capsys, monkeypatch
):
    import torch

    out = tmp_path / "run"
    save = torch.save

    def full(obj, f, *args, **kwargs):
        """``torch.save`` on a full disk: part of the state is written, then torch's own writer (given a path)
        fails with a RuntimeError, a Python file's write (given a file) with OSError 28."""
        if isinstance(f, (str, os.PathLike)):
            Path(f).write_bytes(b"half a state")
            raise RuntimeError("PytorchStreamWriter failed writing file data/0: file write failed")
        f.write(b"half a state")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(torch, "save", full)
    code, _, err = run_cli(train_args(files, out), capsys)
    monkeypatch.setattr(torch, "save", save)
    line = one_error_line(code, err)
    assert line == (
        f"error: no space left on device: {out}/last/state.pt; free space in {out}/last, "
        "or pass another folder (--output, --cache-dir)"
    )
    assert not list((out / "last").iterdir())  # no half-written state
    code, _, err = run_cli(train_args(files, out, "--overwrite"), capsys)
    assert code == 0, err


def test_train_log_on_a_full_disk_keeps_no_half_line(tmp_path, monkeypatch):
    from stsbench.train.log import TrainLog

    log = TrainLog(tmp_path / "train_log.jsonl")
    log.write({"event": "train", "step": 1})
    before = log.path.read_bytes()
    opened = Path.open

    class HalfWritten:
        def __init__(self, fh) -> None:
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.fh.close()

        def write(self, text: str) -> None:
            self.fh.write(text[: len(text) // 2])
            self.fh.flush()
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: HalfWritten(opened(self, *a, **k)))
    with pytest.raises(OSError, match="No space left") as caught:
        log.write({"event": "train", "step": 2})
    monkeypatch.undo()
    assert caught.value.filename == str(log.path)
    assert log.path.read_bytes() == before and [r["step"] for r in log.records()] == [1]


def test_a_folder_holding_only_its_lock_files_is_new(tmp_path):
    from stsbench.train.log import run_status

    folder = tmp_path / "seed-1"
    folder.mkdir()
    with output_lock(folder):
        assert run_status(folder) == "new"
    (folder / HOLDER_FILE).write_text("{}")  # as a process killed outright leaves it
    assert run_status(folder) == "new"
    (folder / "notes.txt").write_text("x")
    assert run_status(folder) == "started"


def test_a_run_refused_before_writing_leaves_no_folder(files, tmp_path, capsys):
    out = tmp_path / "new"
    code, _, err = run_cli(train_args(files, out, "--resume"), capsys)
    assert "no resumable state" in one_error_line(code, err)
    assert not out.exists()


def test_a_second_run_on_the_same_model_waits_for_the_first(
    tiny_bert, mock_data, tmp_path, capsys, one_thread
):
    """``stsbench run`` into one model's results folder takes turns: interleaved, two runs could leave one's
    ``average_sts.json`` beside the other's task results."""
    out = tmp_path / "results"
    args = ["run", "--model", tiny_bert, "--pooler", "avg", "--tasks", "STS12,STS13", "--bootstrap", "0"]
    args += ["-q", "--cache-dir", tmp_path / "cache", "--data-dir", mock_data, "--output", out]
    args.append(
        "--allow-modified-data"
    )  # the second run's interpreter does not take the mock data as canonical
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    (folder,) = {p.parent for p in out.rglob("STS12.json")}
    for p in folder.glob("STS1*"):
        p.unlink()
    holder = _holder(folder)  # the first run, still writing
    second = subprocess.Popen(
        [sys.executable, "-m", "stsbench", *map(str, args)], stderr=subprocess.PIPE, text=True
    )
    try:
        assert second.stderr is not None
        line = second.stderr.readline()
        assert line.startswith(f"note: waiting for pid {holder.pid} on {socket.gethostname()} since ")
        assert line.rstrip().endswith(f"which is writing {folder}")
        time.sleep(1)
        assert second.poll() is None and not list(folder.glob("STS1*"))  # waits, writing nothing
    finally:
        holder.kill()
        holder.wait()
    assert second.wait(timeout=120) == 0, second.stderr.read()
    assert (folder / "STS12.json").is_file() and (folder / "STS13.json").is_file()


CHILD = "import sys, time\nfrom stsbench.train import lifeline\nif sys.argv[1] == 'poll':\n"
CHILD += "    lifeline._ask_kernel = lambda: False\nlifeline.follow_parent(0.1)\ntime.sleep(60)\n"
PARENT = "import os, subprocess, sys, time\nfrom stsbench.train.lifeline import child_environment\n"
PARENT += "env = {**os.environ, **child_environment()}\n"
PARENT += "child = subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]], env=env)\n"
PARENT += "print(child.pid, flush=True)\ntime.sleep(60)\n"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", ["kernel", "poll"])
def test_a_child_ends_with_its_parent_killed_outright(how):
    """The kernel's parent-death signal (Linux), and the polling thread used where there is none."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD, how], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        time.sleep(1)  # the child has followed its parent by now
        assert _alive(child)
        parent.kill()
        parent.wait()
        assert _wait(lambda: not _alive(child), 10)
    finally:
        parent.kill()
        if _alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_child_whose_parent_is_already_gone_ends_at_once():
    env = {**os.environ, "STSBENCH_PARENT_PID": "1"}  # not its parent: the parent ended before it asked
    proc = subprocess.run([sys.executable, "-c", CHILD, "kernel"], env=env, timeout=20)
    assert proc.returncode == -signal.SIGTERM


def test_os_error_lines(tmp_path):
    assert os_error_line(OSError(errno.ENOSPC, "No space left on device")) == (
        "no space left on device; free space or make the output and cache folders writable, or pass others"
    )
    line = os_error_line(PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "a.json")))
    assert line == (
        f"permission denied: {tmp_path / 'a.json'}; give this user access to {tmp_path}, "
        "or pass another folder (--output, --cache-dir)"
    )
    assert os_error_line(FileNotFoundError(errno.ENOENT, "No such file", "x")) is None  # a bug: its traceback


def test_a_restarted_jobs_lock_waits_for_its_previous_attempt_then_refuses_in_one_line(tmp_path, monkeypatch):
    """``STSBENCH_LOCK_WAIT_S`` (a restarted Slurm job's): the holder's end is waited for, a bounded time."""
    folder = tmp_path / "run"
    holder = _holder(folder)
    try:
        monkeypatch.setenv("STSBENCH_LOCK_WAIT_S", "0.3")
        with pytest.raises(StsbenchError, match=rf"pid {holder.pid} .* \(waited 0.3 s\); wait for it"):
            with output_lock(folder):
                pass
        monkeypatch.setenv("STSBENCH_LOCK_WAIT_S", "60")
        import threading

        threading.Timer(0.5, holder.kill).start()  # the previous attempt dies while this one waits
        with output_lock(folder):
            assert json.loads((folder / HOLDER_FILE).read_text())["pid"] == os.getpid()
    finally:
        holder.kill()
        holder.wait()
    monkeypatch.setenv("STSBENCH_LOCK_WAIT_S", "not a number")  # read as 0: refused at once
    with _holder(folder) as again, pytest.raises(StsbenchError, match="is being written by pid"):
        try:
            with output_lock(folder):
                pass
        finally:
            again.kill()
