-- target: apps.kruise.io/v1beta1 StatefulSet
local COUNTERS = {"replicas", "readyReplicas", "currentReplicas", "updatedReplicas", "availableReplicas",
  "updatedReadyReplicas"}
local STRINGS = {"updateRevision", "currentRevision"}

function GetReplicas(obj)
  return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
end

function ReviseReplica(obj, desiredReplica)
  obj.spec.replicas = desiredReplica
  return obj
end

function ReflectStatus(observedObj)
  local fields = {"observedGeneration"}
  for _, f in ipairs(COUNTERS) do fields[#fields + 1] = f end
  for _, f in ipairs(STRINGS) do fields[#fields + 1] = f end
  return pick(observedObj, fields, true)
end

function AggregateStatus(desiredObj, statusItems)
  return sumStatus(desiredObj, statusItems, COUNTERS, STRINGS, STRINGS)
end

function InterpretHealth(observedObj)
  local status = observedObj.status
  if status.observedGeneration ~= observedObj.metadata.generation then
    return false
  end
  if observedObj.spec.replicas ~= nil and status.updatedReplicas < observedObj.spec.replicas then
    return false
  end
  return status.availableReplicas >= status.updatedReplicas
end

function GetDependencies(desiredObj)
  local found = kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
  -- claims its volumeClaimTemplates create are not dependencies
  local templates = {}
  for _, t in ipairs(desiredObj.spec.volumeClaimTemplates or {}) do
    if t.metadata ~= nil and t.metadata.name ~= nil then templates[t.metadata.name] = true end
  end
  local out = {}
  for _, ref in ipairs(found) do
    if not (ref.kind == "PersistentVolumeClaim" and templates[ref.name]) then out[#out + 1] = ref end
  end
  return out
end
