"""How long ago an agent's Lease was renewed, as the agent approver judges it before letting a
bootstrap token register a cluster again (:func:`controlplane.agent_approver.lease_age`): on the
API server's clock (managedFields times) where the Lease carries it, not the agent's."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from controlplane.agent_approver import lease_age

NOW = datetime.datetime(2026, 12, 2, 12, 0, 0, tzinfo=datetime.UTC)


RENEW_FIELDS: dict[str, Any] = {"f:spec": {"f:holderIdentity": {}, "f:renewTime": {}}}
LABEL_FIELDS: dict[str, Any] = {"f:metadata": {"f:labels": {"f:x": {}}}}


def lease(renew: str | None, *times: str, fields: dict[str, Any] | None = None) -> dict[str, Any]:
    owned = RENEW_FIELDS if fields is None else fields
    entries = [{"manager": "karmada-agent", "operation": "Update", "time": t, "fieldsV1": owned} for t in times]
    return {"metadata": {"managedFields": entries}, "spec": {} if renew is None else {"renewTime": renew}}


def two_managers(renew: str, agent: str, admin: str) -> dict[str, Any]:
    found = lease(renew, agent)
    found["metadata"]["managedFields"] += lease(renew, admin, fields=LABEL_FIELDS)["metadata"]["managedFields"]
    return found


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (lease(None, "2026-12-02T11:59:00Z"), None),  # never renewed
        (lease("2026-12-02T11:59:50.000000Z"), 10.0),  # no managedFields: the agent's stamp
        # the agent's clock an hour behind: the server wrote it 3 s ago, so it is live
        (lease("2026-12-02T10:59:57.000000Z", "2026-12-02T11:59:57Z"), 3.0),
        # the agent's clock an hour ahead: still the server's time
        (lease("2026-12-02T12:59:57.000000Z", "2026-12-02T11:59:40Z"), 20.0),
        # the newest of several entries
        (lease("2026-12-02T11:00:00.000000Z", "2026-12-02T11:00:00Z", "2026-12-02T11:59:58Z"), 2.0),
        (lease("2026-12-02T12:00:05.000000Z"), 0.0),  # never negative
        ({"spec": {"renewTime": "2026-12-02T11:59:30.000000Z"}}, 30.0),  # no metadata at all
        # an administrator labelled the Lease a second ago: its entry does not own renewTime
        (two_managers("2026-12-02T11:00:00.000000Z", "2026-12-02T11:00:00Z", "2026-12-02T11:59:59Z"), 3600.0),
        # only entries that do not own renewTime: the agent's own stamp
        (lease("2026-12-02T11:59:00.000000Z", "2026-12-02T11:59:59Z", fields=LABEL_FIELDS), 60.0),
        # an unparsable time is skipped, not a crash
        (lease("2026-12-02T11:59:00.000000Z", "yesterday"), 60.0),
        (lease("not a time"), None),
    ],
)
def test_lease_age(obj: dict[str, Any], expected: float | None) -> None:
    assert lease_age(obj, NOW) == expected
