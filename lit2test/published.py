"""The published Table 1 of the Lit2Test paper, as printed (PROTOCOL.md section 1), so that the leaderboard of
the release's canonical run can say where its figures differ from the printed ones and why.

Values are kept as the printed strings: a comparison is between what a reader sees in both places.
"""

from __future__ import annotations

from typing import Any

from arena import formatting

#: Table 1 prints the *ordered* Bradley–Terry fit (pseudo-count 0.5, case bootstrap with 10,000 replicates).
TABLE_1: dict[str, Any] = {
    "benchmark": "lit2test",
    "fit": "ordered",
    "pseudo_count": 0.5,
    "cases": 1200,
    "rows": {
        "GPT 5.2": {"strength": "1.26", "ci": ("1.14", "1.40"), "wlt": (424, 49, 127), "human_wr": ".805"},
        "Claude-Sonnet-4.6": {"strength": "0.74", "ci": ("0.62", "0.87"), "wlt": (347, 119, 134), "human_wr": ".775"},
        "GLM-5": {"strength": "−0.73", "ci": ("−0.86", "−0.61"), "wlt": (118, 343, 139), "human_wr": ".233"},
        "DeepSeek-V3.2": {"strength": "−1.28", "ci": ("−1.42", "−1.15"), "wlt": (61, 439, 100), "human_wr": ".214"},
    },
}


def published_table(doc: dict[str, Any], *, benchmark_name: str, is_canonical: bool) -> dict[str, Any] | None:
    """The printed Table 1 when ``doc`` is the leaderboard it prints (the release's canonical run on all its
    cases with the published pseudo-count), else None."""
    if (
        benchmark_name != TABLE_1["benchmark"]
        or not is_canonical
        or doc.get("cases", {}).get("total") != TABLE_1["cases"]
        or doc.get("bt", {}).get("pseudo_count") != TABLE_1["pseudo_count"]
        or set(doc.get("models", [])) != set(TABLE_1["rows"])
    ):
        return None
    return TABLE_1


def rounding_differences(doc: dict[str, Any], table: dict[str, Any]) -> list[dict[str, str]]:
    """Where the page's two-decimal strength or CI of the printed fit differs from the printed value.

    Each difference names the model, the figure, the unrounded value (to five decimals), what the page shows and
    what the paper prints.
    """
    out = []
    block = doc["bt"][table["fit"]]
    for model, printed in table["rows"].items():
        fit = block.get(model)
        if not fit:
            continue
        figures = [("strength", fit["strength"], printed["strength"])]
        if fit.get("ci"):
            figures += [("CI lower end", fit["ci"][0], printed["ci"][0]), ("CI upper end", fit["ci"][1], printed["ci"][1])]
        for what, value, paper in figures:
            shown = formatting.number(value, 2)
            if shown != paper:
                out.append({"model": model, "figure": what, "value": formatting.number(value, 5), "shown": shown, "paper": paper})
    return out
