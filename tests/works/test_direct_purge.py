"""purgeMode Directly's bookkeeping as a table: which clusters hold the sync, which
purges start and which are confirmed, from what the binding controller saw."""

from __future__ import annotations

import pytest

from karmada.works import PurgeProgress, created_message, pending_message, purge_progress, purged_message


def progress(waiting: set[str], started: set[str], confirmed: set[str]) -> PurgeProgress:
    return PurgeProgress(frozenset(waiting), frozenset(started), frozenset(confirmed))


@pytest.mark.parametrize(
    ("directly", "with_works", "seen", "expected"),
    [
        ({"m1"}, ["m1", "m2"], set(), progress({"m1"}, {"m1"}, set())),  # first look: the purge starts
        ({"m1"}, ["m1"], {"m1"}, progress({"m1"}, set(), set())),  # still there: nothing new to say
        ({"m1"}, ["m2"], {"m1"}, progress(set(), set(), {"m1"})),  # its Work gone: confirmed
        ({"m1"}, [], set(), progress(set(), set(), set())),  # gone before we looked (a restart): nothing to confirm
        ({"m1", "m3"}, ["m3"], {"m1", "m3"}, progress({"m3"}, set(), {"m1"})),  # one of two confirmed, one waits
        (set(), ["m1"], {"m1"}, progress(set(), set(), set())),  # the task went: neither waiting nor confirmed
        ({"m1"}, ["m2", "m3"], set(), progress(set(), set(), set())),  # other clusters' Works do not hold it
    ],
)
def test_purge_progress(directly: set[str], with_works: list[str], seen: set[str], expected: PurgeProgress) -> None:
    assert purge_progress(directly, with_works, seen) == expected


def test_messages_name_the_clusters_and_times() -> None:
    when = "2026-12-02T12:00:00.123456Z"
    assert pending_message("ResourceBinding(default/a)", {"m3", "m1"}, when) == (
        "There are works in clusters with PurgeMode 'Directly' not deleted for ResourceBinding(default/a) "
        "(m1, m3), skip syncing works until they are gone (since 2026-12-02T12:00:00.123456Z)."
    )
    assert purged_message("m1", when) == (
        "Purge workload from cluster m1 succeed: its work and member objects are confirmed gone at "
        "2026-12-02T12:00:00.123456Z."
    )
    assert created_message("karmada-es-m2", "a-687f7fb96f", "m2", when, {"m1"}) == (
        "Create work karmada-es-m2/a-687f7fb96f for cluster m2 succeed at 2026-12-02T12:00:00.123456Z, "
        "after the workload was purged from m1 (purgeMode Directly)."
    )
