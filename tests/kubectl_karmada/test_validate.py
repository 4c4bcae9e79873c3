"""``kubectl karmada validate`` with karmada-webhook's rules, offline, through the real kubectl."""

from __future__ import annotations

from tests.programs import kubectl, run

HEADER = """\
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: p, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: nginx}]
"""

CASES = {
    "both affinities": (
        HEADER + "  placement:\n    clusterAffinity: {clusterNames: [m1]}\n"
        "    clusterAffinities: [{affinityName: a, clusterNames: [m1]}]\n",
        "error: -: PropagationPolicy/p: spec.placement: Invalid value: ",
        "clusterAffinities cannot co-exist with clusterAffinity",
    ),
    "region without cluster": (
        HEADER + "  placement:\n    spreadConstraints: [{spreadByField: region, maxGroups: 2}]\n",
        "error: -: PropagationPolicy/p: spec.placement.spreadConstraints: Invalid value: "
        '[{"maxGroups":2,"minGroups":1,"spreadByField":"region"}]: ',
        "the cluster spread constraint must be enabled in one of the constraints in case of SpreadByField is enabled",
    ),
    "unknown field selector key": (
        HEADER + "  placement:\n    clusterAffinity:\n      fieldSelector:\n"
        "        matchExpressions: [{key: foo, operator: In, values: [x]}]\n",
        "error: -: PropagationPolicy/p: spec.placement.clusterAffinity.fieldSelector: Invalid value: ",
        'unsupported key "foo", must be provider, region, or zone',
    ),
}


def test_the_webhook_rules_refuse_what_karmada_refuses() -> None:
    for name, (document, start, sentence) in CASES.items():
        result = run([kubectl(), "karmada", "validate", "-f", "-"], stdin=document)
        assert result.returncode == 1, name
        line = result.stderr.strip()
        assert line.startswith(start) and line.endswith(sentence), (name, line)


def test_the_webhook_defaults_apply_before_the_rules() -> None:
    # no namespace on the selector, no spreadByField, no gracePeriodSeconds: the mutating webhook fills them
    good = HEADER + (
        "  propagateDeps: true\n"
        "  placement:\n    spreadConstraints: [{maxGroups: 2}]\n"
        "  failover:\n    application:\n      decisionConditions: {tolerationSeconds: 30}\n"
    )
    result = run([kubectl(), "karmada", "validate", "-f", "-"], stdin=good)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "-: PropagationPolicy/p valid"


def test_lua_scripts_must_compile_and_customizations_must_not_conflict() -> None:
    customization = """\
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata: {{name: {name}}}
spec:
  target: {{apiVersion: apps.example/v1, kind: Workload}}
  customizations:
    retention:
      luaScript: |
        {script}
"""
    broken = customization.format(name="broken", script="function Retain(desired, observed) return desired")
    result = run([kubectl(), "karmada", "validate", "-f", "-"], stdin=broken)
    assert result.returncode == 1
    assert "error: -: ResourceInterpreterCustomization/broken: InterpreterOperation(Retain) Lua script error: " in (
        result.stderr
    )
    good = "function Retain(desired, observed) return desired end"
    both = customization.format(name="a", script=good) + "---\n" + customization.format(name="b", script=good)
    result = run([kubectl(), "karmada", "validate", "-f", "-"], stdin=both)
    assert result.returncode == 1
    assert (
        "error: -: ResourceInterpreterCustomization/a: conflicting with InterpreterOperation(Retain) of existing "
        "ResourceInterpreterCustomization(b)"
    ) in result.stderr
