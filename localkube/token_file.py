"""kube-apiserver's static token file (``--token-auth-file``): a CSV of
``token,user,uid[,"group1,group2"]``, read once at the start.

As kube-apiserver reads it: a record needs at least three columns, the fourth
(quoted when it holds several groups) is split on commas, further columns are
ignored, blank lines are skipped, and a token listed twice means its last
record. Stricter than kube-apiserver, which skips them with a warning: a record
with an empty token or user is an error naming its line, so that a typo never
silently leaves a user without access. Pure parsing; messages never quote a
token.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field


class TokenFileError(ValueError):
    """A token file localkube cannot use; the message names the line."""


@dataclass(frozen=True)
class StaticToken:
    """Who a static token proves."""

    user: str
    uid: str
    groups: list[str] = field(default_factory=list)


def parse_token_csv(text: str) -> dict[str, StaticToken]:
    """The tokens of a token file's ``text``, by token."""
    tokens: dict[str, StaticToken] = {}
    lines = text.splitlines()
    reader = csv.reader(lines, strict=True)
    try:
        for record in reader:
            line = reader.line_num
            if not record or all(not column.strip() for column in record):
                continue
            if len(record) < 3:
                raise TokenFileError(
                    f"line {line}: needs at least 3 columns (token, user name, user uid), found {len(record)}"
                )
            token, user, uid = record[0].strip(), record[1].strip(), record[2].strip()
            if not token:
                raise TokenFileError(f"line {line}: the token (column 1) is empty")
            if not user:
                raise TokenFileError(f"line {line}: the user name (column 2) is empty")
            groups = [group.strip() for group in record[3].split(",")] if len(record) > 3 else []
            tokens[token] = StaticToken(user, uid, [group for group in groups if group])
    except csv.Error as exc:
        raise TokenFileError(f"line {reader.line_num}: not CSV ({exc})") from None
    return tokens
