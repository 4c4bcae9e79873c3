-- target: kustomize.toolkit.fluxcd.io/v1 Kustomization
local STRINGS = {"lastAppliedRevision", "lastAttemptedRevision"}

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
  return pick(observedObj, {"conditions", "lastAppliedRevision", "lastAttemptedRevision", "observedGeneration"}, true)
end

function AggregateStatus(desiredObj, statusItems)
  prepare(desiredObj)
  if statusItems == nil then
    desiredObj.status.observedGeneration = desiredObj.metadata.generation
    for _, f in ipairs(STRINGS) do desiredObj.status[f] = "" end
    desiredObj.status.conditions = {}
    return desiredObj
  end
  for _, item in ipairs(statusItems) do
    local s = statusOf(item)
    for _, f in ipairs(STRINGS) do
      if s[f] ~= nil and s[f] ~= "" then desiredObj.status[f] = s[f] end
    end
  end
  desiredObj.status.conditions = mergeConditions(statusItems)
  desiredObj.status.observedGeneration = aggregatedGeneration(desiredObj, statusItems)
  return desiredObj
end

function GetDependencies(desiredObj)
  local spec = desiredObj.spec
  local secrets, accounts = {}, {}
  if spec.decryption ~= nil and spec.decryption.secretRef ~= nil and (spec.decryption.secretRef.name or "") ~= "" then
    secrets[spec.decryption.secretRef.name] = true
  end
  if spec.kubeConfig ~= nil and spec.kubeConfig.secretRef ~= nil and (spec.kubeConfig.secretRef.name or "") ~= "" then
    secrets[spec.kubeConfig.secretRef.name] = true
  end
  if (spec.serviceAccountName or "") ~= "" then accounts[spec.serviceAccountName] = true end
  return refs(desiredObj, {{kind = "Secret", names = secrets}, {kind = "ServiceAccount", names = accounts}})
end
