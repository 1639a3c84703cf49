"""SimCSE Table 4's "Fixed 0.1": one dropout mask for both views, as one encoding used twice."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import build_tiny

from stsbench.errors import StsbenchError
from stsbench.train.config import TrainConfig
from stsbench.train.methods.base import Views

pytestmark = pytest.mark.usefixtures("one_thread")


def _built(files, tmp_path, **options):
    return build_tiny(files, tmp_path / "out", **{"method": "simcse", **options})


def _views(method) -> Views:
    rows = [("a man is playing a guitar .",), ("the cat sleeps on the warm mat .",), ("it rains today .",)]
    return method.make_views(rows, np.arange(3), np.random.default_rng(0))


def test_one_mask_is_one_encoding_used_twice(files, tmp_path):
    model, _, method = _built(files, tmp_path, fixed_dropout_mask=True, dropout=0.1)
    views = _views(method)
    torch.manual_seed(7)
    loss, _ = method.loss(model, views)
    torch.manual_seed(7)
    h = model(views.anchor)  # the same draws: one forward pass, one dropout mask
    assert float(loss) == float(method.criterion(h, h))
    # the positive is the anchor itself: the in-batch softmax of identical pairs, far below dropout's twin loss
    model2, _, twin = _built(files, tmp_path / "twin", dropout=0.1)
    torch.manual_seed(7)
    twin_loss, _ = twin.loss(model2, _views(twin))
    assert float(loss) < float(twin_loss)


def test_views_that_differ_are_refused_in_one_line(files, tmp_path):
    with pytest.raises(StsbenchError, match="--fixed-dropout-mask: .* --augment crop makes them differ"):
        TrainConfig(method="simcse", augment="crop", fixed_dropout_mask=True)
    with pytest.raises(StsbenchError, match=r"--fixed-dropout-mask: .*esimcse's differ \(repetition\)"):
        _built(files, tmp_path, method="esimcse", fixed_dropout_mask=True, queue_multiple=0)
    with pytest.raises(StsbenchError, match="sup-simcse's differ"):
        _built(files, tmp_path, train_file=str(files / "nli.csv"), fixed_dropout_mask=True)
    with pytest.raises(StsbenchError, match="--fixed-dropout-mask"):  # not a MoCoSE option
        TrainConfig(method="mocose", fixed_dropout_mask=True)
    _built(files, tmp_path, method="esimcse", repetition=False, fixed_dropout_mask=True, queue_multiple=0)
