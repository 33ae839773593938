from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.staticfiles.views import serve as serve_static
from django.urls import include, path, re_path

# The admin is discovered here, not at django.setup() (settings: SimpleAdminConfig).
admin.autodiscover()

urlpatterns = [
    path("v1/", include("api.rest.urls")),
    # The peer-shaped compatibility routes, off unless `peerApi` is on (api/rest/peer_views.py).
    path("api/v1/", include("api.rest.peer_urls")),
    # The review UI for people (docs/review.md): Django admin and the HTMX review page.
    path("admin/", admin.site.urls),
    path("review/", include("review.urls")),
    # The dashboard (docs/dashboard.md): the same login as the review page.
    path("dashboard/", include("dashboard.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Their CSS and htmx, read from the installed apps: `memesh serve` has no web server in
    # front of it and no collectstatic step, and the files are few and small.
    re_path(r"^static/(?P<path>.*)$", serve_static, {"insecure": True}),
]

handler400 = "api.rest.errors.bad_request"
handler404 = "api.rest.errors.route_not_found"
handler500 = "api.rest.errors.server_error"
