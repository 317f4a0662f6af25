"""The judge prompt lists each paper's source id (issue 9, item 4), and the v1 prompts stay as they were.

Proposals cite papers by their OpenReview id ("the RBM method from 7UHlKybsQM"); a judge that sees only
"Paper 1–4" cannot check that grounding. The expected ids are read from the release file here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.models import CanonicalPair, Proposal
from jobs.prompts import PROMPTS
from jobs.services import judge_run_execute
from lit2test.prompts import DEFAULT_PROMPT, render_judge_task

from .helpers import PARTICIPANTS, chat_requests, create_running, user_text


def release_paper_ids(release_dir: Path) -> dict[str, list[tuple[str, str]]]:
    """(title, paper_id) of each context's four papers, in order, straight from contexts.jsonl."""
    out = {}
    for line in (release_dir / "contexts.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            out[record["context_id"]] = [(p["title"], p["paper_id"]) for p in record["papers"]]
    return out


def pair_with_proposals(benchmark) -> tuple[CanonicalPair, dict[int, Proposal]]:  # noqa: ANN001
    pair = (
        CanonicalPair.objects.filter(benchmark=benchmark, context__has_text=True)
        .select_related("context")
        .order_by("internal_key")
        .first()
    )
    return pair, {p.participant_id: p for p in Proposal.objects.filter(context=pair.context)}


@pytest.mark.django_db
def test_the_default_judge_prompts_list_every_papers_source_id(imported, release_dir: Path) -> None:  # noqa: ANN001
    papers = release_paper_ids(release_dir)
    pair, proposals = pair_with_proposals(imported)
    for kind in ("holistic", "structured"):
        template = PROMPTS[DEFAULT_PROMPT[kind]]
        user = render_judge_task(pair=pair, order="original", template=template, proposals=proposals).user
        for n, (title, paper_id) in enumerate(papers[pair.context.external_id], start=1):
            assert f"Paper {n} (source id {paper_id}): {title}\n" in user, (kind, paper_id)


@pytest.mark.django_db
def test_a_v1_prompt_renders_as_its_judge_received_it(imported, release_dir: Path) -> None:  # noqa: ANN001
    # A run's page re-renders its prompts from the run's template: a v1 run must keep showing v1 prompts.
    papers = release_paper_ids(release_dir)
    pair, proposals = pair_with_proposals(imported)
    user = render_judge_task(pair=pair, order="original", template=PROMPTS["judge-holistic-v1"], proposals=proposals).user
    context_block = user.split("=== PROPOSAL A ===")[0]  # the proposals themselves may cite the ids
    for n, (title, paper_id) in enumerate(papers[pair.context.external_id], start=1):
        assert f"Paper {n}: {title}\n" in context_block
        assert paper_id not in context_block  # v1 never printed the id


@pytest.mark.django_db(transaction=True)
def test_a_judge_run_sends_the_source_ids_and_still_no_model_name(imported, fake_llm, release_dir: Path) -> None:  # noqa: ANN001
    papers = release_paper_ids(release_dir)
    run, _ = create_running(imported, fake_llm, select="sample:3")
    assert run.prompt_version == "judge-holistic-v2"

    assert judge_run_execute(run_id=run.pk) == "completed"

    log = chat_requests(fake_llm.log())
    assert len(log) == 6
    for entry in log:
        user = user_text(entry)
        cited = [paper_id for ids in papers.values() for _title, paper_id in ids if f"(source id {paper_id})" in user]
        assert len(cited) == 4  # the four papers of the pair's own context
        for name in PARTICIPANTS:
            assert name.lower() not in user.lower()
