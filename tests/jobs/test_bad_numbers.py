"""Numbers the launch form, cost-to-precision and the commands must refuse with their reason, never an error page or a
traceback (review of issue 25's launch paths):

- "²" (and other digits that are no ASCII digit) passes ``str.isdigit()`` but ``int()`` and a primary-key filter
  refuse it: the launch form's ``?benchmark=``, the selection grammar's ``sample:N`` (every protocol's launch form
  and cost-to-precision), a benchmark named on the command line, a benchmark's next version;
- cost-to-precision's ``benchmark`` that is no id (``abc``, ``1.5``, ``0x10``, ``1e3``) or names no benchmark, and a
  text parameter holding a NUL (PostgreSQL refuses one in a text value);
- a ``sample`` number larger than the call cache's column (2,147,483,647) on the form and on ``run_judge --sample``.

The benchmark is imported once for the module, with its release judge's run (its tests only read it; a run a valid
form makes is rolled back with its test).
"""

from __future__ import annotations

import html
import io
from collections.abc import Iterator

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from arena.models import Benchmark, JudgeRun
from tests.html_forms import page_forms
from tests.launching import NOWHERE, lit2test_release

pytestmark = pytest.mark.django_db

SUPERSCRIPT_TWO = "²"  # str.isdigit() says yes, int() says no
NOT_IDS = ["abc", "1.5", "0x10", "1e3", "-1", "", SUPERSCRIPT_TWO, "9" * 25]


@pytest.fixture(scope="module")
def small(django_db_setup, django_db_blocker, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Benchmark]:  # noqa: ANN001
    """A small Lit2Test benchmark (two contexts with text, three models), imported once (deleted at the module's end)."""
    with django_db_blocker.unblock():
        benchmark = lit2test_release(tmp_path_factory.mktemp("bad-numbers"), "bad-numbers")
    yield benchmark
    with django_db_blocker.unblock():
        benchmark.delete()


def runs() -> set[int]:
    """Every judge run's id (the release brought its judge's run): a refusal makes none."""
    return set(JudgeRun.objects.values_list("pk", flat=True))


def launch_values(client: Client, benchmark: Benchmark, **extra: str) -> dict[str, object]:
    """The launch form's own values for the benchmark, with a judge and an endpoint that is never called."""
    form = page_forms(client.get(reverse("jobs:run-new"), {"benchmark": benchmark.pk}).content.decode())["run-form"]
    return form.data() | {"judge_model": "judge-x", "base_url": NOWHERE} | extra


@pytest.mark.parametrize("value", [SUPERSCRIPT_TWO, "9" * 25])
def test_the_launch_form_asked_for_a_benchmark_that_is_no_id_opens_on_the_newest(
    rita_client: Client,
    small,  # noqa: ANN001
    value: str,
) -> None:
    newest = Benchmark.objects.order_by("-created_at", "-id").first()
    response = rita_client.get(reverse("jobs:run-new"), {"benchmark": value})
    assert response.status_code == 200
    assert page_forms(response.content.decode())["run-form"].values["benchmark"] == [str(newest.pk)]


def test_a_launch_posted_with_a_superscript_benchmark_is_refused_on_the_benchmark_field(rita_client: Client, small) -> None:  # noqa: ANN001
    data, before = launch_values(rita_client, small) | {"benchmark": SUPERSCRIPT_TWO}, runs()
    response = rita_client.post(reverse("jobs:run-new"), data)
    assert response.status_code == 200 and "benchmark" in response.context["form"].errors
    assert runs() == before


def test_a_sample_of_superscript_subjects_is_refused_with_the_grammar_on_the_form_and_by_cost_to_precision(
    rita_client: Client,
    small,  # noqa: ANN001
) -> None:
    data, before = launch_values(rita_client, small, select=f"sample:{SUPERSCRIPT_TWO}"), runs()
    response = rita_client.post(reverse("jobs:run-new"), data)
    assert response.status_code == 200
    body = html.unescape(response.content.decode())
    assert f"got 'sample:{SUPERSCRIPT_TWO}'" in body and "sample:N" in body  # what was wrong, and the grammar
    assert runs() == before

    asked = {"benchmark": small.pk, "select": f"sample:{SUPERSCRIPT_TWO}"}
    refused = rita_client.get(reverse("jobs:run-cost-to-precision"), asked)
    assert refused.status_code == 400 and f"got 'sample:{SUPERSCRIPT_TWO}'" in refused.json()["error"]


@pytest.mark.parametrize("value", NOT_IDS)
def test_cost_to_precision_refuses_a_benchmark_that_is_no_id_naming_the_parameter(
    rita_client: Client,
    small,  # noqa: ANN001
    value: str,
) -> None:
    url = reverse("jobs:run-cost-to-precision")
    response = rita_client.get(url, {"benchmark": value})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error.startswith("benchmark must be a benchmark's id (a whole number such as 3)") and "choose a benchmark" in error
    # The launch form's htmx request gets the same words in its fragment (htmx swaps in no 4xx answer).
    fragment = rita_client.get(url, {"benchmark": value}, headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and 'id="cost-to-precision-error"' in fragment.content.decode()
    assert "benchmark must be a benchmark&#x27;s id" in fragment.content.decode()


def test_cost_to_precision_answers_404_with_its_error_for_a_benchmark_that_does_not_exist(
    rita_client: Client,
    small,  # noqa: ANN001
) -> None:
    missing = small.pk + 1000
    response = rita_client.get(reverse("jobs:run-cost-to-precision"), {"benchmark": missing})
    assert response.status_code == 404
    assert response.json() == {"error": f"no benchmark {missing}: choose one of the benchmarks listed on the form"}


@pytest.mark.parametrize("field", ["judge_model", "select", "run_type", "adaptive_target"])
def test_cost_to_precision_refuses_a_nul_in_a_text_parameter_naming_it(rita_client: Client, small, field: str) -> None:  # noqa: ANN001
    response = rita_client.get(reverse("jobs:run-cost-to-precision"), {"benchmark": small.pk, field: "judge\x00x"})
    assert response.status_code == 400
    assert response.json()["error"].startswith(f"{field} holds a NUL character (\\x00)")


def test_cost_to_precision_still_answers_a_good_question(rita_client: Client, small) -> None:  # noqa: ANN001
    response = rita_client.get(reverse("jobs:run-cost-to-precision"), {"benchmark": small.pk, "judge_model": "judge-x"})
    assert response.status_code == 200 and response.json()["full_calls"] > 0


def test_the_form_refuses_a_sample_the_call_cache_cannot_store_and_takes_the_largest_it_can(
    rita_client: Client,
    small,  # noqa: ANN001
) -> None:
    before = runs()
    too_big = rita_client.post(reverse("jobs:run-new"), launch_values(rita_client, small, sample="2147483648"))
    assert too_big.status_code == 200
    assert too_big.context["form"].errors["sample"] == ["Ensure this value is less than or equal to 2147483647."]
    assert runs() == before

    largest = rita_client.post(reverse("jobs:run-new"), launch_values(rita_client, small, sample="2147483647"))
    (made,) = runs() - before
    run = JudgeRun.objects.get(pk=made)
    assert largest.status_code == 302 and run.parameters["sample"] == 2147483647


def test_run_judge_refuses_a_sample_the_call_cache_cannot_store_naming_the_option(small) -> None:  # noqa: ANN001
    before = runs()
    with pytest.raises(CommandError, match=r"--sample: '2147483648': Ensure this value is less than or equal to 2147483647"):
        call_command(
            "run_judge",
            str(small.pk),
            "--model",
            "judge-x",
            "--base-url",
            NOWHERE,
            "--sample",
            "2147483648",
            stdout=io.StringIO(),
        )
    assert runs() == before


@pytest.mark.parametrize("reference", [SUPERSCRIPT_TWO, "9" * 25])
@pytest.mark.parametrize("command", ["run_judge", "leaderboard", "sentinels"])
def test_a_command_given_a_benchmark_that_does_not_exist_says_so(small, command: str, reference: str) -> None:  # noqa: ANN001
    extra = ["--model", "judge-x", "--base-url", NOWHERE] if command == "run_judge" else []
    with pytest.raises(CommandError) as refused:
        call_command(command, reference, *extra, stdout=io.StringIO(), stderr=io.StringIO())
    assert f"no benchmark '{reference}' (give its id, name or name@version)" in str(refused.value)


def test_the_version_after_a_superscript_is_a_dotted_one() -> None:
    assert Benchmark(name="b", version=SUPERSCRIPT_TWO).next_version() == "².1"
    assert Benchmark(name="b", version="9").next_version() == "10"
