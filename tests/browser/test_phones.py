"""Phones and layout (issue 24, items 3 and 8): in Chromium emulating a phone (390×844) no page scrolls sideways, and at
1400×1000 none does either (a frozen bibliography used to make the Reconstruction seed page 2,016 px wide), nor, for the
researcher's pages, once the window is narrowed to 1024 px (where wide tables scroll in boxes of their own).

The researcher's pages are every page of the top bar's sections and of each protocol's benchmark (Lit2Test, HypoArena,
Intrinsic scoring, Reconstruction), with the demo data the other browser tests build; the annotator's are the log-in
page, the list, the guideline, an item's start page and its screen (started, over time, and after a refused submission),
in English and in Chinese. On a phone the top bar wraps with the language menu in view, the annotation screen's sticky
status bar keeps most of the window for the text, and after a refused submission every score of the rubric can be
reached by scrolling the page (at either size; it used to hide in a scroll box of its own). axe-core finds nothing on a
phone on the pages this changed most.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment
from annotation.rubric import DIMENSION_KEYS
from annotation.services import assignment_open, study_create
from arena.models import Benchmark, JudgeRun
from controls.models import ControlVariant
from controls.services import controls_generate
from lit2test.release import release_import

from .conftest import log_in
from .test_accessibility import violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
DESKTOP = {"viewport": {"width": 1400, "height": 1000}}
SIZES = {"phone 390×844": PHONE, "desktop 1400×1000": DESKTOP}
#: A narrower desktop window (a tablet, a window beside another), where wide tables scroll in their own box.
NARROW = 1024
#: The most of a phone's height the annotation screen's sticky status bar may take (it took 20% of 844 px, 25% over
#: time; compact, 8% and 11%).
BAR_SHARE = 0.15

# The page's width against its window's, and what makes it wider: the outermost elements sticking out on the right
# (unless a box that scrolls on its own clips them) and those whose own text runs out of them, each named by tag, id
# and classes with its right edge in CSS pixels.
MEASURE = """() => {
  const root = document.documentElement, width = root.clientWidth, out = [];
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.classList.length ? "." + Array.from(el.classList).join(".") : "");
  function clipped(el) {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== "visible") return true;
    }
    return false;
  }
  if (root.scrollWidth > width) {
    for (const el of document.body.querySelectorAll("*")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || clipped(el)) continue;
      if (r.right > width + 0.5) {
        if (el.parentElement === document.body || el.parentElement.getBoundingClientRect().right <= width + 0.5)
          out.push(name(el) + " → " + Math.round(r.right) + " px");
      } else if (r.left + el.scrollWidth > width + 0.5 && getComputedStyle(el).overflowX === "visible" &&
                 Array.from(el.children).every(c => c.getBoundingClientRect().right <= r.right + 0.5)) {
        out.push(name(el) + " (its text) → " + Math.round(r.left + el.scrollWidth) + " px");
      }
    }
  }
  return {scrollWidth: root.scrollWidth, clientWidth: width, scale: window.visualViewport.scale, offenders: out.slice(0, 6)};
}"""

# Where a score of the rubric lands when the page alone is scrolled to it: inside the window, under the sticky bar,
# and the topmost element at its middle (not hidden in a box that scrolls on its own, nor under another element).
SCROLL_TO_SCORE = """(name) => {
  const score = document.getElementById("field-" + name).querySelector(".ann-score");
  window.scrollTo(0, window.scrollY + score.getBoundingClientRect().top - innerHeight / 2);
  const r = score.getBoundingClientRect(), bar = document.querySelector(".ann-bar").getBoundingClientRect().bottom;
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  if (r.top >= bar && r.bottom <= innerHeight && hit && score.contains(hit)) return null;
  return "at " + Math.round(r.top) + "–" + Math.round(r.bottom) + " px (the bar ends at " + Math.round(bar) + ", the window at " +
    innerHeight + "), topmost there: " + (hit ? hit.outerHTML.slice(0, 80) : "nothing");
}"""


def sideways(page) -> str | None:  # noqa: ANN001
    """None when the page fits its window at scale 1; otherwise how much wider it is, and what sticks out."""
    m = page.evaluate(MEASURE)
    if m["scrollWidth"] <= m["clientWidth"] and m["scale"] == 1:
        return None
    return f"{m['scrollWidth']} px wide in a {m['clientWidth']} px window at zoom {m['scale']}: " + "; ".join(m["offenders"])


def in_window(page, selector: str) -> bool:  # noqa: ANN001
    """The element is entirely inside the window's width (and so reachable without scrolling sideways)."""
    box = page.locator(selector).bounding_box()
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"]


def visit(page, url: str) -> None:  # noqa: ANN001
    response = page.goto(url)
    assert response is not None and response.status == 200, f"{url} answered {response and response.status}"
    page.wait_for_load_state("networkidle")


@dataclass(frozen=True)
class Items:
    """The annotator's items in the states the screen shows: unstarted, started, started 11 minutes ago (over time)."""

    unstarted: Assignment
    started: Assignment
    over_time: Assignment


def items_for(annotator, release_dir: Path) -> Items:  # noqa: ANN001
    benchmark = release_import(directory=release_dir).benchmark
    study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator], n_naive_controls=1, seed=3, cap_minutes=10)
    first, second, third = Assignment.objects.filter(annotator=annotator).order_by("position")[:3]
    # The unstarted one is the first: only the next item in the annotator's order has a start page (annotation.flow).
    assignment_open(assignment=second)
    assignment_open(assignment=third, now=timezone.now() - timedelta(minutes=11))
    return Items(unstarted=first, started=second, over_time=third)


def researcher_pages(annotator, release_dir: Path) -> dict[str, str]:  # noqa: ANN001
    """Every page of the top bar's sections and of each protocol's demo benchmark, by name."""
    from hypoarena.demo import demo_build as hypoarena_build
    from intrinsic import demo as intrinsic_demo
    from reconstruction import demo as reconstruction_demo
    from reconstruction.models import BibliographyFreeze, SwissSelection

    benchmark = release_import(directory=release_dir).benchmark
    study = study_create(benchmark=benchmark, n_contexts=1, annotators=[annotator], n_naive_controls=1, seed=3)
    run = JudgeRun.objects.get(benchmark=benchmark, is_canonical=True)
    controls_generate(benchmark=benchmark, kinds=["clear", "rendering"], contexts=1, seed=0)
    variant = ControlVariant.objects.filter(benchmark=benchmark, kind="clear").first()
    hypoarena = hypoarena_build(cases_per_domain=2, name="hypoarena-phones").benchmark
    intrinsic_demo.demo_build()
    intrinsic = Benchmark.objects.get(name=intrinsic_demo.DEMO_NAME)
    reconstruction_demo.demo_build()
    reconstruction_demo.demo_swiss()
    reconstruction = Benchmark.objects.get(name=reconstruction_demo.DEMO_NAME)
    selection = SwissSelection.objects.get(benchmark=reconstruction)
    seed = BibliographyFreeze.objects.filter(seed__benchmark=reconstruction).order_by("pk").first().seed
    assert variant is not None
    b, h, i, r = benchmark.pk, hypoarena.pk, intrinsic.pk, reconstruction.pk
    few = "?replicates=20"  # bootstrap pages: few replicates, so that each page is quick
    return {
        "dashboard": reverse("arena:dashboard"),
        "Lit2Test benchmark": reverse("arena:benchmark", args=[b]),
        "leaderboard": reverse("lit2test:leaderboard", args=[b]),
        "blindness": reverse("arena:blindness", args=[b]),
        "controls": reverse("controls:list", args=[b]),
        "control variant": reverse("controls:variant", args=[variant.pk]),
        "controls report": reverse("controls:report", args=[b]),
        "runs": reverse("jobs:runs"),
        "new run": reverse("jobs:run-new"),
        "run": reverse("jobs:run", args=[run.pk]),
        "new generation": reverse("lit2test:generation-new"),
        "studies": reverse("annotation:studies"),
        "study": reverse("annotation:study", args=[study.pk]),
        "annotators": reverse("annotation:annotators"),
        "annotator": reverse("annotation:annotator", args=[annotator.pk]),
        "API documentation": reverse("api-docs"),
        "HypoArena benchmark": reverse("hypoarena:benchmark", args=[h]),
        "HypoArena leaderboard": reverse("hypoarena:leaderboard", args=[h]) + few,
        "HypoArena inter-judge page": reverse("hypoarena:agreement", args=[h]) + few,
        "Intrinsic papers": reverse("intrinsic:benchmark", args=[i]),
        "Intrinsic report": reverse("intrinsic:report", args=[i]) + few,
        "Intrinsic launch": reverse("intrinsic:launch", args=[i]),
        "Reconstruction seeds": reverse("reconstruction:benchmark", args=[r]),
        "Reconstruction seed": reverse("reconstruction:seed", args=[r, seed.pk]),
        "Reconstruction results": reverse("reconstruction:results", args=[r]),
        "Reconstruction bracket": reverse("reconstruction:bracket", args=[r, selection.pk]),
        "Reconstruction launch": reverse("reconstruction:launch", args=[r]),
    }


#: On a phone, axe-core also checks these researcher pages: the seed page (item 8) and the pages of wide tables, which
#: scroll in boxes of their own there.
AXE_ON_PHONE = ("dashboard", "leaderboard", "runs", "Reconstruction seed")


def narrowed(page, width: int) -> str | None:  # noqa: ANN001
    """The page, already loaded, measured again in a narrower window (a tablet, a window beside another) once
    static/js/scroll-boxes.js has marked the tables too wide for it."""
    page.set_viewport_size({"width": width, "height": page.viewport_size["height"]})
    page.wait_for_function("w => document.documentElement.dataset.boxesWidth === String(w)", arg=width)
    return sideways(page)


def check_researcher_page(page, name: str, url: str, size: str) -> dict[str, str]:  # noqa: ANN001
    """What does not fit on one researcher's page at this size (and, on a desktop, in a window of NARROW px)."""
    problems: dict[str, str] = {}
    visit(page, url)
    if problem := sideways(page):
        problems[f"{name} ({url}) on a {size}"] = problem
    if name == "dashboard" and page.viewport_size["width"] < 500:
        for control in ("select[name=language]", "#nav-api", "form[action='/accounts/logout/'] button"):
            if not in_window(page, control):
                problems[f"{control} of the top bar on a {size}"] = "outside the window: the top bar should wrap"
    if name == "Reconstruction seed":
        text = page.locator("#shown-text")
        assert text.count() == 1, f"the seed page {url} shows no frozen bibliography (#shown-text): pick a frozen seed"
        if not text.evaluate("e => e.scrollWidth <= e.clientWidth"):
            problems[f"frozen bibliography (#shown-text) of {url} on a {size}"] = "its lines do not wrap"
    if page.viewport_size["width"] > NARROW:
        if problem := narrowed(page, NARROW):
            problems[f"{name} ({url}) in a {NARROW} px window"] = problem
        page.set_viewport_size(DESKTOP["viewport"])
    return problems


def test_no_researcher_page_scrolls_sideways_on_a_phone_or_a_desktop(
    browser, live_server, researcher, annotator, release_dir: Path, settings
) -> None:  # noqa: ANN001
    settings.LIT2TEST_LEADERBOARD_MAX_REPLICATES = 50  # the Lit2Test leaderboard's default replicates: few, for speed
    pages = researcher_pages(annotator, release_dir)
    wide: dict[str, str] = {}
    found: dict[str, list[str]] = {}
    for size, options in SIZES.items():
        context = browser.new_context(base_url=live_server.url, **options)
        context.set_default_timeout(15_000)
        page = context.new_page()
        log_in(page, "rita", "pw-rita")
        for name, url in pages.items():
            wide |= check_researcher_page(page, name, url, size)
            if options is PHONE and name in AXE_ON_PHONE:
                found[name] = violations(page)
        context.close()
    assert wide == {}, "pages wider than their window (the elements sticking out follow each):\n" + "\n".join(
        f"{k}: {v}" for k, v in wide.items()
    )
    assert {name: v for name, v in found.items() if v} == {}, "axe-core violations on a phone"


def check_item_screen(page, items: Items, size: str, language: str) -> dict[str, str]:  # noqa: ANN001
    """The started and the over-time item's screens: on a phone their sticky bar stays small while the proposals
    scroll under it; after a refused submission (``?check=1``) every score is reachable by scrolling the page."""
    problems: dict[str, str] = {}
    phone = page.viewport_size["width"] < 500
    for state, item in (("started", items.started), ("over time", items.over_time)):
        visit(page, reverse("annotation:item", args=[item.token]))
        if problem := sideways(page):
            problems[f"item screen ({state}, {language}) on a {size}"] = problem
        if phone:
            page.evaluate("document.getElementById('proposals-h').scrollIntoView({block: 'start'})")
            top, height = page.evaluate(
                "() => { const r = document.querySelector('.ann-bar').getBoundingClientRect(); return [r.top, r.height]; }"
            )
            window = page.viewport_size["height"]
            if abs(top) >= 1 or height >= BAR_SHARE * window:
                problems[f"status bar of the item screen ({state}, {language}) on a {size}"] = (
                    f"top at {top:.0f} px (sticky: 0), {height:.0f} of {window} px high (less than {BAR_SHARE:.0%} wanted):"
                    " see the phone rules of static/annotation/annotation.css"
                )
    visit(page, reverse("annotation:item", args=[items.started.token]) + "?check=1")
    assert page.locator("#error-summary").is_visible(), "?check=1 on an unanswered item should show the error summary"
    if problem := sideways(page):
        problems[f"item screen after a refused submission ({language}) on a {size}"] = problem
    nested = page.locator("[data-rubric]").evaluate(
        "e => getComputedStyle(e).overflowY !== 'visible' && e.scrollHeight > e.clientHeight + 1"
        " ? e.scrollHeight + ' px of scores in a ' + e.clientHeight + ' px box' : null"
    )
    if nested:
        problems[f"rubric after a refused submission ({language}) on a {size}"] = f"scrolls on its own: {nested}"
    for dimension in DIMENSION_KEYS:
        for side in ("a", "b"):
            if problem := page.evaluate(SCROLL_TO_SCORE, f"{side}_{dimension}"):
                problems[f"score {side}_{dimension} after a refused submission ({language}) on a {size}"] = problem
    return problems


def test_no_annotator_page_scrolls_sideways_in_english_or_chinese_and_the_item_screen_suits_a_phone(
    browser, live_server, annotator, release_dir: Path
) -> None:  # noqa: ANN001
    items = items_for(annotator, release_dir)
    wide: dict[str, str] = {}
    found: dict[str, list[str]] = {}
    for size, options in SIZES.items():
        for language in ("en", "zh-hans"):
            context = browser.new_context(base_url=live_server.url, **options)
            context.set_default_timeout(15_000)
            page = context.new_page()
            visit(page, reverse("login"))
            if language != "en":
                with page.expect_navigation():
                    page.select_option("select[name=language]", language)
            log_in(page, "ann", "pw-ann")
            assert page.locator("html").get_attribute("lang") == language
            for name, url in (
                ("log-in page", reverse("login")),
                ("my items", reverse("annotation:home")),
                ("guideline", reverse("annotation:guide")),
                ("item start page", reverse("annotation:item-start", args=[items.unstarted.token])),
            ):
                visit(page, url)
                if problem := sideways(page):
                    wide[f"{name} ({language}) on a {size}"] = problem
                if not in_window(page, "select[name=language]"):
                    wide[f"language menu on the {name} ({language}) on a {size}"] = "outside the window: the top bar should wrap"
            wide |= check_item_screen(page, items, size, language)
            if options is PHONE:
                found[f"item screen after a refused submission ({language})"] = violations(page)
                visit(page, reverse("annotation:item", args=[items.started.token]))
                found[f"item screen ({language})"] = violations(page)
            context.close()
    assert wide == {}, "what does not fit:\n" + "\n".join(f"{k}: {v}" for k, v in wide.items())
    assert {name: v for name, v in found.items() if v} == {}, "axe-core violations on a phone"
