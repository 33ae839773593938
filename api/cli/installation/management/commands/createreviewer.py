"""`memesh createreviewer <username>`: a staff account that may accept or reject proposals.

The account can log in to /review/ and /admin/, see proposals and their audit records there,
and accept or reject them (the `proposals.review_proposal` permission). It is not a superuser:
it cannot edit memories or other accounts. Running the command again for an existing user
grants the same rights and, when a password is given, replaces the password.
"""

from __future__ import annotations

import getpass
import json
import sys
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.management.base import CommandError, CommandParser
from django.db import transaction

from api.cli.base import MemeshCommand

PASSWORD_ENV = "MEMESH_REVIEWER_PASSWORD"

# app_label.codename: the review right, plus what the admin needs to show proposals.
REVIEWER_PERMISSIONS = (
    "proposals.review_proposal",
    "proposals.view_proposal",
    "proposals.change_proposal",
    "proposals.view_proposalreview",
)


def _permissions() -> list[Permission]:
    found = []
    for name in REVIEWER_PERMISSIONS:
        app_label, codename = name.split(".")
        try:
            found.append(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )
        except Permission.DoesNotExist:
            raise CommandError(
                f"Permission {name} does not exist: run `memesh migrate` first"
            ) from None
    return found


@transaction.atomic
def reviewer_create(username: str, password: str | None) -> dict[str, Any]:
    """Create or update `username` as a reviewer; returns what the command reports."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=username)
    if created and not password:
        raise CommandError("A new reviewer needs a password")
    if password:
        user.set_password(password)
    user.is_staff = True
    user.is_active = True
    user.save()
    user.user_permissions.add(*_permissions())
    return {
        "username": username,
        "created": created,
        "passwordChanged": bool(password),
        "permissions": list(REVIEWER_PERMISSIONS),
    }


class Command(MemeshCommand):
    help = (
        "Create (or update) a staff account that can review dream proposals at /review/ and "
        f"/admin/. Password from --password, else ${PASSWORD_ENV}, else a prompt."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="The reviewer's login name.")
        parser.add_argument(
            "--password",
            help=f"The password (visible in the process list: prefer ${PASSWORD_ENV}).",
        )
        parser.add_argument("--json", action="store_true", help="Print the result as JSON.")

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["username"].strip()
        if not username:
            raise CommandError("The username is empty")
        password = options["password"] or settings.MEMESH_REVIEWER_PASSWORD or None
        if password is None and self._is_new(username):
            password = self._prompt()
        result = reviewer_create(username, password)
        if options["json"]:
            self.stdout.write(json.dumps(result, indent=2))
            return
        verb = "created" if result["created"] else "updated"
        self.stdout.write(
            f"Reviewer {username} {verb}: log in at /review/ (or /admin/) to accept or reject "
            "proposals."
        )

    def _is_new(self, username: str) -> bool:
        return not get_user_model().objects.filter(username=username).exists()

    def _prompt(self) -> str:
        if not sys.stdin.isatty():
            raise CommandError(f"No password: pass --password or set ${PASSWORD_ENV}")
        first = getpass.getpass("Password: ")
        if not first:
            raise CommandError("The password is empty")
        if getpass.getpass("Password (again): ") != first:
            raise CommandError("The passwords do not match")
        return first
