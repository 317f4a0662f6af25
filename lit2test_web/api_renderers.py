"""How an API answer looks when a researcher opens an API URL in a browser.

A module of its own, named in ``REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"]``: DRF imports the renderers while
``rest_framework.views`` is being imported, so this module must not import the API's views (``api_docs`` does);
it reads the schema's operations only when a page is rendered.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.renderers import BrowsableAPIRenderer


class BrowsableApiRenderer(BrowsableAPIRenderer):
    """DRF's HTML view of an answer, in the site's own page (``templates/rest_framework/api.html``: the site's styles
    and scripts only, as the Content-Security-Policy allows; DRF's page adds an inline ``<style>``). Its title and
    description are the operation's summary and description from the OpenAPI schema, the words of ``/api/docs/``,
    not the view's class name ("Api Root Api")."""

    def _operation(self, request: Any) -> dict[str, Any] | None:  # noqa: ANN401
        from .api_docs import api_operation  # the API's views: loaded once DRF is

        return api_operation(request)

    def get_name(self, view: Any) -> str:  # noqa: ANN401
        op = self._operation(view.request)
        return op["summary"] if op else settings.SPECTACULAR_SETTINGS["TITLE"]

    def get_description(self, view: Any, status_code: int) -> str:  # noqa: ANN401
        op = self._operation(view.request)
        return op["description"] if op and status_code < 400 else ""

    def get_context(self, data: Any, accepted_media_type: str | None, renderer_context: dict[str, Any]) -> dict[str, Any]:  # noqa: ANN401
        context = super().get_context(data, accepted_media_type, renderer_context)
        # code_style is Pygments' CSS, which DRF's page puts in an inline <style>; ours has no use for it.
        return context | {
            "code_style": "",
            "operation": self._operation(renderer_context["request"]),
            "api_title": settings.SPECTACULAR_SETTINGS["TITLE"],
        }
