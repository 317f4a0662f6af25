"""The study page's scatter geometry."""

from __future__ import annotations

from annotation.charts import scatter_plot


def test_one_dot_per_model_with_higher_strength_to_the_right_and_higher_win_rate_up() -> None:
    plot = scatter_plot({"A": 1.2, "B": -0.7, "C": 0.1, "D": 9.0}, {"A": 0.8, "B": 0.2, "C": 0.5})
    assert plot is not None
    by_model = {p.model: p for p in plot.points}
    assert set(by_model) == {"A", "B", "C"}  # D has no human win rate
    assert by_model["A"].x > by_model["C"].x > by_model["B"].x
    assert by_model["A"].y < by_model["C"].y < by_model["B"].y  # SVG y grows downwards
    assert plot.left <= min(p.x for p in plot.points) and max(p.x for p in plot.points) <= plot.right
    assert scatter_plot({}, {}) is None


def test_labels_of_close_dots_do_not_overlap() -> None:
    plot = scatter_plot(
        {"GLM-5": -0.73, "DeepSeek-V3.2": -1.28, "GPT 5.2": 1.27}, {"GLM-5": 0.5, "DeepSeek-V3.2": 0.48, "GPT 5.2": 0.55}
    )
    dy = {p.model: p.label_dy for p in plot.points}
    assert dy["DeepSeek-V3.2"] != dy["GLM-5"]
