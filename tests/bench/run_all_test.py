"""bench/run_all.py: the spread it reports and the results file it writes."""

import json

from run_all import DRIVERS, results_json, spread, summarize, table, vcpus_apart


def test_under_ten_pairs_the_spread_is_min_to_max():
    assert spread([0.9, 1.0, 1.1, 1.2, 3.0]) == [0.9, 3.0]


def test_from_ten_pairs_the_spread_drops_a_tenth_at_each_end():
    ratios = [0.1] + [1.0 + i / 100 for i in range(8)] + [9.0]
    assert spread(ratios) == [1.0, 1.07]
    assert spread([0.1, 0.2] + [1.0] * 16 + [8.0, 9.0]) == [1.0, 1.0]


def test_results_keep_every_sample_to_four_significant_digits_one_line_per_list():
    results = {"rows": [{"name": "add, 16 floats [x]", "openreg": [1.234567e-06, 2.5e-06], "reference": [1e-06]}]}
    text = results_json(results)
    assert json.loads(text) == {"rows": [{"name": "add, 16 floats [x]", "openreg": [1.235e-06, 2.5e-06],
                                          "reference": [1e-06]}]}
    assert '"openreg": [1.235e-06, 2.5e-06],' in text.splitlines()[4]


def test_rows_measured_with_the_vcpus_apart_are_marked():
    def row(probes):
        data = {"openreg": [2.0, 2.0], "reference": [1.0, 1.0]}
        if probes is not None:
            data["core_to_core_ns"] = probes
        return summarize({"group": "graphs", "name": "x", "kind": "time", "reference_name": "eager",
                          "per_driver": {driver: dict(data) for driver in DRIVERS}})

    assert vcpus_apart({"core_to_core_ns": [60.0, 350.0]})
    assert not vcpus_apart({"core_to_core_ns": [60.0, 85.0]})
    assert not vcpus_apart({"core_to_core_ns": [None, None]})
    assert not vcpus_apart({})
    assert table([row([350.0, 60.0])]).count("‡") == 2
    assert "‡" not in table([row([60.0, 70.0]), row(None)])
