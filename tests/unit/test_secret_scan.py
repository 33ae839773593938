"""The capture paths' secret detector (core/redact.py) on real-looking samples:
each kind is found and named, ordinary engineering prose is left alone, and masking leaves
nothing any detector finds."""

from __future__ import annotations

import pytest

from core.redact import find_secret, has_secret, mask_secrets

# Shaped like the real thing; none of these is a live credential.
SAMPLES = [
    ("private-key", "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n"),
    ("private-key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7"),
    ("aws-access-key", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE"),
    (
        "aws-secret-key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    ("github-token", "git clone with ghp_1A2b3C4d5E6f7G8h9I0j1K2l3M4n5O6p7Q8r"),
    ("github-token", "token github_pat_11ABCDEFG0123456789abcdefghijklmnop"),
    ("gitlab-token", "CI uses glpat-Ab12Cd34Ef56Gh78Ij90"),
    ("slack-token", "bot token xoxb-123456789012-1234567890123-AbCdEfGhIjKl"),
    ("slack-webhook", "post to https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX"),
    ("stripe-key", "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("anthropic-key", "ANTHROPIC_API_KEY=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv"),
    ("openai-key", "use sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123 for the run"),
    ("google-api-key", "maps key AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("npm-token", "//registry/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    (
        "jwt",
        "header eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
    ),
    ("url-password", "DATABASE_URL=postgres://admin:hunter2secret@db.internal:5432/app"),
    ("bearer-token", "curl -H 'Authorization: Bearer abcdef0123456789abcdef'"),
    ("password-assignment", 'config: password = "Tr0ub4dor&3xyz"'),
    ("password-assignment", "client_secret: 9f8e7d6c5b4a39281706"),
]

CLEAN = [
    "Chose JWT for authentication because sessions must survive a restart.",
    "The password field of the login form is validated on the server, not the client.",
    "Set password = <your password> in .env before running the app.",
    "api_key: ${OPENAI_API_KEY} is read from the environment.",
    "Connect with postgres://localhost:5432/app (no credentials in the URL).",
    "git push git@github.com:acme/widget.git failed with a non-fast-forward error.",
    "Bump the sk-learn pin; the risk-adjusted task-queue skips retries.",
    "Fixed the flaky test by isolating the database per worker.",
]


@pytest.mark.parametrize(("detector", "text"), SAMPLES)
def test_each_kind_of_secret_is_found_and_named(detector: str, text: str) -> None:
    finding = find_secret(text)
    assert finding is not None
    assert finding.detector == detector


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_engineering_prose_is_not_a_secret(text: str) -> None:
    assert not has_secret(text)


def test_the_earliest_secret_is_the_one_reported() -> None:
    text = "first AKIAIOSFODNN7EXAMPLE then -----BEGIN PRIVATE KEY-----"
    finding = find_secret(text)
    assert finding is not None
    assert (finding.detector, finding.start) == ("aws-access-key", text.index("AKIA"))


@pytest.mark.parametrize(("detector", "text"), SAMPLES)
def test_masking_leaves_no_secret_and_names_the_detector(detector: str, text: str) -> None:
    masked = mask_secrets(text)

    assert not has_secret(masked)
    assert "[secret: " in masked


def test_a_private_key_is_masked_through_its_end_line_or_the_end_of_the_text() -> None:
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"

    assert mask_secrets(f"key:\n{block}\nthen prose") == ("key:\n[secret: private-key]\nthen prose")
    assert mask_secrets("cut -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq") == (
        "cut [secret: private-key]"
    )


@pytest.mark.parametrize("text", CLEAN)
def test_masking_leaves_ordinary_prose_as_it_is(text: str) -> None:
    assert mask_secrets(text) == text
