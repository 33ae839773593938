from django.urls import include, path

urlpatterns = [
    path("v1/", include("api.urls")),
]

handler400 = "api.errors.bad_request"
handler404 = "api.errors.route_not_found"
handler500 = "api.errors.server_error"
