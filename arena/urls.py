from django.urls import path

from . import apis, views

app_name = "arena"
urlpatterns = [
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/benchmarks/<int:benchmark_id>/", views.benchmark_detail, name="benchmark"),
    path("dashboard/benchmarks/<int:benchmark_id>/blindness/", views.benchmark_blindness_page, name="blindness"),
    path("dashboard/benchmarks/<int:benchmark_id>/blindness/rescan", views.benchmark_blindness_rescan, name="blindness-rescan"),
    path("dashboard/participants/<int:participant_id>/aliases/", views.participant_aliases_edit, name="participant-aliases"),
    path("api/benchmarks/", apis.BenchmarkListApi.as_view(), name="api-benchmarks"),
]
