"""Figures read alike on every researcher page (issue 24, "Consistent figures"): one minus sign (U+2212, never a
hyphen before a number), one thousands separator, one interval label ("95% CI"), domains by their labels rather than
their slugs, "1 gold first" and not "1 golds first", and the papers of a neighbourhood numbered alike for annotators
and in the judge's prompt.

The pages are every researcher page reachable from the dashboard over the demo's three synthetic benchmarks
(HypoArena, Reconstruction, Intrinsic scoring) and the release sample with its controls and a study, crawled with a
signed-in researcher's client; each finding names the page and the text around it."""

from __future__ import annotations

import html
import re
from io import StringIO
from urllib.parse import urljoin, urlparse

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import Assignment
from annotation.selectors import item_screen
from annotation.services import study_create
from arena import formatting
from arena.models import Benchmark, Context
from arena.prompting import render_context
from tests.clients import client_for

pytestmark = pytest.mark.django_db

# -------------------------------------------------------------------------------------------- the labels themselves


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("it_operations", "IT operations"),
        ("safety_investigation", "Safety investigation"),
        ("biomedical", "Biomedical"),
        ("ml", "ML"),
        ("social-science", "Social science"),
        ("Earth Science", "Earth Science"),  # already words: kept
        ("financial analysis", "financial analysis"),
        ("all", "All domains"),
        ("", "\u2014"),
        (None, "\u2014"),
    ],
)
def test_a_domain_slug_reads_as_a_label(name: str | None, label: str) -> None:
    assert formatting.domain_label(name) == label


# -------------------------------------------------------------------------------------------- the pages

#: A number written with a hyphen-minus: "-0.73", " -1" (not a date's or a range's hyphen, nor an id's).
HYPHEN_NUMBER = re.compile(r"(?<![\w.\-/:#\u2212])-\d+(?:\.\d+)?(?![\w-])")
#: A whole number of four or more digits without separators, unless it is a seed, an id or a date's year.
BARE_BIG = re.compile(r"(?<![\w.,\-/:#])(\d{4,})(?![\w.,\-])")
YEAR_BEFORE = re.compile(r"\b(Jan|Feb|March|April|May|June|July|Aug|Sept|Oct|Nov|Dec)\w*\.? \d{1,2}, $|\([A-Z][a-z]+ $")
#: Interval labels other than "CI": "95% interval", "confidence interval", "bootstrap interval".
OTHER_INTERVAL = re.compile(r"\d+% (?:\w+[- ])?intervals?\b|confidence intervals?|bootstrap intervals?", re.I)
GOLDS = re.compile(r"\b1 golds\b")


def visible_text(body: str) -> str:
    """What a reader sees: no scripts, styles, preformatted prompts or tag attributes."""
    body = re.sub(r"<(script|style|pre|code|textarea|svg)\b[^>]*>.*?</\1>", " ", body, flags=re.S)  # plots: by scale
    body = re.sub(r"<(title)\b[^>]*>.*?</\1>", " ", body, flags=re.S)
    # Ratings on the 1500 scale are written without a thousands separator, as the papers and Chatbot Arena print them.
    body = re.sub(r'<(td|span)\b[^>]*class="[^"]*\brating[\w-]*\b[^"]*"[^>]*>.*?</\1>', " ", body, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def crawl(client, starts: list[str], limit: int = 120) -> dict[str, str]:  # noqa: ANN001
    """Researcher pages reachable from ``starts`` (at most a few query variants of one path), by URL."""
    queue, seen, pages = list(starts), set(), {}
    while queue and len(pages) < limit:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        answer = client.get(url)
        if answer.status_code != 200 or "text/html" not in answer.get("Content-Type", ""):
            continue
        pages[url] = body = answer.content.decode()
        for href in re.findall(r'href="([^"#]+)"', body):
            link = urlparse(urljoin(url, html.unescape(href)))
            if link.netloc or not link.path.startswith("/dashboard/") or re.search(r"export|download|\.(csv|json)", link.path):
                continue
            target = link.path + (f"?{link.query}" if link.query else "")
            if link.query and sum(s.startswith(link.path) for s in seen) > 2:
                continue
            queue.append(target)
    return pages


def findings(pages: dict[str, str], slugs: set[str]) -> list[str]:
    found = []
    for url, body in pages.items():
        text = visible_text(body)

        def near(m: re.Match, what: str, url: str = url, text: str = text) -> str:
            return f"{url}: {what} in …{text[max(0, m.start() - 40) : m.end() + 20]}…"

        found += [near(m, "a hyphen for a minus") for m in HYPHEN_NUMBER.finditer(text)]
        # Ratings on the 1500 scale (a page switched to it, the scale's own constant) are written without a separator.
        found += [
            near(m, "no thousands separator")
            for m in ([] if "scale=elo" in url else BARE_BIG.finditer(text))
            if m.group(1) != "1500"
            if not re.search(r"(seed|id|run|#)\s*$", text[max(0, m.start() - 12) : m.start()], re.I)
            and not YEAR_BEFORE.search(text[max(0, m.start() - 16) : m.start()])
        ]
        found += [near(m, "an interval label other than CI") for m in OTHER_INTERVAL.finditer(text)]
        found += [near(m, "a plural after 1") for m in GOLDS.finditer(text)]
        found += [near(m, "a domain's slug") for s in slugs for m in re.finditer(rf"(?<![\w-]){re.escape(s)}(?![\w-])", text)]
    return found


@pytest.fixture
def demo_benchmarks() -> list[Benchmark]:
    for command in (("demo_hypoarena", "--cases", "1"), ("demo_reconstruction",), ("demo_intrinsic",)):
        call_command(*command, stdout=StringIO())
    return list(Benchmark.objects.all())


def test_the_demo_protocols_pages_read_alike(researcher, demo_benchmarks: list[Benchmark]) -> None:  # noqa: ANN001
    from hypoarena.models import Domain
    from reconstruction.models import SeedPaper

    slugs = {d for d in Domain.objects.values_list("name", flat=True) if "_" in d}
    slugs |= {d for d in SeedPaper.objects.values_list("domain", flat=True) if "_" in d}
    assert slugs, "the demo has domains with slugs to show as labels"
    pages = crawl(client_for(researcher), [reverse("arena:dashboard")])
    assert (
        len(pages) >= 12
        and any("/reconstruction/results/" in u for u in pages)
        and any("/hypoarena/agreement" in u for u in pages)
    )
    found = findings(pages, slugs)
    assert found == [], "\n".join(found)


def test_the_lit2test_pages_read_alike(researcher, annotator, annotator2, imported) -> None:  # noqa: ANN001
    call_command(
        "generate_controls", imported.name, "--kinds", "clear,naive", "--contexts", "2", "--seed", "0", stdout=StringIO()
    )
    study_create(name="figures", benchmark=imported, n_contexts=2, annotators=[annotator, annotator2], n_naive_controls=0, seed=1)
    call_command("demo_setup", stdout=StringIO())  # the demo annotators, who get the synthetic labels
    call_command("demo_study", "--synthetic-labels", stdout=StringIO())
    pages = crawl(client_for(researcher), [reverse("arena:dashboard"), reverse("annotation:studies")])
    assert any("/leaderboard/" in u for u in pages) and any("/studies/" in u for u in pages)
    # The synthetic labels give the study page its per-model strengths, centred on 0: some are negative.
    per_model = [re.search(r'id="per-model".*?</table>', b, re.S) for b in pages.values()]
    assert any(m and "\u2212" in m.group(0) for m in per_model)
    found = findings(pages, set())
    assert found == [], "\n".join(found)


def test_papers_are_numbered_alike_for_annotators_and_in_the_judge_prompt(imported, annotator, annotator2) -> None:  # noqa: ANN001
    study = study_create(
        name="numbers", benchmark=imported, n_contexts=1, annotators=[annotator, annotator2], n_naive_controls=0, seed=1
    )
    assignment = Assignment.objects.filter(study=study).select_related("study", "item").first()
    screen = item_screen(assignment=assignment)
    context = Context.objects.get(pk=assignment.item.context_id)
    prompt = render_context(context, context_format=2)
    in_prompt = dict(re.findall(r"^Paper (\d+)(?: \(source id [^)]*\))?: (.*)$", prompt, re.M))
    on_screen = {str(n): p["title"] for n, p in enumerate(screen["papers"], start=1)}  # the screen counts from 1
    assert len(in_prompt) == 4 and in_prompt == on_screen
