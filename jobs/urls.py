from django.urls import path

from . import apis, views

app_name = "jobs"
urlpatterns = [
    path("dashboard/runs/", views.run_list, name="runs"),
    path("dashboard/runs/new/", views.run_new, name="run-new"),
    path("dashboard/runs/<int:run_id>/", views.run_detail, name="run"),
    path("dashboard/runs/<int:run_id>/<str:action>/", views.run_control, name="run-control"),
    path("dashboard/runs/<int:run_id>/compare/<int:other_id>/", views.run_compare, name="run-compare"),
    path("dashboard/generation/new/", views.generation_new, name="generation-new"),
    path("dashboard/benchmarks/<int:benchmark_id>/new-version/", views.benchmark_version_new, name="benchmark-new-version"),
    path("api/runs/<int:run_id>/progress/", apis.RunProgressApi.as_view(), name="api-run-progress"),
    path("api/runs/<int:run_id>/agreement/", apis.RunAgreementApi.as_view(), name="api-run-agreement"),
]
