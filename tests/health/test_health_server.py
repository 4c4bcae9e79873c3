"""The probe server shared by the three programs: Karmada's bind-address forms,
the readiness report, and the HTTP answers of /healthz and /readyz."""

from __future__ import annotations

import argparse
import functools
import socket

import aiohttp
import pytest

from karmada.health_server import Health, parse_bind_address, probe_address, serve


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (":10357", (None, 10357)),
        ("0.0.0.0:8000", ("0.0.0.0", 8000)),
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        ("[::1]:10357", ("::1", 10357)),
        (":0", (None, 0)),
        ("0", None),
    ],
)
def test_bind_address_forms(text: str, expected: tuple[str | None, int] | None) -> None:
    assert parse_bind_address(text) == expected


@pytest.mark.parametrize("text", ["10357", "localhost", ":", ":http", ":70000", "host:-1"])
def test_bad_bind_addresses_are_refused_naming_the_flag(text: str) -> None:
    with pytest.raises(ValueError, match="--health-probe-bind-address"):
        parse_bind_address(text)
    with pytest.raises(argparse.ArgumentTypeError):
        probe_address(text)


@pytest.mark.parametrize(
    ("checks", "ok", "lines"),
    [
        ({}, True, ["readyz check passed"]),
        ({"synced": True}, True, ["[+]synced ok", "readyz check passed"]),
        ({"synced": False, "leader": True}, False, ["[-]synced failed", "[+]leader ok", "readyz check failed"]),
    ],
)
def test_readiness_report(checks: dict[str, bool], ok: bool, lines: list[str]) -> None:
    health = Health()
    for name, value in checks.items():
        health.add_readiness(name, functools.partial(bool, value))
    assert health.report() == (ok, "\n".join(lines) + "\n")


def test_a_check_that_raises_fails() -> None:
    health = Health()
    health.add_readiness("broken", lambda: 1 / 0 == 0)
    assert health.failing() == ["broken"]


async def test_healthz_and_readyz_over_http() -> None:
    state = {"ready": False}
    health = Health()
    health.add_readiness("synced", lambda: state["ready"])
    async with serve(health, "127.0.0.1:0", "test") as port, aiohttp.ClientSession() as session:
        assert port
        base = f"http://127.0.0.1:{port}"
        async with session.get(base + "/healthz") as response:
            assert (response.status, await response.text()) == (200, "ok")
        async with session.get(base + "/readyz") as response:
            assert response.status == 500
            assert "[-]synced failed" in await response.text()
        state["ready"] = True
        async with session.get(base + "/readyz") as response:
            assert (response.status, await response.text()) == (200, "ok")
        async with session.get(base + "/readyz?verbose") as response:
            assert "[+]synced ok" in await response.text()


async def test_disabled_serves_nothing() -> None:
    async with serve(Health(), "0", "test") as port:
        assert port is None


async def test_an_address_in_use_is_logged_and_the_program_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        async with serve(Health(), address, "karmada-agent") as port:
            assert port is None
    assert f"karmada-agent: health probes not served: {address} is in use" in caplog.text


def test_a_failing_check_says_why_when_it_has_a_detail() -> None:
    health = Health()
    health.add_readiness("member1", lambda: True, lambda: "never shown")
    health.add_readiness("member2", lambda: False, lambda: "member unreachable")
    health.add_readiness("member3", lambda: False, lambda: "")
    lines = ["[+]member1 ok", "[-]member2 failed: member unreachable", "[-]member3 failed", "readyz check failed"]
    assert health.report() == (False, "\n".join(lines) + "\n")
