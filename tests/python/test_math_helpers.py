"""tilec.math (TileLang's tilelang.math): next_power_of_2 and cdiv, also as tilec.cdiv and
tilec.next_power_of_2, on ints and on symbolic dims."""

import pytest

import tilec
import tilec.language as T
import tilec.math


@pytest.mark.parametrize("x, expected", [(1, 1), (2, 2), (3, 4), (64, 64), (65, 128),
                                         (1000, 1024)])
def test_next_power_of_2(x, expected):
    assert tilec.math.next_power_of_2(x) == expected == tilec.next_power_of_2(x)


@pytest.mark.parametrize("a, b, expected", [(0, 4, 0), (1, 4, 1), (8, 4, 2), (9, 4, 3),
                                            (1000, 128, 8)])
def test_cdiv(a, b, expected):
    assert tilec.math.cdiv(a, b) == expected == tilec.cdiv(a, b)


def test_cdiv_of_a_symbolic_dim_is_an_expression():
    assert repr(tilec.cdiv(T.symbolic("n"), 64)) == "(((T.symbolic('n') + 64) - 1) // 64)"
