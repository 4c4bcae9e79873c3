"""Kubernetes wire timestamps: ``Time`` (RFC 3339 seconds, ``Z``) and
``MicroTime`` (six fractional digits, ``Z``); the server rejects other forms."""

from __future__ import annotations

import datetime


def utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def format_time(when: datetime.datetime) -> str:
    """A ``metav1.Time``."""
    return when.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(when: datetime.datetime) -> str:
    """A ``metav1.MicroTime``."""
    return when.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def now_time() -> str:
    return format_time(utcnow())


def parse_time(value: str) -> datetime.datetime:
    """Either form back to an aware datetime."""
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
