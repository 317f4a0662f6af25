from django.urls import path

from . import apis, views

app_name = "reconstruction"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/reconstruction/", views.seed_list_page, name="benchmark"),
    path("dashboard/benchmarks/<int:benchmark_id>/reconstruction/seeds/<int:seed_id>/", views.seed_page, name="seed"),
    path("dashboard/benchmarks/<int:benchmark_id>/reconstruction/results/", views.results_page, name="results"),
    path("dashboard/benchmarks/<int:benchmark_id>/reconstruction/swiss/<int:selection_id>/", views.bracket_page, name="bracket"),
    path("dashboard/benchmarks/<int:benchmark_id>/reconstruction/launch/", views.launch_page, name="launch"),
    path("api/benchmarks/<int:benchmark_id>/reconstruction/", apis.ReconstructionReportApi.as_view(), name="api-report"),
]
