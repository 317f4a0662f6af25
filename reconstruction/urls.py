from django.urls import path

from . import views

app_name = "reconstruction"
urlpatterns = [
    path("dashboard/benchmarks/<int:benchmark_id>/reconstruction/", views.seed_list_page, name="seeds"),
    path("dashboard/benchmarks/<int:benchmark_id>/reconstruction/seeds/<int:seed_id>/", views.seed_page, name="seed"),
]
