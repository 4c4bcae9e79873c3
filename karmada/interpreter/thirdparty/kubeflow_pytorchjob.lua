-- target: kubeflow.org/v1 PyTorchJob
local SPECS = "pytorchReplicaSpecs"

function InterpretHealth(observedObj)
  local conditions = (observedObj.status or {}).conditions
  if conditions == nil or #conditions == 0 then
    return false
  end
  return not hasCondition(observedObj, "Failed")
end

function ReflectStatus(observedObj)
  return pick(observedObj, {"conditions", "replicaStatuses", "startTime", "completionTime", "lastReconcileTime"}, false)
end

function GetDependencies(desiredObj)
  local found, seen = {}, {}
  for _, replicaSpec in pairs(desiredObj.spec[SPECS] or {}) do
    if replicaSpec.template ~= nil then
      for _, ref in ipairs(kube.getPodDependencies(replicaSpec.template, desiredObj.metadata.namespace)) do
        local key = ref.kind .. "/" .. ref.name
        if not seen[key] then
          seen[key] = true
          found[#found + 1] = ref
        end
      end
    end
  end
  return found
end
