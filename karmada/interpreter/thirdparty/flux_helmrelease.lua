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

function AggregateStatus(desiredObj, statusItems)
  prepare(desiredObj)
  local status = desiredObj.status
  if statusItems == nil then
    status.observedGeneration = desiredObj.metadata.generation
    for _, f in ipairs(STRINGS) do status[f] = "" end
    status.lastReleaseRevision = ""
    for _, f in ipairs(COUNTERS) do status[f] = 0 end
    status.conditions = {}
    return desiredObj
  end
  -- counters go on from what the template shows; revisions from the last member reporting one
  for _, item in ipairs(statusItems) do
    local s = statusOf(item)
    for _, f in ipairs(STRINGS) do
      if s[f] ~= nil and s[f] ~= "" then status[f] = s[f] end
    end
    if s.lastReleaseRevision ~= nil then status.lastReleaseRevision = s.lastReleaseRevision end
    for _, f in ipairs(COUNTERS) do
      if s[f] ~= nil then status[f] = (status[f] or 0) + s[f] end
    end
  end
  status.conditions = mergeConditions(statusItems)
  status.observedGeneration = aggregatedGeneration(desiredObj, statusItems)
  return desiredObj
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
