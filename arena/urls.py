from django.urls import path

from . import apis, views

app_name = "arena"
urlpatterns = [
    path("dashboard/", views.dashboard, name="dashboard"),
    path("dashboard/benchmarks/<int:benchmark_id>/", views.benchmark_detail, name="benchmark"),
    path("dashboard/benchmarks/<int:benchmark_id>/export.zip", views.benchmark_export, name="benchmark-export"),
    path("api/benchmarks/", apis.BenchmarkListApi.as_view(), name="api-benchmarks"),
]
