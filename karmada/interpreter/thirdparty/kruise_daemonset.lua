-- target: apps.kruise.io/v1alpha1 DaemonSet
local COUNTERS = {"currentNumberScheduled", "numberMisscheduled", "desiredNumberScheduled", "numberReady",
  "updatedNumberScheduled", "numberAvailable", "numberUnavailable"}

function ReflectStatus(observedObj)
  local fields = {"observedGeneration", "daemonSetHash"}
  for _, f in ipairs(COUNTERS) do fields[#fields + 1] = f end
  return pick(observedObj, fields, true)
end

function AggregateStatus(desiredObj, statusItems)
  local result = sumStatus(desiredObj, statusItems, COUNTERS, {"daemonSetHash"})
  if statusItems == nil then
    result.status.daemonSetHash = 0
  end
  return result
end

function InterpretHealth(observedObj)
  local status = observedObj.status
  if status.observedGeneration ~= observedObj.metadata.generation then
    return false
  end
  if status.updatedNumberScheduled < status.desiredNumberScheduled then
    return false
  end
  return status.numberAvailable >= status.updatedNumberScheduled
end

function GetDependencies(desiredObj)
  return kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
end
