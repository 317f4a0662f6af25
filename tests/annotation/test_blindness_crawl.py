"""Blindness is a security property: crawl everything an annotator can reach and look for identifying tokens.

The crawler starts at /annotate/, /guide/ and the API, follows every same-site link, script, form action and
htmx target (GET for links and hx-get, POST for forms and hx-post, with the values the form would send), in
English and in Chinese, and checks every response body, header and URL for any model name (in the spellings
people and URLs use), any release pair id, any pair public id, context id or the judge's name.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment
from arena.models import CanonicalPair, Context, JudgeRun, Participant, Proposal

pytestmark = pytest.mark.django_db

# Leaving these would end the crawl's session or change the language mid-crawl.
SKIP_PATHS = ("/accounts/logout/", "/i18n/setlang/")


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.gets: list[str] = []
        self.posts: list[tuple[str, dict[str, str], bool]] = []
        self.hidden: list[str] = []
        self.comments: list[str] = []
        self._form: dict | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        for key in ("href", "src", "hx-get"):
            if a.get(key):
                self.gets.append(a[key])
        if tag == "form":
            self._form = {
                "action": a.get("action", ""),
                "method": a.get("method", "get").lower(),
                "hx": a.get("hx-post"),
                "fields": {},
            }
        elif a.get("hx-post"):
            self.posts.append((a["hx-post"], {}, True))
        if tag == "input" and a.get("type") == "hidden":
            self.hidden.append(a.get("name", ""))
        if self._form is not None and tag in ("input", "textarea", "select") and a.get("name"):
            if a.get("type") not in ("radio", "checkbox") or "checked" in a:
                self._form["fields"].setdefault(a["name"], a.get("value", ""))
        if self._form is not None and tag == "button" and a.get("formaction"):
            self.posts.append((a["formaction"], self._form["fields"], False))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._form is not None:
            f = self._form
            if f["method"] == "post":
                self.posts.append((f["action"], f["fields"], False))
                if f["hx"]:
                    self.posts.append((f["hx"], f["fields"], True))
            elif f["action"]:
                self.gets.append(f["action"])
            self._form = None

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def forbidden_tokens(benchmark) -> list[str]:  # noqa: ANN001
    names = list(Participant.objects.filter(benchmark=benchmark).values_list("name", flat=True))
    names += list(JudgeRun.objects.filter(benchmark=benchmark).values_list("judge_model", flat=True))
    tokens: set[str] = set()
    for name in names:
        low = name.lower()
        for variant in {
            low,
            low.replace(" ", "_"),
            low.replace(" ", "-"),
            low.replace("-", " "),
            low.replace("-", "_"),
            low.replace(" ", "%20"),
            low.replace(" ", "+"),
            low.replace("-", "").replace(" ", ""),
        }:
            if len(variant) >= 5:
                tokens.add(variant)
    tokens |= {k.lower() for k in CanonicalPair.objects.filter(benchmark=benchmark).values_list("internal_key", flat=True)}
    tokens |= {p.lower() for p in CanonicalPair.objects.filter(benchmark=benchmark).values_list("public_id", flat=True)}
    tokens |= {c.lower() for c in Context.objects.filter(benchmark=benchmark).values_list("external_id", flat=True)}
    return sorted(tokens)


def crawl(client: Client, starts: list[str]) -> dict[tuple[str, str], object]:
    seen: dict[tuple[str, str], object] = {}
    queue: list[tuple[str, str, dict[str, str], bool]] = [("get", u, {}, False) for u in starts]
    while queue:
        method, url, data, htmx = queue.pop(0)
        parts = urlsplit(url)
        if (
            parts.netloc not in ("", "testserver")
            or parts.scheme not in ("", "http")
            or url.startswith(("#", "mailto:", "javascript:"))
        ):
            continue
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        if not path or path.startswith(SKIP_PATHS) or (method, path) in seen:
            continue
        headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
        response = client.post(path, data, **headers) if method == "post" else client.get(path)
        # Static files come back streamed.
        response.body = b"".join(response.streaming_content) if getattr(response, "streaming", False) else response.content
        seen[(method, path)] = response
        if response.status_code in (301, 302, 303):
            queue.append(("get", urljoin(path, response["Location"]), {}, False))
        if response.get("Content-Type", "").startswith("text/html"):
            parser = Links()
            parser.feed(response.body.decode())
            response.links = parser  # type: ignore[attr-defined]
            queue += [("get", urljoin(path, g), {}, False) for g in parser.gets if not g.startswith("#")]
            queue += [("post", urljoin(path, p), d, h) for p, d, h in parser.posts]
    return seen


def test_nothing_an_annotator_can_reach_identifies_a_model(study, annotator, ann_client, imported) -> None:  # noqa: ANN001
    # Give the crawl some state to see: one item with a draft, one submitted, one over time.
    assignments = list(Assignment.objects.filter(study=study, annotator=annotator).order_by("position"))
    from datetime import timedelta

    from django.utils import timezone

    from annotation.services import assignment_open, assignment_save_draft, assignment_submit

    from .helpers import complete_values

    assignment_save_draft(assignment=assignments[0], values={"screening": "partly", "rationale": "so far"})
    assignment_submit(assignment=assignments[1], values=complete_values("TIE", reason="tradeoffs"))
    assignment_open(assignment=assignments[2], now=timezone.now() - timedelta(minutes=30))
    assignment_submit(assignment=assignments[2], values=complete_values("B"))
    # A flag and a skip, so that their notes on the screen and the list are crawled too.
    from annotation.flow import assignment_flag, assignment_skip

    assignment_flag(assignment=assignments[0], comment="The proposal text of B is cut off.")
    assignment_skip(assignment=assignments[3], reason="reread later")

    forbidden = forbidden_tokens(imported)
    assert "gpt_5.2" in forbidden and "claude sonnet 4.6" in forbidden and "gemini-3.1-pro-preview" in forbidden
    proposal_ids = set(Proposal.objects.values_list("id", flat=True))
    starts = [
        reverse("annotation:home"),
        reverse("annotation:guide"),
        reverse("annotation:api-study-agreement", args=[study.pk]),
        "/api/benchmarks/",
        f"/api/benchmarks/{imported.pk}/leaderboard/",
        f"/api/benchmarks/{imported.pk}/controls/",
        "/api/schema/",
        "/",
    ]
    total = 0
    for language in ("en", "zh-hans"):
        ann_client.cookies["django_language"] = language
        seen = crawl(ann_client, starts)
        total += len(seen)
        item_pages = [p for (m, p) in seen if m == "get" and re.fullmatch(r"/annotate/item/[^/]+/", p)]
        assert len(item_pages) == 13  # every one of the annotator's items was reached
        assert any(m == "post" and p.endswith("/draft") for (m, p) in seen)
        assert any(m == "post" and p.endswith("/submit") for (m, p) in seen)
        assert any(m == "post" and p.endswith("/skip") for (m, p) in seen)  # skips and flags (annotation.flow)
        assert any(m == "post" and p.endswith("/flag") for (m, p) in seen)
        for (method, path), response in seen.items():
            where = f"{method.upper()} {path} ({language})"
            haystacks = [unquote(path).lower(), response.body.decode("utf-8", "replace").lower()]
            haystacks += [f"{k}: {v}".lower() for k, v in response.items()]
            for text in haystacks:
                for token in forbidden:
                    assert token not in text, f"{token!r} leaks in {where}"
            links = getattr(response, "links", None)
            if links is not None:
                assert not links.comments, f"an HTML comment in {where}"
                # draft_version: when the item's draft was last saved (a timestamp), so a stale form cannot overwrite it;
                # draft_page: a random id of the page (secrets.token_urlsafe), so its own saves are never stale to it.
                assert set(links.hidden) <= {"csrfmiddlewaretoken", "next", "draft_version", "draft_page"}, (
                    f"hidden inputs in {where}: {links.hidden}"
                )
            if path.startswith("/annotate/"):
                # No number on an annotator page is a proposal id (ids are not in URLs, data or form values).
                # Two attributes hold known non-id numbers (the countdown's seconds left, the rationale's length
                # limit); skipping them keeps the check from depending on where the database's id sequence stands.
                ids_in_attrs = {
                    int(n)
                    for n in re.findall(
                        r'(?<![\w-])(?!data-remaining|data-counter-max)(?:value|data-[a-z-]+|id)="(\d+)"', response.body.decode()
                    )
                }
                assert not (ids_in_attrs & proposal_ids) - {1, 2, 3}, where  # 1–3 are the score values
            if path.startswith("/api/") and not path.startswith("/api/schema"):
                assert response.status_code == 403, where
    assert total > 60


def test_control_and_real_items_look_the_same_apart_from_the_text(study, annotator, ann_client) -> None:  # noqa: ANN001
    control = Assignment.objects.get(study=study, annotator=annotator, item__is_control=True)
    real = Assignment.objects.filter(study=study, annotator=annotator, item__is_control=False).first()

    def skeleton(a: Assignment) -> list[str]:
        parser = HTMLParser()
        tags: list[str] = []
        parser.handle_starttag = lambda tag, attrs: tags.append(  # type: ignore[method-assign]
            tag + "".join(sorted(f" {k}" + (f"={v}" if k in ("class", "name", "type") else "") for k, v in attrs))
        )
        parser.feed(ann_client.get(reverse("annotation:item", args=[a.token])).content.decode())
        return [t for t in tags if not t.startswith("br")]

    assert skeleton(control) == skeleton(real)


# --------------------------------------------------------------------------- self-identification (issue 8, item 10)


def literature_texts(benchmark) -> list[str]:  # noqa: ANN001
    """The contexts' own texts: the literature may cite models, for both sides alike, and is shown as it is."""
    texts = []
    for context in Context.objects.filter(benchmark=benchmark).prefetch_related("papers"):
        texts += [context.research_context, context.open_problem, context.resource_constraint, context.task_instruction]
        texts += [t for p in context.papers.all() for t in (p.title, p.abstract, p.limitation, p.url)]
    return sorted((t for t in texts if t), key=len, reverse=True)


@pytest.fixture
def named_study(release_dir, tmp_path, annotator, annotator2):  # noqa: ANN001, ANN201
    from lit2test.release import release_import
    from tests.arena.selfnaming import write_self_naming_release

    from .helpers import make_study

    benchmark = release_import(directory=write_self_naming_release(release_dir, tmp_path / "named")).benchmark
    return make_study(benchmark, [annotator, annotator2], n_contexts=3)


def test_no_alias_of_any_model_reaches_an_annotator_when_proposals_name_themselves(named_study, annotator, ann_client) -> None:  # noqa: ANN001
    import html

    from annotation.services import assignment_submit
    from tests.arena.selfnaming import alias_mentions

    from .helpers import complete_values

    benchmark = named_study.benchmark
    # The proposals of the study do name themselves (the stored text, which only researchers see).
    items = Assignment.objects.filter(study=named_study, annotator=annotator).select_related("item__first_proposal")
    assert all(alias_mentions(str(a.item.first_proposal.content)) for a in items)
    assignment_submit(assignment=items[0], values=complete_values("A"))
    # Also every alias stored for the benchmark's participants (derived ones included) and the judge's name.
    stored = {a["text"].lower() for p in Participant.objects.filter(benchmark=benchmark) for a in p.aliases}
    assert {"claude", "anthropic", "deep seek", "zhipu", "chat gpt"} <= stored
    literature = literature_texts(benchmark)
    starts = [reverse("annotation:home"), reverse("annotation:guide"), "/"]
    redacted_pages = 0
    for language in ("en", "zh-hans"):
        ann_client.cookies["django_language"] = language
        seen = crawl(ann_client, starts)
        item_pages = [p for (m, p) in seen if m == "get" and re.fullmatch(r"/annotate/item/[^/]+/", p)]
        assert len(item_pages) == items.count() > 0
        for (method, path), response in seen.items():
            where = f"{method.upper()} {path} ({language})"
            text = html.unescape(response.body.decode("utf-8", "replace"))
            for passage in literature:
                text = text.replace(passage, " ")
            assert alias_mentions(text) == [], f"{alias_mentions(text)} in {where}"
            low = text.lower()
            for alias in stored:
                assert not re.search(r"(?<![a-z0-9])" + re.escape(alias) + r"(?![a-z])", low), f"{alias!r} in {where}"
            redacted_pages += "[redacted]" in text
    assert redacted_pages >= 2 * items.count()  # every item page shows the placeholders instead
