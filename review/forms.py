"""Forms of the review UI (/review/ and the admin's reject action)."""

from __future__ import annotations

from django import forms

from proposals.models import ProposalKind
from proposals.schemas import MAX_REASON_CHARS


class RejectForm(forms.Form):
    # The service enforces the same limit (proposals.schemas.RejectInput); checking it here
    # too lets the page show the error beside the field instead of a generic failure.
    reason = forms.CharField(
        label="Reason",
        required=False,
        max_length=MAX_REASON_CHARS,
        strip=True,
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": MAX_REASON_CHARS}),
        help_text=f"Optional, at most {MAX_REASON_CHARS} characters.",
    )

    def error_text(self) -> str:
        """The form's errors as one sentence, for a message or a card."""
        return " ".join(str(message) for message in self.errors.get("reason", []))


class QueueFilterForm(forms.Form):
    """The pending queue's filters, read from the query string (an empty value means any)."""

    kind = forms.ChoiceField(
        label="Kind",
        required=False,
        choices=[("", "Any kind"), *ProposalKind.choices],
    )
    project = forms.ChoiceField(label="Project", required=False, choices=[("", "Any project")])

    def __init__(self, *args: object, projects: list[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        field = self.fields["project"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [("", "Any project"), *((p, p) for p in projects if p)]
