"""The docs are checked: marked examples run, every documented command line parses, JSON shapes are real.

- A fenced block after a line ``<!-- run -->`` (docs/development.md) runs here: its ``$ stsbench ...`` lines in
  process, on tiny substitutes (a tiny random-init BERT in place of the embedded all-MiniLM-L6-v2, the data folder
  of the tests), and the rest of the block is their output: a JSON output must have the same keys at every level
  as the real one, a text output the same lines once numbers are masked and repeated characters squeezed (the
  table's widths follow its figures).
- Every other ``stsbench ...`` command line of docs/*.md and README.md (code blocks and inline code) names a
  command that exists, and each flag it uses is one of that command's options (read from the click commands of
  :func:`stsbench.cli.build_app`, not from help text).
- The key table of docs/results.md for ``stsbench run --format json`` lists the keys a real run prints.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from helpers import ROOT, Block, fenced_blocks, make_tiny_bert

PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


def marked_blocks() -> list[Block]:
    return [b for page in PAGES for b in fenced_blocks(page) if b.marked]


# --- every documented command line: its command exists, and so does every flag it uses ---------------------------

_STOP = {"&&", "||", ";", "|", ">", "2>", "2>&1", "&"}
_FLAG = re.compile(r"^(--?[A-Za-z][\w-]*)(=.*)?$")


def command_lines(page: Path) -> list[tuple[str, str]]:
    """(where, the text after ``stsbench``) of each command line in the page's code: fenced blocks that are not
    Python or TOML (a line starting with whitespace continues the one before), indented code, inline code."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(ROOT)
    found: list[tuple[str, str]] = []
    blocks = fenced_blocks(page)
    in_block = {n for b in blocks for n in range(b.line, b.end + 1)}
    prose = "\n".join(line for n, line in enumerate(lines, 1) if n not in in_block)
    for block in blocks:
        if block.info.split(" ")[0] in ("python", "toml", "yaml", "json"):
            continue
        joined: list[str] = []
        for line in block.body.splitlines():
            if joined and (line[:1].isspace() or joined[-1].endswith("\\")):
                joined[-1] = joined[-1].rstrip("\\") + " " + line.strip()
            else:
                joined.append(line)
        found += [(f"{name}:{block.line}", line) for line in joined if not line.startswith("{")]
    found += [(f"{name} (indented)", m) for m in re.findall(r"^ {4,}(\S.*)$", prose, flags=re.M)]
    found += [(f"{name} (`{m}`)", m.replace("\n", " ")) for m in re.findall(r"`([^`]+)`", prose)]
    commands = []
    for where, line in found:
        line = line.replace("\\|", "|")
        # the program's name where a command starts: first, after `$ `, `&& `, a folder or `python -m`
        for match in re.finditer(r"(?:^|&&\s*|\$\s+|/|-m\s+)stsbench[ \t]+(.*)$", line):
            commands.append((where, match.group(1)))
    return commands


def _tokens(rest: str) -> list[str]:
    """The words of a command line up to a shell separator or comment, synopsis brackets taken off."""
    words, depth = [], 0
    for word in rest.split():
        if word.startswith("#") or (word in _STOP and depth == 0):
            break
        depth += word.count("[") - word.count("]")
        word = word.strip("[]")
        if word:
            words.append(word)
    return words


def plugin_flags(page: Path) -> set[str]:
    """The flags of the options a page's own Python defines for a plugin (``name: type = option(...)``)."""
    code = "\n".join(b.body for b in fenced_blocks(page) if b.info.split(" ")[0] == "python")
    return {"--" + n.replace("_", "-") for n in re.findall(r"^\s+(\w+):[^=\n]+=\s*option\(", code, flags=re.M)}


def command_problems(group, rest: str, extra: set[str] = frozenset()) -> list[str]:
    """What is wrong with ``stsbench REST``: an unknown command, or flags its command does not take (``extra``:
    flags a plugin the page defines adds)."""
    # duck-typed: typer 0.28 builds its commands on its own copy of click (typer._click)
    def flags_of(cmd) -> set[str]:
        opts = {"--help"}
        for param in cmd.params:
            if param.param_type_name == "option":
                opts |= {*param.opts, *param.secondary_opts}
        return opts

    words, cmd, path = _tokens(rest), group, ["stsbench"]
    for word in words:
        if word.startswith("-") or getattr(cmd, "commands", None) is None:
            break
        if word.startswith(("<", "...")):  # a placeholder: `stsbench <command>`, `stsbench ...`
            return []
        if word not in cmd.commands:
            return [f"{' '.join(path)} has no command {word!r}"]
        cmd = cmd.commands[word]
        path.append(word)
    known = flags_of(cmd) | extra
    used = [m.group(1) for w in words if (m := _FLAG.match(w))]
    return [f"{' '.join(path)} has no option {flag}" for flag in used if flag not in known]


def test_every_documented_command_and_flag_exists():
    import typer

    from stsbench.cli import build_app

    group = typer.main.get_command(build_app())
    lines = [(page, where, rest) for page in PAGES for where, rest in command_lines(page)]
    assert len(lines) > 100, len(lines)  # the docs' command lines are found
    problems = [
        f"{where}: {p}" for page, where, rest in lines for p in command_problems(group, rest, plugin_flags(page))
    ]
    assert not problems, "\n".join(problems)


# --- the marked examples, run on tiny substitutes -------------------------------------------------------------------


@pytest.fixture(scope="module")
def substitutes(tmp_path_factory, data_dir):
    """Run ``stsbench ARGS`` in process with a tiny BERT behind the name all-MiniLM-L6-v2 and the tests' data.

    The tiny model is the embedded folder (sentence-transformers modules: mean pooling, normalise) with a tiny
    random-init BERT's config and weights. Returns ``run(args, cwd) -> (exit code, stdout, stderr)``; the runs
    share one embedding cache.
    """
    from stsbench.cli import main
    from stsbench.encoders import resolve

    root = tmp_path_factory.mktemp("docs-examples")
    embedded = resolve.embedded_model_path()
    tiny = make_tiny_bert(root / "tiny")
    model = root / "all-MiniLM-L6-v2"
    shutil.copytree(embedded, model, ignore=lambda d, names: ["model.safetensors", "config.json", "README.md"]
                    if Path(d) == embedded else [])
    for name in ("model.safetensors", "config.json"):
        shutil.copy(tiny / name, model / name)
    pooling = json.loads((model / "1_Pooling" / "config.json").read_text())
    (model / "1_Pooling" / "config.json").write_text(json.dumps({**pooling, "word_embedding_dimension": 32}))

    def run(args: list[str], cwd: Path) -> tuple[int, str, str]:
        out, err, code = io.StringIO(), io.StringIO(), 0
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            patch.setattr(resolve, "embedded_model_path", lambda: model)
            patch.setenv("STSBENCH_CACHE", str(root / "cache"))
            patch.chdir(cwd)
            patch.setattr(sys, "argv", ["stsbench", *args])
            try:
                main()
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
        return code, out.getvalue(), err.getvalue()

    return run


def substituted(command: str, data_dir: Path) -> list[str]:
    """A documented ``$ stsbench ...`` line as arguments here: the data folder is the tests'."""
    import shlex

    words = shlex.split(command)
    assert words[0] == "stsbench", command
    return [str(data_dir) if w == "../shared/data" else w for w in words[1:]]


def json_differences(doc, real, where: str = "") -> list[str]:
    """Where two JSON values differ in shape: the keys at every level (values may differ)."""
    if isinstance(doc, dict) and isinstance(real, dict):
        out = [f"{where}.{k}: documented, not written" for k in doc if k not in real]
        out += [f"{where}.{k}: written, not documented" for k in real if k not in doc]
        return out + [d for k in doc if k in real for d in json_differences(doc[k], real[k], f"{where}.{k}")]
    if isinstance(doc, list) and isinstance(real, list):
        return [d for i, (a, b) in enumerate(zip(doc, real, strict=False)) for d in json_differences(a, b, f"{where}[{i}]")]
    if isinstance(doc, (dict, list)) != isinstance(real, (dict, list)):
        return [f"{where}: documented {type(doc).__name__}, written {type(real).__name__}"]
    return []


def text_shape(text: str) -> list[str]:
    """Text output with its figures masked and runs of a character squeezed: what a tiny model's run keeps."""
    masked = [re.sub(r"-?\d+(\.\d+)?", "#", line.rstrip()) for line in text.strip("\n").splitlines()]
    return [re.sub(r"(.)\1+", r"\1", line) for line in masked]


def split_block(body: str) -> list[tuple[str, str]]:
    """A run block as (command after ``$ ``, the output shown under it) pairs."""
    pairs: list[tuple[str, str]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            pairs.append((line[2:], ""))
        else:
            assert pairs, f"a run block starts with its `$ ` command: {line!r}"
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + line + "\n")
    return pairs


def expected_differences(shown: str, out: str) -> list[str]:
    if not shown.strip():
        return []
    if shown.lstrip().startswith("{"):
        return json_differences(json.loads(shown), json.loads(out))
    doc, real = text_shape(shown), text_shape(out)
    return [f"documented {a!r}, printed {b!r}" for a, b in zip(doc, real, strict=False) if a != b] + (
        [f"documented {len(doc)} lines, printed {len(real)}"] if len(doc) != len(real) else []
    )


@pytest.mark.parametrize("block", marked_blocks(), ids=lambda b: b.where)
def test_a_marked_example_runs_and_prints_what_the_docs_show(block, substitutes, data_dir, tmp_path):
    for command, shown in split_block(block.body):
        code, out, err = substitutes(substituted(command, data_dir), tmp_path)
        assert code == 0, f"{block.where}: `{command}` exited {code}: {err}"
        differences = expected_differences(shown, out)
        assert not differences, f"{block.where}: `{command}`:\n" + "\n".join(differences)


def test_the_examples_marked_to_run_are_found():
    where = [b.where for b in marked_blocks()]
    assert "docs/getting-started.md" in " ".join(where) and len(where) >= 2, where


def test_the_run_json_key_table_lists_what_run_prints(substitutes, data_dir, tmp_path):
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    section = text.split("## What `stsbench run --format json` prints", 1)[1].split("\n## ", 1)[0]
    documented = {k for row in re.findall(r"^\| (`.+?) \|", section, flags=re.M) for k in re.findall(r"`(\w+)`", row)}
    args = ["run", "--model", "all-MiniLM-L6-v2", "--tasks", "STSBenchmark", "--mode", "dev"]
    code, out, err = substitutes([*args, "--data-dir", str(data_dir), "--format", "json", "-q"], tmp_path)
    assert code == 0, err
    assert documented == set(json.loads(out)), (sorted(documented), sorted(json.loads(out)))
