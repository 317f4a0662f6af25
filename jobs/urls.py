from django.urls import path

from . import apis, sentinel_views, views

app_name = "jobs"
urlpatterns = [
    path("dashboard/runs/", views.run_list, name="runs"),
    path("dashboard/runs/new/", views.run_new, name="run-new"),
    path("dashboard/runs/new/cost-to-precision/", views.run_cost_to_precision, name="run-cost-to-precision"),
    path("dashboard/runs/<int:run_id>/", views.run_detail, name="run"),
    path("dashboard/runs/<int:run_id>/<str:action>/", views.run_control, name="run-control"),
    # Runs of the other kinds (generation, scoring ...: jobs.kinds), whose ids are per kind.
    path("dashboard/runs/<slug:kind>/<int:run_id>/", views.engine_run_detail, name="engine-run"),
    path("dashboard/runs/<slug:kind>/<int:run_id>/<str:action>/", views.engine_run_control, name="engine-run-control"),
    path("dashboard/benchmarks/<int:benchmark_id>/sentinels/", sentinel_views.sentinels_page, name="sentinels"),
    path(
        "dashboard/benchmarks/<int:benchmark_id>/sentinels/accept/",
        sentinel_views.sentinels_accept_view,
        name="sentinels-accept",
    ),
    path("api/runs/<int:run_id>/progress/", apis.RunProgressApi.as_view(), name="api-run-progress"),
    path("api/runs/<int:run_id>/reliability/", apis.RunReliabilityApi.as_view(), name="api-run-reliability"),
]
