"""Agents talking to each other (docs/messages.md): who is live where (registrations), what was
sent (messages) and what the recipient said it did with a message (receipts).

A registration is one running session of a principal — the routing id other agents send to —
in one project; several sessions may share a principal (every Claude Code session of a
project does). Its lease says until when it counts as live; a lapsed one stays as history, so
a principal that was once seen in a project can still be sent durable mail there.
"""

from __future__ import annotations

from django.db import models


class Registration(models.Model):
    project = models.CharField(max_length=500)
    principal = models.CharField(max_length=200)
    session = models.CharField(max_length=128)
    # What kind of host runs the session: the MCP client's declared name, `cli`, `http`.
    host_kind = models.CharField(max_length=64)
    # The session's own declaration of its current work; NULL is "unknown", never guessed.
    work = models.CharField(max_length=500, null=True)  # noqa: DJ001
    # The how-many-th session of this principal in this project this one is (1, 2, ...): a
    # sender can tell a restarted agent from the one it talked to.
    generation = models.PositiveIntegerField()
    lease_seconds = models.PositiveIntegerField()
    lease_expires_at = models.DateTimeField()
    registered_at = models.DateTimeField()
    renewed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "principal", "session"], name="registration_one_per_session"
            )
        ]
        indexes = [models.Index(fields=["project", "lease_expires_at"])]

    def __str__(self) -> str:
        return f"{self.principal}@{self.project} ({self.session})"


class Message(models.Model):
    message_id = models.CharField(max_length=40, unique=True)
    project = models.CharField(max_length=500)
    sender = models.CharField(max_length=200, null=True)  # noqa: DJ001
    recipient = models.CharField(max_length=200)
    # Meant for one session of the recipient principal: only it is reminded, only it may
    # record intake or disposition.
    intended_session = models.CharField(max_length=128, null=True)  # noqa: DJ001
    payload = models.JSONField()
    payload_bytes = models.PositiveIntegerField()
    source_host = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    # The first fetch: a delivery read, never an acknowledgement (receipts are those).
    first_fetched_at = models.DateTimeField(null=True)

    class Meta:
        indexes = [models.Index(fields=["project", "recipient", "created_at"])]

    def __str__(self) -> str:
        return self.message_id


class ReceiptKind(models.TextChoices):
    INTAKE = "intake"  # the recipient has taken the message in
    DISPOSITION = "disposition"  # what the recipient did with it


class Disposition(models.TextChoices):
    ACCEPTED = "accepted"
    DECLINED = "declined"
    DONE = "done"
    DEFERRED = "deferred"


class Receipt(models.Model):
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="receipts")
    kind = models.CharField(max_length=16, choices=ReceiptKind.choices)
    principal = models.CharField(max_length=200)
    session = models.CharField(max_length=128, null=True)  # noqa: DJ001
    disposition = models.CharField(  # noqa: DJ001
        max_length=16, choices=Disposition.choices, null=True
    )
    note = models.CharField(max_length=2000, null=True)  # noqa: DJ001
    source_host = models.CharField(max_length=64)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["message", "kind"])]

    def __str__(self) -> str:
        return f"{self.kind} of {self.message_id}"
