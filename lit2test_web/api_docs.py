"""The API's front door for researchers: ``/api/`` lists every endpoint (JSON), ``/api/docs/`` documents them.

Both are built from the OpenAPI schema drf-spectacular generates (the one served at ``/api/schema/``), so they
never drift from the API. The documentation page is rendered on the server from that schema: Swagger UI and
Redoc load scripts and styles from CDNs, which the Content-Security-Policy forbids. The browsable view of each
answer (an API URL opened in a browser) is titled and described from the same schema (``lit2test_web.api_renderers``),
not from the view's class name ("Api Root Api").
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from arena.apis import api_responses
from arena.permissions import IsResearcher, researcher_required

METHODS = ("get", "post", "put", "patch", "delete")


@functools.cache
def api_schema() -> dict[str, Any]:
    """The whole OpenAPI document (every operation, whoever asks: both callers are researcher-only)."""
    return SchemaGenerator().get_schema(request=None, public=True)


def _type(schema: dict[str, Any]) -> str:
    """A parameter's type in words: ``integer ≥ 1``, ``one of: json, yaml``, ``number, 0–100``."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "enum" in schema:
        return "one of: " + ", ".join(str(v) for v in schema["enum"] if v not in ("", None))
    words = schema.get("type", "any")
    if schema.get("type") == "array":
        words = f"list of {_type(schema.get('items', {}))}"
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None and high < 2**53:
        words += f", {low}–{high}"
    elif low is not None:
        words += f" ≥ {low}"
    elif high is not None and high < 2**53:
        words += f" ≤ {high}"
    if "default" in schema:
        words += f" (default {schema['default']})"
    return words


def _prose(text: str) -> SafeString:
    """A docstring for the page: escaped, with its ``literals`` set as code."""
    return mark_safe(re.sub(r"``(.+?)``", r"<code>\1</code>", escape(text)))  # noqa: S308 - escaped first


def _summary(op: dict[str, Any], description: str) -> str:
    """The operation's own summary (``extend_schema(summary=...)``), else its description's first sentence."""
    if op.get("summary"):
        return str(op["summary"])
    return description.split("\n\n")[0].replace("\n", " ").replace("``", "")


def api_operations() -> list[dict[str, Any]]:
    """Every operation of the schema, in path order: method, path, summary, parameters and responses."""
    operations = []
    for path, item in api_schema()["paths"].items():
        for method in METHODS:
            op = item.get(method)
            if op is None:
                continue
            description = op.get("description") or op.get("summary") or ""
            parameters = [
                {
                    "name": p["name"],
                    "in": p["in"],
                    "required": bool(p.get("required")),
                    "type": _type(p.get("schema", {})),
                    "description": _prose(p.get("description") or ""),
                }
                for p in op.get("parameters", [])
            ]
            responses = [
                {"code": code, "description": r.get("description") or ""} for code, r in sorted(op.get("responses", {}).items())
            ]
            operations.append(
                {
                    "id": op.get("operationId", f"{method}-{path}"),
                    "method": method.upper(),
                    "path": path,
                    "tag": (op.get("tags") or ["api"])[0],
                    "description": _prose(description),
                    "summary": _summary(op, description),
                    "parameters": parameters,
                    "responses": responses,
                    # A plain GET with no required parameter can be opened as it is.
                    "link": path if method == "get" and not any(p["required"] for p in parameters) else "",
                }
            )
    return operations


def api_operation(request: HttpRequest) -> dict[str, Any] | None:
    """The schema's operation that ``request`` was routed to, or None (a URL the schema does not document).

    The route ``api/runs/<int:run_id>/agreement/`` is the schema's path ``/api/runs/{run_id}/agreement/``.
    """
    match = getattr(request, "resolver_match", None)
    if match is None or not match.route:
        return None
    path = "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", match.route)
    method = "GET" if request.method == "HEAD" else request.method
    return next((op for op in api_operations() if op["path"] == path and op["method"] == method), None)


class ApiRootApi(APIView):
    """The API's entry point: every endpoint, with links to the OpenAPI schema and its documentation page."""

    permission_classes = [IsResearcher]

    @extend_schema(summary="Every endpoint of the API", responses=api_responses(OpenApiTypes.OBJECT))
    def get(self, request: Request) -> Response:
        return Response(
            {
                "title": api_schema()["info"]["title"],
                "documentation": request.build_absolute_uri(reverse("api-docs")),
                "schema": request.build_absolute_uri(reverse("api-schema")),
                "endpoints": [
                    {"method": op["method"], "path": op["path"], "summary": op["summary"], "operation_id": op["id"]}
                    for op in api_operations()
                ],
            }
        )


@require_GET
@researcher_required
def api_docs(request: HttpRequest) -> HttpResponse:
    """Every endpoint with its parameters and responses, read from the OpenAPI schema."""
    operations = api_operations()
    tags: dict[str, list[dict[str, Any]]] = {}
    for op in operations:
        tags.setdefault(op["tag"], []).append(op)
    schema = api_schema()
    return render(
        request,
        "api_docs.html",
        {
            "info": schema["info"],
            "tags": tags,
            "operations": operations,
            "components": {
                name: json.dumps(body, indent=2) for name, body in schema.get("components", {}).get("schemas", {}).items()
            },
        },
    )
