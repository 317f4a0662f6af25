"""The demo's scripted scorer endpoint (intrinsic/demo_endpoint.py) drives a real scoring run: its NLL values are the
toy formula's (recomputed here from the documented rule: token regex, sha1 of "prev\\0token", grounding bonus), and an
energy run against it is refused, since it serves log-probabilities only."""

from __future__ import annotations

import hashlib
import io
import re
import threading
from collections.abc import Iterator

import pytest
from django.core.management import CommandError, call_command

from intrinsic.demo_endpoint import serve
from intrinsic.models import CandidateScore, IntrinsicScoringRun

from .test_runs import PAPERS, make_benchmark

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("celery_in_process")]


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = serve("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def nll_by_hand(background: str, question: str, candidate: str) -> list[float]:
    prompt = f"Background: {background}\nResearch Question: {question}\nHypothesis: {candidate}"
    prefix = f"Background: {background}\nResearch Question: {question}\nHypothesis:"
    tokens = ["<s>"] + re.findall(r"\w+|\s+|[^\w\s]", prompt)
    n_prefix = 1 + len(re.findall(r"\w+|\s+|[^\w\s]", prefix))
    grounding = {w.lower() for w in re.findall(r"\w{4,}", prefix.rsplit("\nHypothesis:", 1)[0])}
    out = []
    for i in range(n_prefix, len(tokens)):
        base = 0.2 + int.from_bytes(hashlib.sha1(f"{tokens[i - 1]}\x00{tokens[i]}".encode()).digest()[:4], "big") % 1000 / 200
        if tokens[i].strip() and tokens[i].lower() in grounding:
            base *= 0.4
        out.append(base)  # NLL = -log p
    return out


def test_a_scoring_run_against_the_demo_endpoint_stores_the_toy_nll_and_energy_is_refused(tmp_path, endpoint) -> None:  # noqa: ANN001
    benchmark = make_benchmark(tmp_path)
    call_command(
        "intrinsic_score",
        str(benchmark.pk),
        "--model",
        "demo-toy-lm",
        "--criterion",
        "nll",
        "--logprobs-mode",
        "raw_logprobs",
        "--base-url",
        endpoint,
        "--wait",
        stdout=io.StringIO(),
    )
    run = IntrinsicScoringRun.objects.latest("id")
    assert run.status == "completed"
    stored = {s.candidate.text: s for s in CandidateScore.objects.filter(run=run).select_related("candidate")}
    assert len(stored) == sum(len(p["texts"]) for p in PAPERS)
    for paper in PAPERS:
        for text in paper["texts"]:
            mine = nll_by_hand(paper["background"], paper["question"], text)
            assert stored[text].tokens == len(mine)
            assert stored[text].mean == pytest.approx(sum(mine) / len(mine), abs=1e-5)
    with pytest.raises(CommandError, match="energy|raw_logits|raw logits"):
        call_command(
            "intrinsic_score",
            str(benchmark.pk),
            "--model",
            "demo-toy-lm",
            "--criterion",
            "energy",
            "--logprobs-mode",
            "raw_logits",
            "--base-url",
            endpoint,
            "--wait",
            stdout=io.StringIO(),
        )
