"""Registrations: which sessions of which principals are live in a project (their lease has
not lapsed), and whether a principal was ever seen. Writes are atomic; `registration_renew`
is both the first registration and every heartbeat after it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from messaging.models import Message, Registration

DEFAULT_LEASE_SECONDS = 120
MIN_LEASE_SECONDS = 30
MAX_LEASE_SECONDS = 3600
MAX_WORK_CHARS = 500


@transaction.atomic
def registration_renew(
    *,
    project: str,
    principal: str,
    session: str,
    host_kind: str,
    work: str | None,
    lease_seconds: int,
    now: datetime | None = None,
) -> Registration:
    """Register `session` as a live session of `principal` in `project`, or renew it: the
    lease runs `lease_seconds` from now. `work` replaces the declared work when given (an
    empty string clears it); None keeps what was declared. A new session of a principal gets
    the next generation; a renewal keeps its own."""
    now = now or timezone.now()
    expires = now + timedelta(seconds=lease_seconds)
    existing = Registration.objects.filter(
        project=project, principal=principal, session=session
    ).first()
    if existing is not None:
        existing.host_kind = host_kind
        if work is not None:
            existing.work = work.strip() or None
        existing.lease_seconds = lease_seconds
        existing.lease_expires_at = expires
        existing.renewed_at = now
        existing.save()
        return existing
    last = Registration.objects.filter(project=project, principal=principal).aggregate(
        last=Max("generation")
    )["last"]
    return Registration.objects.create(
        project=project,
        principal=principal,
        session=session,
        host_kind=host_kind,
        work=(work or "").strip() or None,
        generation=(last or 0) + 1,
        lease_seconds=lease_seconds,
        lease_expires_at=expires,
        registered_at=now,
        renewed_at=now,
    )


@transaction.atomic
def session_leases_renew(*, session: str, now: datetime | None = None) -> int:
    """Renew every registration of `session` that is still live, each by its own lease
    length: what `memesh mcp` does while its process lives. A lapsed one is not revived (the
    session went quiet; registering again is deliberate). Returns how many were renewed."""
    now = now or timezone.now()
    renewed = 0
    for registration in Registration.objects.filter(session=session, lease_expires_at__gt=now):
        registration.lease_expires_at = now + timedelta(seconds=registration.lease_seconds)
        registration.renewed_at = now
        registration.save(update_fields=["lease_expires_at", "renewed_at"])
        renewed += 1
    return renewed


def registrations_live(*, project: str, now: datetime | None = None) -> list[Registration]:
    """The live registrations of `project`, by principal then generation."""
    now = now or timezone.now()
    return list(
        Registration.objects.filter(project=project, lease_expires_at__gt=now).order_by(
            "principal", "generation"
        )
    )


def session_is_live(
    *, project: str, principal: str, session: str, now: datetime | None = None
) -> bool:
    now = now or timezone.now()
    return Registration.objects.filter(
        project=project, principal=principal, session=session, lease_expires_at__gt=now
    ).exists()


def principal_known_in(*, project: str, principal: str) -> bool:
    """Whether `principal` ever registered in `project` (live or lapsed): durable mail to it
    is then stored and forwarded."""
    return Registration.objects.filter(project=project, principal=principal).exists()


def principal_ever_seen(principal: str) -> bool:
    """Whether `principal` was seen in any project: it registered, or it sent a message."""
    return (
        Registration.objects.filter(principal=principal).exists()
        or Message.objects.filter(Q(sender=principal)).exists()
    )


@transaction.atomic
def session_leases_end(*, session: str, now: datetime | None = None) -> int:
    """End the live leases of `session` now: its process is stopping, so discover stops
    listing it at once instead of when the lease would have lapsed."""
    now = now or timezone.now()
    return Registration.objects.filter(session=session, lease_expires_at__gt=now).update(
        lease_expires_at=now
    )
