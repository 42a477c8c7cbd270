"""ProbeSettings: declared bounds, choices, and a round trip through a result's `probe` dict."""

import pytest

from genebench.probe.settings import ProbeSettings


@pytest.mark.parametrize(("field", "value", "message"), [
    ("C", 0.0, r"ProbeSettings.C: expected a finite number in \(0, inf\), found 0.0"),
    ("tol", -1.0, r"ProbeSettings.tol: expected a finite number in \(0, inf\)"),
    ("max_iter", 0, r"ProbeSettings.max_iter: expected an int in \[1, inf\), found 0"),
    ("max_iter", 2.5, r"expected an int"),
    ("max_iter", True, r"expected an int in \[1, inf\), found True"),
    ("C", float("inf"), r"ProbeSettings.C: expected a finite number in \(0, inf\), found inf"),
    ("tol", float("inf"), r"ProbeSettings.tol: expected a finite number in \(0, inf\), found inf"),
    ("ridge_alpha", float("nan"), r"ProbeSettings.ridge_alpha: expected a finite number in \(0, inf\), found nan"),
    ("min_covered", 1, r"min_covered: expected an int in \[2, inf\)"),
    ("pair_mode", "sum", r"ProbeSettings.pair_mode: expected one of \['mean', 'concat'\], found 'sum'"),
    ("categorical", "softmax", r"expected one of \['multinomial', 'ovr'\]"),
])
def test_out_of_bounds_values_are_rejected(field, value, message):
    with pytest.raises(ValueError, match=message):
        ProbeSettings(**{field: value})


def test_round_trip_and_unknown_keys():
    settings = ProbeSettings(C=0.25, pair_mode="concat", device="cpu")
    assert ProbeSettings.from_dict(settings.to_dict()) == settings
    assert settings.to_dict()["C"] == 0.25
    with pytest.raises(ValueError, match=r"unknown settings \['penalty'\]"):
        ProbeSettings.from_dict({"penalty": "l1"})
