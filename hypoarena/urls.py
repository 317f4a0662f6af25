from django.urls import path

from . import apis, views

app_name = "hypoarena"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/hypoarena/", views.benchmark_page, name="benchmark"),
    path("api/benchmarks/<int:benchmark_id>/hypoarena/", apis.HypoArenaLeaderboardApi.as_view(), name="api-leaderboard"),
]
