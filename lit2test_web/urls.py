from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

from arena import views as arena_views

urlpatterns = [
    path("", arena_views.home, name="home"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("admin/", admin.site.urls),
    path("", include("arena.urls")),
    path("", include("annotation.urls")),
    path("", include("jobs.urls")),
]
