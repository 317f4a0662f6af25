from django.urls import path

from . import apis, views

app_name = "hypoarena"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/hypoarena/", views.benchmark_page, name="benchmark"),
    path("dashboard/benchmarks/<int:benchmark_id>/hypoarena/leaderboard/", views.leaderboard_page, name="leaderboard"),
    path("dashboard/benchmarks/<int:benchmark_id>/hypoarena/agreement/", views.agreement_page, name="agreement"),
    path("api/benchmarks/<int:benchmark_id>/hypoarena/", apis.HypoArenaLeaderboardApi.as_view(), name="api-leaderboard"),
    path("api/benchmarks/<int:benchmark_id>/hypoarena/agreement/", apis.HypoArenaAgreementApi.as_view(), name="api-agreement"),
]
