import pytest
from tests.annotation.helpers import make_study
from annotation.models import Assignment
from .conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

def test_shot(page, annotator, release_dir):
    from arena.release import release_import
    b = release_import(directory=release_dir).benchmark
    make_study(b, [annotator])
    a = Assignment.objects.filter(annotator=annotator).order_by("position").first()
    log_in(page, "ann", "pw-ann")
    page.goto("/annotate/")
    page.screenshot(path="/tmp/s_home.png", full_page=True)
    page.goto(f"/annotate/item/{a.token}/")
    page.screenshot(path="/tmp/s_item_top.png")
    page.screenshot(path="/tmp/s_item_full.png", full_page=True)
    page.locator("#ann-form").screenshot(path="/tmp/s_form.png")
    page.click("button[data-submit]")
    page.wait_for_load_state("networkidle")
    page.screenshot(path="/tmp/s_err_top.png")
    page.locator("#ann-form").screenshot(path="/tmp/s_form_err.png")
    page.set_viewport_size({"width": 420, "height": 900})
    page.goto(f"/annotate/item/{a.token}/")
    page.locator(".ann-proposals").screenshot(path="/tmp/s_mobile.png")
    page.mouse.wheel(0, 2200)
    page.wait_for_timeout(300)
    page.screenshot(path="/tmp/s_item_scrolled.png")
