-- target: ray.io/v1 RayCluster

function GetComponents(desiredObj)
  return rayComponents(desiredObj.spec)
end

function InterpretHealth(observedObj)
  return hasCondition(observedObj, "HeadPodReady") and hasCondition(observedObj, "RayClusterProvisioned")
    and not hasCondition(observedObj, "RayClusterReplicaFailure")
end

function ReflectStatus(observedObj)
  return pick(observedObj, {"state", "conditions", "availableWorkerReplicas", "desiredWorkerReplicas",
    "readyWorkerReplicas", "minWorkerReplicas", "maxWorkerReplicas", "desiredCPU", "desiredMemory", "desiredGPU",
    "desiredTPU", "endpoints", "head", "lastUpdateTime", "observedGeneration"}, false)
end

function GetDependencies(desiredObj)
  local spec = desiredObj.spec
  local found, seen = {}, {}
  local templates = {}
  if spec.headGroupSpec ~= nil then templates[#templates + 1] = spec.headGroupSpec.template end
  for _, group in ipairs(spec.workerGroupSpecs or {}) do templates[#templates + 1] = group.template end
  for _, template in ipairs(templates) do
    for _, ref in ipairs(kube.getPodDependencies(template, desiredObj.metadata.namespace)) do
      local key = ref.kind .. "/" .. ref.name
      if not seen[key] then
        seen[key] = true
        found[#found + 1] = ref
      end
    end
  end
  return found
end
