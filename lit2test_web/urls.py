from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path

from arena import apis as arena_apis
from arena.protocols import protocol_urls

from . import api_docs, views

handler404 = "lit2test_web.errors.not_found"  # JSON under /api/


def favicon(request: HttpRequest) -> HttpResponse:
    """Pages that name no icon (the admin's) make browsers ask for /favicon.ico: the app's icon.

    Resolved per request, not at import: the production storage needs collectstatic's manifest.
    """
    return redirect(static("favicon.svg"))


urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", favicon),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("api/", api_docs.ApiRootApi.as_view(), name="api-root"),
    path("api/docs/", api_docs.api_docs, name="api-docs"),
    path("api/schema/", arena_apis.SchemaApi.as_view(), name="api-schema"),
    path("admin/", admin.site.urls),
    path("", include("arena.urls")),
    path("", include("jobs.urls")),
    # Every installed protocol app's pages, as it registered them (arena.protocols): adding a protocol edits nothing here.
    *(path("", include(module)) for module in protocol_urls()),
]
