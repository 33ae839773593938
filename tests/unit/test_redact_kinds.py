"""One table of secret kinds (core/redact.py) serves both uses: every secret a capture path
refuses is also masked in what memesh shows, and the kinds that match ordinary prose are masked
in output without ever dropping a capture."""

from __future__ import annotations

import pytest

from core.redact import (
    SECRET_KINDS,
    find_secret,
    mask_key_shapes,
    mask_secrets,
    redact,
    redact_message,
)

# (kind the capture path names, text, the secret that must not survive masking). Shaped like the
# real thing; none of these is a live credential.
SECRETS = [
    ("slack-token", "bot xoxb-123456789012-1234567890123-AbCdEfGhIjKl", "123456789012"),
    ("slack-token", "user xoxs-2718281828-3141592653-AbCdEfGh", "2718281828"),
    ("slack-token", "refresh xoxr-1-AbCdEfGhIjKlMnOpQrSt", "AbCdEfGhIjKlMnOpQrSt"),
    ("slack-token", "app xoxp-1234567890-0987654321-abcdef", "1234567890"),
    (
        "jwt",
        "header eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("aws-access-key", "export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    (
        "aws-secret-key",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "private-key",
        "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA7",
    ),
    ("private-key", "cut -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "b3BlbnNzaC1rZXk"),
    ("github-token", "clone with ghp_1A2b3C4d5E6f7G8h9I0j1K2l3M4n5O6p7Q8r", "1A2b3C4d5E6f7G8h9"),
    ("github-token", "oauth gho_AbCdEfGhIjKlMnOp", "AbCdEfGhIjKlMnOp"),
    ("github-token", "token github_pat_11ABCDEFG0123456789abcdef", "11ABCDEFG0123456789"),
    ("gitlab-token", "CI uses glpat-Ab12Cd34Ef56Gh78Ij90", "Ab12Cd34Ef56Gh78Ij90"),
    (
        "slack-webhook",
        "post to https://hooks.slack.com/services/T0000/B0000/XXXXXXXXXXXXXXXX",
        "T0000/B0000/XXXXXXXXXXXXXXXX",
    ),
    ("stripe-key", "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    (
        "anthropic-key",
        "Incorrect API key provided: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv",
        "AbCdEfGhIjKlMnOpQrStUv",
    ),
    ("openai-key", "use sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123 now", "AbCdEfGhIjKlMnOpQrStUvWxYz"),
    ("google-api-key", "maps key AIzaSyA1234567890abcdefghijklmnopqrstuv", "1234567890abcdef"),
    ("google-api-key", "short AIzaSyA1234567890", "SyA1234567890"),
    (
        "npm-token",
        "//registry/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    ),
    ("url-password", "postgres://admin:hunter2secret@db.internal:5432/app", "hunter2secret"),
    (
        "bearer-token",
        "curl -H 'Authorization: Bearer abcdef0123456789abcdef'",
        "abcdef0123456789abcdef",
    ),
    ("password-assignment", 'config: password = "Tr0ub4dor&3xyz"', "Tr0ub4dor&3xyz"),
    ("password-assignment", "client_secret: 9f8e7d6c5b4a39281706", "9f8e7d6c5b4a39281706"),
    ("password-assignment", "passwd=hunter2hunter2", "hunter2hunter2"),
]

# Masked in output, but ordinary prose in a capture: a user in a URL, a bare word after
# "Bearer", a short `sk-` word, a placeholder assignment.
OUTPUT_ONLY = [
    ("clone ssh://deploy@git.internal/widget.git", "clone ssh://***@git.internal/widget.git"),
    ("the server echoed Bearer opaque-value back", "Bearer ***"),
    ("key sk-abc123 was rotated", "key *** was"),
    ("token: <your token>", "token: ***"),
]


@pytest.mark.parametrize(("kind", "text", "secret"), SECRETS)
def test_each_kind_is_refused_by_the_capture_path_and_masked_in_output(
    kind: str, text: str, secret: str
) -> None:
    finding = find_secret(text)

    assert finding is not None and finding.detector == kind
    assert secret not in mask_secrets(text)
    assert secret not in mask_key_shapes(text)
    assert secret not in redact_message(text)
    assert secret not in str(redact({"detail": [text]}))


def test_every_kind_a_capture_refuses_has_a_sample_here() -> None:
    refusing = {kind.name for kind in SECRET_KINDS if kind.refuses_capture}

    assert refusing == {kind for kind, _, _ in SECRETS}


@pytest.mark.parametrize(("text", "shown"), OUTPUT_ONLY)
def test_the_prose_shaped_kinds_are_masked_in_output_but_never_drop_a_capture(
    text: str, shown: str
) -> None:
    assert shown in mask_key_shapes(text)
    assert find_secret(text) is None
    assert mask_secrets(text) == text


def test_a_masked_prefix_keeps_the_name_of_what_was_masked() -> None:
    text = "Authorization: Bearer sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz and api_key=AIzaSyA12345678901"

    assert mask_key_shapes(text) == "Authorization: Bearer *** and api_key=***"
