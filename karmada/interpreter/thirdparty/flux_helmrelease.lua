-- target: helm.toolkit.fluxcd.io/v2beta1 HelmRelease
local STRINGS = {"lastAttemptedRevision", "lastAppliedRevision", "lastAttemptedValuesChecksum", "helmChart"}
local COUNTERS = {"failures", "upgradeFailures", "installFailures"}

function InterpretHealth(observedObj)
  for _, c in ipairs((observedObj.status or {}).conditions or {}) do
    if c.type == "Ready" and c.status == "True" and c.reason == "ReconciliationSucceeded" then
      return true
    end
  end
  return false
end

function Retain(desiredObj, observedObj)
  if observedObj.spec.suspend ~= nil then
    desiredObj.spec.suspend = observedObj.spec.suspend
  end
  return desiredObj
end

function ReflectStatus(observedObj)
  local fields = {"conditions", "observedGeneration", "lastReleaseRevision"}
  for _, f in ipairs(STRINGS) do fields[#fields + 1] = f end
  for _, f in ipairs(COUNTERS) do fields[#fields + 1] = f end
  return pick(observedObj, fields, true)
end

function GetDependencies(desiredObj)
  local spec = desiredObj.spec
  local secrets, accounts, configs = {}, {}, {}
  for _, source in ipairs(spec.valuesFrom or {}) do
    if source.kind == "Secret" then secrets[source.name] = true end
    if source.kind == "ConfigMap" then configs[source.name] = true end
  end
  local chart = (spec.chart or {}).spec or {}
  if chart.verify ~= nil and chart.verify.secretRef ~= nil and (chart.verify.secretRef.name or "") ~= "" then
    secrets[chart.verify.secretRef.name] = true
  end
  if spec.kubeConfig ~= nil and spec.kubeConfig.secretRef ~= nil and (spec.kubeConfig.secretRef.name or "") ~= "" then
    secrets[spec.kubeConfig.secretRef.name] = true
  end
  if (spec.serviceAccountName or "") ~= "" then accounts[spec.serviceAccountName] = true end
  return refs(desiredObj, {{kind = "Secret", names = secrets}, {kind = "ServiceAccount", names = accounts},
    {kind = "ConfigMap", names = configs}})
end
