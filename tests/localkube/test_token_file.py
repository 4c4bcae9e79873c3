"""kube-apiserver's static token CSV, as ``--token-auth-file`` reads it."""

from __future__ import annotations

import pytest

from localkube.token_file import StaticToken, TokenFileError, parse_token_csv


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("t1,alice,u1\n", {"t1": StaticToken("alice", "u1", [])}),
        ('t1,alice,u1,"dev,ops"\n', {"t1": StaticToken("alice", "u1", ["dev", "ops"])}),
        ("t1,alice,u1,dev\n", {"t1": StaticToken("alice", "u1", ["dev"])}),
        ('t1,alice,u1,"dev, ops",ignored\n', {"t1": StaticToken("alice", "u1", ["dev", "ops"])}),
        ('t1,alice,u1,""\n', {"t1": StaticToken("alice", "u1", [])}),
        ("t1,alice,\n", {"t1": StaticToken("alice", "", [])}),
        ('"t,1","bob ""b""",u2\n', {"t,1": StaticToken('bob "b"', "u2", [])}),
        ("\n t1 , alice , u1 \n\n", {"t1": StaticToken("alice", "u1", [])}),
        ("t1,alice,u1\r\nt2,bob,u2\r\n", {"t1": StaticToken("alice", "u1"), "t2": StaticToken("bob", "u2")}),
        ("t1,alice,u1\nt1,bob,u2\n", {"t1": StaticToken("bob", "u2", [])}),
        ("", {}),
    ],
    ids=[
        "three columns",
        "quoted groups",
        "one group",
        "spaces and extra columns",
        "empty groups",
        "empty uid",
        "quoted token and user",
        "blank lines and spaces",
        "CRLF",
        "the last record of a token wins",
        "empty file",
    ],
)
def test_token_file_records(text: str, expected: dict[str, StaticToken]) -> None:
    assert parse_token_csv(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("t1,alice\n", "line 1: needs at least 3 columns (token, user name, user uid), found 2"),
        ("t1,alice,u1\n\nt2\n", "line 3: needs at least 3 columns (token, user name, user uid), found 1"),
        (",alice,u1\n", "line 1: the token (column 1) is empty"),
        ("t1,alice,u1\nt2,,u2\n", "line 2: the user name (column 2) is empty"),
        ('t1,alice,u1\nt2,"bob,u2\n', "line 2: not CSV"),
        ('t1,alice,u1\nt2,"bob"x,u2\n', "line 2: not CSV"),
    ],
    ids=["two columns", "one column", "empty token", "empty user", "open quote", "text after a quote"],
)
def test_bad_token_file_lines_are_named(text: str, message: str) -> None:
    with pytest.raises(TokenFileError) as error:
        parse_token_csv(text)
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_a_bad_line_never_quotes_its_token() -> None:
    with pytest.raises(TokenFileError) as error:
        parse_token_csv("s3cr3t-token,\n")
    assert "s3cr3t" not in str(error.value)
