"""English and Chinese: the catalog is complete and compiled, and the annotator's pages really switch."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import polib
import pytest
from django.urls import reverse
from django.utils.translation.template import templatize

from annotation.models import Assignment

ROOT = Path(__file__).resolve().parents[2]
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
# Every template and module that an annotator's page, or a researcher's study page, draws strings from.
TEMPLATES = sorted((ROOT / "templates" / "annotation").glob("*.html")) + [
    ROOT / "templates" / "base.html",
    ROOT / "templates" / "arena" / "welcome.html",
    ROOT / "templates" / "registration" / "login.html",
]
MODULES = [ROOT / "annotation" / name for name in ("rubric.py", "views.py", "models.py", "flow.py")]


def catalog() -> polib.POFile:
    return polib.pofile(str(PO))


def test_every_catalog_entry_is_translated_and_none_is_fuzzy() -> None:
    po = catalog()
    assert not po.metadata_is_fuzzy
    assert po.metadata.get("Plural-Forms", "").startswith("nplurals=1")
    problems = []
    for entry in po:
        if entry.obsolete:
            continue
        if "fuzzy" in entry.flags:
            problems.append(f"fuzzy: {entry.msgid!r}")
        if entry.msgid_plural:
            if not entry.msgstr_plural or not all(v.strip() for v in entry.msgstr_plural.values()):
                problems.append(f"untranslated plural: {entry.msgid!r}")
        elif not entry.msgstr.strip():
            problems.append(f"untranslated: {entry.msgid!r}")
    assert not problems, "\n".join(problems)
    assert len(po) > 150


def test_placeholders_survive_translation() -> None:
    for entry in catalog():
        translations = entry.msgstr_plural.values() if entry.msgid_plural else [entry.msgstr]
        for text in translations:
            assert sorted(re.findall(r"%\(\w+\)[sd]", entry.msgid)) == sorted(re.findall(r"%\(\w+\)[sd]", text)), entry.msgid


def test_the_compiled_catalog_is_up_to_date(tmp_path: Path) -> None:
    def table(entries) -> dict:  # noqa: ANN001
        return {
            (e.msgctxt, e.msgid): tuple(sorted(e.msgstr_plural.items())) if e.msgid_plural else e.msgstr
            for e in entries
            if e.msgid and not e.obsolete and "fuzzy" not in e.flags
        }

    fresh = tmp_path / "django.mo"
    catalog().save_as_mofile(str(fresh))  # what compilemessages would write now
    committed = table(polib.mofile(str(MO)))
    assert committed == table(polib.mofile(str(fresh))), "recompile: manage.py compilemessages -l zh_Hans"
    assert committed == table(catalog().translated_entries())


#: A string literal of templatize's output or of Python source: either quote, an optional ``u`` prefix.
LITERAL = r"""u?(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
CALL = re.compile(rf"\b(n?p?gettext)\(\s*({LITERAL})(?:\s*,\s*({LITERAL}))?")
CONTEXT_FUNCTIONS = {"pgettext", "pgettext_lazy", "npgettext", "npgettext_lazy"}
MARKING_FUNCTIONS = {"_", "gettext", "gettext_lazy", "ngettext", "ngettext_lazy", *CONTEXT_FUNCTIONS}


def marked_strings() -> set[tuple[str | None, str]]:
    """The (context, msgid) pairs the annotation templates and modules mark for translation (as makemessages sees
    them): ``pgettext`` and ``{% translate ... context ... %}`` included, since a context makes its own entry."""
    found: set[tuple[str | None, str]] = set()
    for path in TEMPLATES:
        text = templatize(path.read_text(encoding="utf-8"), origin=str(path))
        for match in CALL.finditer(text):
            first = ast.literal_eval(match.group(2).removeprefix("u"))
            if match.group(1).startswith(("pgettext", "npgettext")):
                found.add((first, ast.literal_eval(match.group(3).removeprefix("u"))))
            else:
                found.add((None, first))
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = getattr(node.func, "id", None) if isinstance(node, ast.Call) else None
            if name not in MARKING_FUNCTIONS:
                continue
            args = [a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in node.args]
            if name in CONTEXT_FUNCTIONS and len(args) >= 2 and args[0] is not None and args[1] is not None:
                found.add((args[0], args[1]))
            elif name not in CONTEXT_FUNCTIONS and args and args[0] is not None:
                found.add((None, args[0]))
    return found


def test_every_marked_string_is_in_the_catalog() -> None:
    known = {(e.msgctxt, e.msgid) for e in catalog().translated_entries() if "fuzzy" not in e.flags}
    marked = marked_strings()
    assert len(marked) > 150
    assert ("validation status", "pending") in marked and (None, "Annotator's #") in marked  # both quotes, contexts
    missing = sorted(marked - known, key=str)
    assert not missing, f"run makemessages and translate (context, msgid): {missing}"


# English labels that must not survive on a Chinese page (none of them occurs in the proposals' text).
ENGLISH_LABELS = [
    "Neighborhood screening",
    "Score both proposals",
    "Which proposal is more suitable",
    "Proposal A",
    "Proposal B",
    "Time left",
    "Save draft",
    ">Submit<",
    "Rationale",
    "Confidence",
    "Anchors",
    "Reviewer-noted limitation",
    "Open problem",
    "Resource constraint",
    "Literature gap",
    "Decisive metric",
    "Falsifying result",
    "My items",
    "Guideline",
    "Log out",
    "Both equally weak",
    "choose a reason",
    "Partly coherent",
    "Not saved yet",
]


@pytest.mark.django_db
def test_the_annotation_screen_and_the_guideline_render_in_chinese(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = Assignment.objects.filter(study=study, annotator=annotator).order_by("position").first()
    ann_client.cookies["django_language"] = "zh-hans"
    ann_client.post(reverse("annotation:item-start", args=[a.token]))  # the screen shows once the item is started
    screen = ann_client.get(reverse("annotation:item", args=[a.token])).content.decode()
    for text in (
        "邻域筛查",
        "哪份提案更适合作为下一步实验？",
        "提案 A",
        "提案 B",
        "剩余时间",
        "保存草稿",
        "提交",
        "评分锚点",
        "审稿人指出的局限",
        "文献空白",
        "可证伪性",
        "平局",
        "无效",
        "置信度",
        "理由",
        "尚未保存",
        '<html lang="zh-hans">',
    ):
        assert text in screen, text
    for label in ENGLISH_LABELS:
        assert label not in screen, label
    guide = ann_client.get(reverse("annotation:guide")).content.decode()
    for text in ("标注指南", "五个维度及其评分锚点", "泛泛而谈", "时间上限", "两者同样弱", "其他（请在理由中说明）"):
        assert text in guide, text
    for label in ENGLISH_LABELS + ["Annotation guideline", "Generic: the gap", "Time cap"]:
        assert label not in guide, label
    listing = ann_client.get(reverse("annotation:home")).content.decode()
    assert "下一个条目" in listing and "待完成" in listing and "Next item" not in listing


@pytest.mark.django_db
def test_a_rejected_submission_names_the_missing_fields_in_chinese(study, annotator, ann_client) -> None:  # noqa: ANN001
    a = Assignment.objects.filter(study=study, annotator=annotator).order_by("position").first()
    ann_client.cookies["django_language"] = "zh-hans"
    response = ann_client.post(
        reverse("annotation:item-submit", args=[a.token]), {"screening": "coherent", "rationale": "太短"}, follow=True
    )
    html = response.content.decode()
    # Post/redirect/get: the answers are kept as the draft, and the item names what is missing.
    assert response.redirect_chain == [(reverse("annotation:item", args=[a.token]) + "?check=1", 302)]
    assert "尚未提交：还有未完成的答案" in html
    assert "请为提案 A 的“文献依据”打分（1、2 或 3）。" in html
    assert "理由太短：请至少写 10 个字符。" in html
    assert "你已填写的内容都没有丢失。" in html
    assert ">太短</textarea>" in html
