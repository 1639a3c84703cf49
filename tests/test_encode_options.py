"""The commands' shared options become one EncodeOptions: what each flag sets, and the prompt clash refused."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from stsbench.commands._options import Dtype, encode_options
from stsbench.encoders.base import EncodeOptions
from stsbench.errors import StsbenchError


def test_a_commands_keywords_give_its_encode_options():
    given = {"pooler": "avg", "no_cache": True, "dtype": Dtype.bfloat16, "cache_dir": Path("c"), "seed": 3}
    assert encode_options(given) == EncodeOptions(
        pooler="avg", dtype="bfloat16", cache_dir=Path("c"), use_cache=False
    )
    assert type(encode_options(given).dtype) is str  # the value, as stsbench.evaluate(dtype=...) takes it
    assert encode_options({"output": Path("out")}) == EncodeOptions()  # what a command lacks keeps its default


def test_a_prompt_with_a_prompt_name_is_refused_and_the_options_are_frozen():
    with pytest.raises(StsbenchError, match="prompt"):
        encode_options({"prompt": "query: ", "prompt_name": "query"})
    options = encode_options({"prompt_name": "query"})
    assert options.prompted and not EncodeOptions().prompted
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.pooler = "cls"  # type: ignore[misc]
