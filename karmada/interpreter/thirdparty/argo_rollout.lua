-- target: argoproj.io/v1alpha1 Rollout
local COUNTERS = {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"}
local STRINGS = {"currentPodHash", "stableRS", "phase", "selector"}

function GetReplicas(obj)
  local replicas = obj.spec.replicas
  if replicas == nil then replicas = 1 end
  local template = obj.spec.template or {}
  return replicas, kube.accuratePodRequirements(template)
end

function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end

function ReflectStatus(observedObj)
  local fields = {"observedGeneration", "conditions", "message"}
  for _, f in ipairs(COUNTERS) do fields[#fields + 1] = f end
  for _, f in ipairs(STRINGS) do fields[#fields + 1] = f end
  local status = pick(observedObj, fields, true)
  -- Argo writes observedGeneration as a string; the aggregation compares numbers
  status.observedGeneration = tonumber(status.observedGeneration) or status.observedGeneration
  return status
end

function AggregateStatus(desiredObj, statusItems)
  return sumStatus(desiredObj, statusItems, COUNTERS, STRINGS)
end

-- the controller has seen the spec and the rollout is not degraded; a paused canary is where its
-- owner wants it; otherwise every desired replica runs the new revision and is available
function InterpretHealth(observedObj)
  local status = observedObj.status
  if status == nil then
    return false
  end
  if status.observedGeneration ~= nil and tostring(status.observedGeneration) ~= tostring(observedObj.metadata.generation) then
    return false
  end
  if status.phase == "Degraded" then
    return false
  end
  if status.phase == "Paused" then
    return true
  end
  local desired = observedObj.spec.replicas
  if desired == nil then desired = 1 end
  return (status.updatedReplicas or 0) >= desired and (status.availableReplicas or 0) >= desired
end

function GetDependencies(desiredObj)
  if desiredObj.spec.template == nil then
    return {}
  end
  return kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
end
