from django.urls import path

from . import apis, views

app_name = "toy_protocol"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/toy/", views.benchmark_page, name="benchmark"),
    path("api/benchmarks/<int:benchmark_id>/toy/", apis.ToyReportApi.as_view(), name="api-report"),
]
