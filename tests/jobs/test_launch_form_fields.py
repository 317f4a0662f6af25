"""The judge-run form shows the chosen benchmark's protocol's own fields (issue 24, item 6).

It opened on the newest benchmark with the first run type of another protocol, so that its first submit failed ("is
a Intrinsic scoring benchmark"), and showed every protocol's fields at once. Now: the run types, prompts, selection
grammar and extra fields of the benchmark's protocol only; the orders, the canonical flag and replays only where that
protocol's runs have them; choosing another benchmark swaps those fields in (htmx, or a GET form without JavaScript).
And every launch form of every protocol words the same field the same way ("Endpoint URL", not "Base url").

Runs are created inside the test's transaction, so their drivers (enqueued on commit) never start.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from hypoarena.importing import hypoarena_import, import_files
from tests.html_forms import field_labels, page_forms
from tests.hypoarena import helpers as h
from tests.intrinsic import helpers as ih

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def benchmarks(tmp_path: Path, imported: Benchmark) -> dict[str, Benchmark]:
    """A benchmark of each protocol, made in this order: the Intrinsic one is the newest."""
    from reconstruction.importing import import_files as reconstruction_files
    from reconstruction.importing import reconstruction_import
    from tests.reconstruction import helpers as rh

    return {
        "lit2test": imported,
        "hypoarena": hypoarena_import(name="arena-form", files=import_files([h.folder(tmp_path / "h")])).benchmark,
        "reconstruction": reconstruction_import(
            name="recon-form", files=reconstruction_files(rh.folder(tmp_path / "r"))
        ).benchmark,
        "intrinsic": ih.make_benchmark(tmp_path),
    }


def protocol_part(html: str) -> str:
    return html[html.index('<fieldset id="protocol-fields"') :].split("</fieldset>")[0]


def test_the_form_opens_on_the_newest_benchmark_and_its_defaults_launch_a_run(rita_client: Client, benchmarks) -> None:  # noqa: ANN001
    page = rita_client.get(reverse("jobs:run-new")).content.decode()
    form = page_forms(page)["run-form"]
    newest = benchmarks["intrinsic"]
    assert form.values["benchmark"] == [str(newest.pk)]
    assert [value for value, _ in form.choices["run_type"]] == ["listwise"]  # only Intrinsic scoring's run type

    data = form.data() | {"judge_model": "judge-x", "base_url": "http://127.0.0.1:9/v1"}
    response = rita_client.post(reverse("jobs:run-new"), data)
    run = JudgeRun.objects.get(benchmark=newest)
    assert response.status_code == 302 and response["Location"] == reverse("jobs:run", args=[run.pk])
    assert (run.run_type, run.subjects) == ("listwise", "intrinsic_listwise")


@pytest.mark.parametrize(
    ("protocol", "run_types", "present", "absent"),
    [
        ("lit2test", ["holistic", "structured"], {"orders", "canonical", "replay_of"}, {"judge_family"}),
        ("hypoarena", ["arena", "rubric"], {"orders", "replay_of"}, {"canonical", "judge_family"}),
        ("reconstruction", ["match"], {"judge_family"}, {"orders", "canonical", "replay_of"}),
        ("intrinsic", ["listwise"], set(), {"orders", "canonical", "replay_of", "judge_family"}),
    ],
)
def test_each_protocol_shows_only_its_own_fields(
    rita_client: Client, benchmarks, protocol: str, run_types: list[str], present: set[str], absent: set[str]
) -> None:  # noqa: ANN001
    benchmark = benchmarks[protocol]
    page = rita_client.get(reverse("jobs:run-new"), {"benchmark": benchmark.pk}).content.decode()
    form = page_forms(page)["run-form"]
    assert form.values["benchmark"] == [str(benchmark.pk)]
    assert [value for value, _ in form.choices["run_type"]] == run_types
    assert present <= set(form.controls) and not absent & set(form.controls)
    part = protocol_part(page)
    assert f'data-protocol="{protocol}"' in part and f"<legend>{benchmark.get_protocol_display()} run" in part
    # The prompts offered are those of its run types.
    assert {label.rsplit("(", 1)[-1].rstrip(")") for v, label in form.choices["prompt_version"] if v} == set(run_types)


def test_orders_say_which_hypoarena_runs_have_them_and_replays_are_the_benchmarks_own(rita_client: Client, benchmarks) -> None:  # noqa: ANN001
    arena = benchmarks["hypoarena"]
    page = rita_client.get(reverse("jobs:run-new"), {"benchmark": arena.pk}).content.decode()
    assert "Only arena runs have them; the others ask once." in protocol_part(page)
    replays = {value for value, _ in page_forms(page)["run-form"].choices["replay_of"] if value}
    # tests/hypoarena/helpers.py: judge-x's arena run "r1" and rubric run "rub"; none of the Lit2Test benchmark's runs.
    assert replays == {str(r.pk) for r in JudgeRun.objects.filter(benchmark=arena)} and len(replays) == 2


def test_choosing_another_benchmark_swaps_in_its_protocols_fields(rita_client: Client, benchmarks) -> None:  # noqa: ANN001
    page = rita_client.get(reverse("jobs:run-new"), {"benchmark": benchmarks["lit2test"].pk}).content.decode()
    forms = page_forms(page)
    select = forms["run-form"].controls["benchmark"]
    # With JavaScript: a change fetches the page for that benchmark and takes its protocol's fieldset from it.
    assert (select["hx-get"], select["hx-trigger"]) == (reverse("jobs:run-new"), "change")
    assert select["hx-select"] == select["hx-target"] == "#protocol-fields" and select["hx-swap"] == "outerHTML"
    # Without: a GET form that sends the benchmark alone (no CSRF token in a URL).
    pick = forms["benchmark-pick"]
    assert pick.attrs["method"] == "get" and set(pick.values) == {"benchmark"}
    assert {v for v, _ in pick.choices["benchmark"]} == {str(b.pk) for b in benchmarks.values()}

    fetched = rita_client.get(reverse("jobs:run-new"), {"benchmark": benchmarks["reconstruction"].pk}, **HTMX).content.decode()
    part = protocol_part(fetched)
    assert 'data-protocol="reconstruction"' in part and 'name="judge_family"' in part and 'name="orders"' not in part


def test_a_run_type_of_another_protocol_is_refused_naming_the_benchmarks_own(rita_client: Client, benchmarks) -> None:  # noqa: ANN001
    # A form shown for one benchmark and posted with another (no JavaScript): the answer shows the posted one's fields.
    page = rita_client.get(reverse("jobs:run-new"), {"benchmark": benchmarks["lit2test"].pk}).content.decode()
    data = page_forms(page)["run-form"].data() | {"benchmark": str(benchmarks["intrinsic"].pk), "judge_model": "j"}
    answer = rita_client.post(reverse("jobs:run-new"), data | {"base_url": "http://127.0.0.1:9/v1"}).content.decode()
    assert f"{benchmarks['intrinsic']} is an Intrinsic scoring benchmark: its runs are listwise, not holistic." in answer
    assert (
        'data-protocol="intrinsic"' in protocol_part(answer)
        and not JudgeRun.objects.filter(benchmark=benchmarks["intrinsic"]).exists()
    )


def test_every_launch_form_of_every_protocol_words_a_field_the_same_way(rita_client: Client, benchmarks) -> None:  # noqa: ANN001
    pages = {f"judge run on {p}": reverse("jobs:run-new") + f"?benchmark={b.pk}" for p, b in benchmarks.items()} | {
        "generation run": reverse("lit2test:generation-new"),
        "reconstruction launch": reverse("reconstruction:launch", args=[benchmarks["reconstruction"].pk]),
        "intrinsic launch": reverse("intrinsic:launch", args=[benchmarks["intrinsic"].pk]),
    }
    seen: dict[str, dict[str, str]] = {}
    for page, url in pages.items():
        response = rita_client.get(url)
        assert response.status_code == 200, page
        for n, (name, label) in enumerate(field_labels(response.content.decode())):
            seen.setdefault(name, {})[f"{page} #{n}"] = label
    differing = {name: by_form for name, by_form in seen.items() if len(set(by_form.values())) > 1}
    assert differing == {}
    # Every page asks for the endpoint (the Reconstruction page twice: proposers and Swiss selection).
    assert len(seen["base_url"]) == len(seen["api_key_env"]) == len(pages) + 1
    assert set(seen["base_url"].values()) == {"Endpoint URL:"} and set(seen["api_key_env"].values()) == {"API key variable:"}


def test_the_generation_form_offers_only_lit2test_benchmarks(rita_client: Client, benchmarks) -> None:  # noqa: ANN001
    page = rita_client.get(reverse("lit2test:generation-new")).content.decode()
    [form] = [f for f in page_forms(page).values() if "benchmark" in f.choices]
    assert [v for v, _ in form.choices["benchmark"] if v] == [str(benchmarks["lit2test"].pk)]
