"""Schemathesis against ``/api/schema/`` on a live server, signed in as a researcher: every operation of the
schema is called with generated parameters (valid and invalid, ids that exist and ids that do not), and
no answer may be a server error or a status code / body the schema does not declare.

The same check by hand against a running server is described in the README ("API").
"""

from __future__ import annotations

from pathlib import Path

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.config import SchemathesisConfig

from arena.models import JudgeRun
from lit2test.prompts import DIMENSIONS
from tests.clients import session_cookie

pytestmark = [pytest.mark.django_db(transaction=True)]

MAX_EXAMPLES = 20  # per operation and phase; the whole schema takes about 30 s on a 2-core machine


@pytest.fixture
def researcher_cookie(researcher) -> str:  # noqa: ANN001
    """The session cookie of a signed-in researcher."""
    return session_cookie(researcher)


@pytest.fixture
def browser_session(live_server) -> requests.Session:  # noqa: ANN001
    """A browser-like session on the live server with its CSRF token; the session cookie is set per case
    (below), so that Schemathesis can also send each request without it."""
    session = requests.Session()
    session.get(f"{live_server.url}/accounts/login/", timeout=10)  # sets the csrftoken cookie
    session.headers["X-CSRFToken"] = session.cookies["csrftoken"]
    session.headers["Referer"] = live_server.url
    return session


@pytest.fixture
def api_schema(live_server, researcher_cookie, imported, annotator, annotator2, settings, tmp_path):  # noqa: ANN001, ANN201
    from tests.annotation.helpers import make_study

    # A small cap keeps each generated leaderboard request cheap; the cap itself is tested in tests/arena.
    settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES = 200

    study = make_study(imported, [annotator, annotator2])
    controls_runs(imported, tmp_path)
    hypoarena = hypoarena_benchmark(tmp_path)
    reconstruction = reconstruction_benchmark()
    intrinsic = intrinsic_benchmark(tmp_path)
    runs = list(JudgeRun.objects.values_list("pk", flat=True))
    # Path and query ids are drawn from the existing objects most of the time, else generated freely
    # (so 404s and out-of-range ids are exercised too).
    config = SchemathesisConfig.from_dict(
        {
            "cache": {"enabled": False},  # no failures replayed from earlier runs: each run stands alone
            "dictionaries": {
                "benchmarks": {"values": [imported.pk, hypoarena.pk, reconstruction.pk, intrinsic.pk]},
                "runs": {"values": runs},
                "studies": {"values": [study.pk]},
            },
            "parameters": {
                "path.benchmark_id": {"dictionary": "benchmarks", "probability": 0.7},
                "path.run_id": {"dictionary": "runs", "probability": 0.7},
                "path.study_id": {"dictionary": "studies", "probability": 0.7},
                "query.run": {"dictionary": "runs", "probability": 0.5},
                "query.with": {"dictionary": "runs", "probability": 0.5},
                "query.structured_run": {"dictionary": "runs", "probability": 0.5},
                "query.run_a": {"dictionary": "runs", "probability": 0.5},
                "query.run_b": {"dictionary": "runs", "probability": 0.5},
            },
        }
    )
    url = f"{live_server.url}/api/schema/"
    schema = schemathesis.openapi.from_url(url, config=config, cookies={"sessionid": researcher_cookie}, timeout=30)
    schema.config.update(base_url=live_server.url)

    class ResearcherSession:
        def get(self, case, context):  # noqa: ANN001, ANN201
            return researcher_cookie

        def set(self, case, data, context) -> None:  # noqa: ANN001
            case.cookies = {**(case.cookies or {}), "sessionid": data}

    schema.auth()(ResearcherSession)
    assert runs and study.pk  # the dictionaries above name objects that exist
    return schema


def controls_runs(benchmark, tmp_path: Path) -> None:  # noqa: ANN001
    """A holistic and a structured controls run with a few verdicts, so that the controls report has something to read."""
    from controls.import_export import controls_import
    from controls.models import ControlJudgment, ControlVariant
    from tests.controls import helpers

    source = helpers.sources(benchmark, 1)[0]
    rows = [helpers.line(source, "clear", "grounding"), helpers.line(source, "sham", "grounding"), helpers.line(source, "naive")]
    controls_import(benchmark=benchmark, path=helpers.write(tmp_path / "controls.jsonl", rows))
    scores = {"A": dict.fromkeys(DIMENSIONS, 3), "B": dict.fromkeys(DIMENSIONS, 1)}
    for run_type in ("holistic", "structured"):
        run = JudgeRun.objects.create(
            benchmark=benchmark,
            subjects="controls",
            run_type=run_type,
            judge_model="J",
            label=run_type,
            provider="openai_compatible",
            status="completed",
        )
        for variant in ControlVariant.objects.all():
            for order, shown in (("original", "A"), ("reverse", "B")):
                ControlJudgment.objects.create(
                    run=run,
                    variant=variant,
                    order=order,
                    clean_shown=shown,
                    verdict=shown,
                    winner="clean",
                    metadata={"scores": scores if shown == "A" else {"A": scores["B"], "B": scores["A"]}}
                    if run_type == "structured"
                    else {},
                )


def hypoarena_benchmark(tmp_path: Path):  # noqa: ANN201
    """A tiny HypoArena benchmark (tests/hypoarena/helpers.py) with two arena runs and a rubric run, so that its
    leaderboard and inter-judge endpoints have documents to give."""
    from hypoarena.importing import hypoarena_import, import_files
    from tests.hypoarena import helpers

    second = [v | {"run_label": "r2"} for v in helpers.verdicts()]
    folder = helpers.folder(tmp_path / "hypoarena", verdicts=helpers.verdicts() + second)
    return hypoarena_import(name="hypoarena-fuzz", files=import_files([folder])).benchmark


def reconstruction_benchmark():  # noqa: ANN201
    """The seeded Reconstruction demo (reconstruction/demo.py), so that its report endpoint has a document to give."""
    from arena.models import Benchmark
    from reconstruction import demo

    demo.demo_build()
    return Benchmark.objects.get(name=demo.DEMO_NAME)


def intrinsic_benchmark(tmp_path: Path):  # noqa: ANN201
    """A tiny Intrinsic benchmark with scores and listwise rankings (tests/intrinsic), so that its report endpoint
    has a document to give."""
    from intrinsic.importing import import_files, intrinsic_import
    from tests.intrinsic.test_import_export import folder

    return intrinsic_import(name="intrinsic-fuzz", files=import_files(folder(tmp_path / "intrinsic"))).benchmark


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@hypothesis_settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_operation_answers_a_server_error_or_an_undeclared_response(case, browser_session) -> None:  # noqa: ANN001
    case.call_and_validate(session=browser_session, timeout=60)
