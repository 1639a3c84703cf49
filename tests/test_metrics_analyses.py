"""Analysis metrics against hand-computed numbers and independent oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stsbench import metrics as M


def test_simcse_average_is_the_mean_of_the_printed_figures():
    # the README's all-MiniLM-L6-v2 row: 552.12 / 7 = 78.874...
    assert M.simcse_average([72.37, 80.6, 75.59, 85.39, 78.99, 82.03, 77.15]) == 78.87
    assert M.simcse_average([1.0, 2.0, 2.0]) == 1.67
    assert M.simcse_average([70.0, None]) is None and M.simcse_average([]) is None


def test_normalise_gold_both_scales():
    np.testing.assert_allclose(M.normalise_gold(np.array([0.0, 2.5, 5.0]), (0.0, 5.0)), [0.0, 0.5, 1.0])
    # SICK 1-5: (g - 1) / 4, not g / 5
    np.testing.assert_allclose(
        M.normalise_gold(np.array([1.0, 2.0, 4.6, 5.0]), (1.0, 5.0)), [0.0, 0.25, 0.9, 1.0]
    )
    with pytest.raises(ValueError):
        M.normalise_gold(np.array([1.0]), (5.0, 5.0))


def test_mean_abs_diff_hand():
    # |0.9-1| + |0.2-0.5| + |-0.1-0| = 0.1 + 0.3 + 0.1 -> 0.5 / 3
    assert M.mean_abs_diff(np.array([0.9, 0.2, -0.1]), np.array([1.0, 0.5, 0.0])) == pytest.approx(0.5 / 3)
    with pytest.raises(ValueError):
        M.mean_abs_diff(np.array([]), np.array([]))


def test_spearman_or_reason():
    assert M.spearman_or_reason([1, 2, 3, 4], [1, 3, 2, 4])[0] == pytest.approx(0.8)
    value, reason = M.spearman_or_reason([1, 2], [2, 1])
    assert value is None and "2 pair(s)" in reason
    value, reason = M.spearman_or_reason([0.5, 0.5, 0.5], [1, 2, 3])
    assert value is None and reason == "constant similarities"
    value, reason = M.spearman_or_reason([0.1, 0.5, 0.3], [4, 4, 4])
    assert value is None and reason == "constant gold scores"


def test_bucket_of_boundaries():
    bounds = [(0, 0), (1, 2), (3, 4), (5, 7), (8, None)]
    got = M.bucket_of(np.array([0, 1, 2, 3, 4, 5, 7, 8, 40]), bounds)
    np.testing.assert_array_equal(got, [0, 1, 1, 2, 2, 3, 3, 4, 4])
    # threshold 3: <= 3 is group 0, so a difference of exactly 3 is in the first group
    np.testing.assert_array_equal(M.bucket_of(np.array([2, 3, 4]), [(0, 3), (4, None)]), [0, 0, 1])
    assert M.bucket_of(np.array([9]), [(0, 3)])[0] == -1


def _square():
    # four unit vectors at 90 degrees: adjacent squared distance 2, opposite 4
    return np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])


def test_alignment_uniformity_four_points():
    p = _square()
    # positive pairs (p0, p1) at d^2 = 2 and (p0, p2) at d^2 = 4 -> mean 3
    assert M.alignment(p[[0, 0]], p[[1, 2]]) == pytest.approx(3.0)
    # scaling does not matter: the embeddings are normalised first
    assert M.alignment(5 * p[[0, 0]], 0.1 * p[[1, 2]]) == pytest.approx(3.0)
    # 6 distinct pairs: 4 at d^2 = 2, 2 at d^2 = 4
    expected = math.log((4 * math.exp(-4) + 2 * math.exp(-8)) / 6)
    assert M.uniformity(p) == pytest.approx(expected)
    assert M.uniformity(p, block=1) == pytest.approx(expected)


def test_uniformity_matches_wang_isola_code():
    x = np.random.default_rng(0).normal(size=(37, 8))
    t = torch.nn.functional.normalize(torch.tensor(x), dim=1)
    oracle = torch.pdist(t, p=2).pow(2).mul(-2).exp().mean().log().item()
    assert M.uniformity(x, block=5) == pytest.approx(oracle, rel=1e-10)
    y = np.random.default_rng(1).normal(size=(37, 8))
    ty = torch.nn.functional.normalize(torch.tensor(y), dim=1)
    assert M.alignment(x, y) == pytest.approx((t - ty).norm(p=2, dim=1).pow(2).mean().item())


def test_singular_values_against_eigenvalues():
    x = np.random.default_rng(2).normal(size=(20, 5)) + 3.0
    sv = M.singular_values(x)
    np.testing.assert_allclose(sv, np.sqrt(np.sort(np.linalg.eigvalsh(x.T @ x))[::-1]), rtol=1e-10)
    xc = x - x.mean(0)
    svc = M.singular_values(x, center=True)
    np.testing.assert_allclose(svc, np.sqrt(np.sort(np.linalg.eigvalsh(xc.T @ xc))[::-1]), rtol=1e-10)
    # an offset of 3 in every coordinate makes the uncentred top direction dominant
    assert M.top_share(sv) > 0.9 > M.top_share(svc)


def test_effective_rank_and_top_share_hand():
    assert M.effective_rank(np.array([2.0, 2.0, 2.0, 2.0])) == pytest.approx(4.0)
    assert M.effective_rank(np.array([3.0, 0.0, 0.0])) == pytest.approx(1.0)
    # p = (0.75, 0.25): exp(-(0.75 ln 0.75 + 0.25 ln 0.25)) = 1.7548...
    assert M.effective_rank(np.array([3.0, 1.0])) == pytest.approx(1.7547654, rel=1e-6)
    assert M.top_share(np.array([3.0, 1.0])) == pytest.approx(0.9)


def test_random_pairs_and_mean_cosine():
    i, j = M.random_distinct_pairs(5, 1000, seed=3)
    assert (i != j).all() and i.max() == 4 and j.max() == 4
    i2, j2 = M.random_distinct_pairs(5, 1000, seed=3)
    assert (i == i2).all() and (j == j2).all()
    p = _square()
    # cosines: 4 pairs at 0, 2 pairs at -1 -> -2/6
    assert M.mean_cosine_all_pairs(p) == pytest.approx(-1 / 3)
    x = np.random.default_rng(4).normal(size=(9, 3)) + 1.0
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    brute = np.mean([u[a] @ u[b] for a in range(9) for b in range(9) if a != b])
    assert M.mean_cosine_all_pairs(x) == pytest.approx(brute)
