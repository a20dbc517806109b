"""The text form of the predicted-vs-oracle plot: points land in the cells worked out by hand."""

from __future__ import annotations

from heuristics.textplot import PlotPoint, efficiency_histogram, scatter


def test_scatter_places_points_on_log_axes():
    # Axes 1e0 .. 1e2 over 4 columns and 4 rows: one cell per half decade.
    points = [
        PlotPoint(oracle_tflops=1.5, predicted_tflops=1.5),  # column 0, bottom row
        PlotPoint(oracle_tflops=90.0, predicted_tflops=90.0),  # column 3, top row
        PlotPoint(oracle_tflops=90.0, predicted_tflops=2.0),  # column 3, bottom row: a bad pick
    ]
    lines = scatter(points, "t", width=4, height=4).splitlines()
    assert lines[0].startswith("t:") and "3 groups" in lines[0]
    grid = [line.split("|", 1)[1] for line in lines[1:5]]
    assert grid[0] == "   1" and grid[3] == "1  1"
    assert lines[1].startswith("1e2") and lines[4].startswith("1e0")
    assert "/" in grid[1] + grid[2]  # the diagonal where no point is


def test_scatter_counts_ten_or_more_as_hash():
    points = [PlotPoint(oracle_tflops=5.0, predicted_tflops=5.0)] * 12
    assert "#" in scatter(points, "t", width=8, height=4)


def test_efficiency_histogram_bins():
    points = [PlotPoint(oracle_tflops=10.0, predicted_tflops=p) for p in (10.0, 10.0, 9.8, 9.0, 6.0, 1.0)]
    rows = {line[:12]: int(line[12:18]) for line in efficiency_histogram(points).splitlines()[1:]}
    assert rows["= oracle    "] == 2
    assert rows["[ 97%,  99%)"] == 1  # 0.98
    assert rows["[ 90%,  95%)"] == 1  # 0.90
    assert rows["[ 50%,  70%)"] == 1  # 0.60
    assert rows["[  0%,  50%)"] == 1  # 0.10
    assert sum(rows.values()) == len(points)
