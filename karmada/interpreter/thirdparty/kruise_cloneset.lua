-- target: apps.kruise.io/v1alpha1 CloneSet
local COUNTERS = {"replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "updatedReadyReplicas",
  "expectedUpdatedReplicas"}
local STRINGS = {"updateRevision", "currentRevision", "labelSelector"}

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
  return sumStatus(desiredObj, statusItems, COUNTERS, STRINGS)
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
  return kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
end
