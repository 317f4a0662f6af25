from django.urls import path

from . import apis, views

app_name = "lit2test"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/export.zip", views.benchmark_export, name="benchmark-export"),
    path("dashboard/benchmarks/<int:benchmark_id>/leaderboard/", views.leaderboard, name="leaderboard"),
    path("dashboard/benchmarks/<int:benchmark_id>/new-version/", views.benchmark_version_new, name="benchmark-new-version"),
    path("dashboard/runs/<int:run_id>/compare/<int:other_id>/", views.run_compare, name="run-compare"),
    path("dashboard/generation/new/", views.generation_new, name="generation-new"),
    path("api/benchmarks/<int:benchmark_id>/leaderboard/", apis.LeaderboardApi.as_view(), name="api-leaderboard"),
    path("api/runs/<int:run_id>/agreement/", apis.RunAgreementApi.as_view(), name="api-run-agreement"),
]
