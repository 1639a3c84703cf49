"""The generic registry every extension point uses (:mod:`stsbench.registry`)."""

from __future__ import annotations

import sys

import pytest

from stsbench.errors import StsbenchError
from stsbench.registry import Registry, load_target


def test_lazy_target_is_imported_on_first_get_only() -> None:
    reg: Registry = Registry("thing")
    reg.register("wrap", "textwrap:dedent")
    sys.modules.pop("textwrap", None)
    assert "wrap" in reg and reg.names() == ["wrap"]
    assert "textwrap" not in sys.modules  # listing and checking import nothing
    import textwrap

    assert reg.get("wrap") is textwrap.dedent


def test_aliases_and_normalised_spellings_find_one_entry() -> None:
    reg: Registry = Registry("task", normalise=lambda s: s.lower().replace("-", ""))
    reg.register("STSBenchmark", object(), aliases=("STS-B",))
    assert reg.check("STS-B") == reg.check("sts-b") == reg.check("stsb") == "STSBenchmark"


def test_unknown_name_is_one_line_with_the_nearest() -> None:
    reg: Registry = Registry("pooler")
    for name in ("cls", "avg", "avg_top2"):
        reg.register(name, name)
    with pytest.raises(StsbenchError) as err:
        reg.get("avgg")
    assert (
        "unknown pooler 'avgg'" in str(err.value) and "'avg'" in str(err.value) and "\n" not in str(err.value)
    )


def test_a_name_claimed_twice_is_refused_and_a_decorator_registers() -> None:
    reg: Registry = Registry("method")

    @reg.register("toy")
    class Toy:
        pass

    assert reg.get("toy") is Toy
    reg.register("toy", Toy)  # the same target again is fine (re-import)
    with pytest.raises(StsbenchError, match="registered twice"):
        reg.register("toy", "somewhere:else")


def test_bad_target_is_one_line() -> None:
    reg: Registry = Registry("task")
    reg.register("gone", "stsbench.no_such_module:Task")
    with pytest.raises(StsbenchError, match="failed to load"):
        reg.get("gone")
    with pytest.raises(StsbenchError, match="module:attr"):
        load_target("no-colon")


def test_a_lazy_target_registered_again_by_its_own_decorator_is_one_entry() -> None:
    import textwrap

    reg: Registry = Registry("thing")
    reg.register("dedent", "textwrap:dedent")  # an entry point, not imported yet
    assert reg.target("dedent") == "textwrap:dedent"
    reg.register("dedent", textwrap.dedent)  # its module registering it on import: the same target
    assert reg.target("dedent") is textwrap.dedent and reg.names() == ["dedent"]
    with pytest.raises(StsbenchError, match="registered twice"):
        reg.register("dedent", textwrap.indent)


def test_unregister_removes_the_name_and_its_spellings() -> None:
    reg: Registry = Registry("task", normalise=lambda s: s.lower())
    reg.register("STSBenchmark", object(), aliases=("STS-B",))
    reg.unregister("sts-b")
    assert "STSBenchmark" not in reg and "stsbenchmark" not in reg and "STS-B" not in reg and len(reg) == 0
    reg.unregister("never-there")  # ignored
