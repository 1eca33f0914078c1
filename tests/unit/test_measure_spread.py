"""Repeated lab measurements shown as median and min-max (tr4947.measure.spread)."""
import pytest

from tr4947.measure.spread import Spread, series, spread


def test_median_low_high_and_format():
    s = spread([13.0, 11.9, 12.3])
    assert (s.n, s.median, s.low, s.high) == (3, 12.3, 11.9, 13.0)
    assert s.fmt() == "12.3 (11.9-13.0, n=3)"
    assert s.fmt(2, "MB/s") == "12.30 MB/s (11.90-13.00, n=3)"
    assert spread([4, 1, 3, 2]).median == 2.5                 # even count: the middle two
    assert spread(["7"]).fmt(0, "%") == "7 % (n=1)"


def test_no_values_is_an_error():
    with pytest.raises(ValueError, match="no values"):
        spread([])


@pytest.mark.parametrize("a,b,overlap", [
    ((1, 2), (2, 3), True),            # touching ranges cannot be told apart
    ((1, 2), (2.01, 3), False),
    ((1, 5), (2, 3), True),            # one inside the other
    ((3, 4), (1, 2), False),
])
def test_overlaps(a, b, overlap):
    assert spread(a).overlaps(spread(b)) is overlap
    assert spread(b).overlaps(spread(a)) is overlap


def test_series_for_a_chart_with_error_bars():
    s = series("DAS", [10, 20], [spread([1.234, 1.0, 2.0]), Spread((5.0,))])
    assert s == {"name": "DAS", "x": [10, 20], "y": [1.23, 5.0], "low": [1.0, 5.0],
                 "high": [2.0, 5.0], "n": [3, 1]}
