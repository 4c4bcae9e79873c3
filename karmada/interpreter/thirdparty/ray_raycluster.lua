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

local WORKER_COUNTERS = {"readyWorkerReplicas", "availableWorkerReplicas", "maxWorkerReplicas", "minWorkerReplicas",
  "desiredWorkerReplicas"}

-- one member's status as it is; several: workers and resources summed, conditions of all,
-- the head and endpoints of the first member that has them, the latest update time
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    return desiredObj
  end
  desiredObj.spec = nil  -- only the status is written back
  if #statusItems == 1 then
    desiredObj.status = statusItems[1].status or {}
    return desiredObj
  end
  local status = {conditions = {}, desiredCPU = "0", desiredMemory = "0"}
  for _, f in ipairs(WORKER_COUNTERS) do status[f] = 0 end
  local gpu, tpu = 0, 0
  for _, item in ipairs(statusItems) do
    local s = item.status
    if s ~= nil then
      for _, c in ipairs(s.conditions or {}) do status.conditions[#status.conditions + 1] = c end
      for _, f in ipairs(WORKER_COUNTERS) do status[f] = status[f] + (s[f] or 0) end
      if (s.desiredCPU or "") ~= "" then status.desiredCPU = kube.resourceAdd(status.desiredCPU, s.desiredCPU) end
      if (s.desiredMemory or "") ~= "" then
        status.desiredMemory = kube.resourceAdd(status.desiredMemory, s.desiredMemory)
      end
      if (s.desiredGPU or "") ~= "" then gpu = gpu + tonumber(s.desiredGPU) end
      if (s.desiredTPU or "") ~= "" then tpu = tpu + tonumber(s.desiredTPU) end
      if s.lastUpdateTime ~= nil and (status.lastUpdateTime == nil or s.lastUpdateTime > status.lastUpdateTime) then
        status.lastUpdateTime = s.lastUpdateTime
      end
      if status.endpoints == nil then status.endpoints = s.endpoints end
      if status.head == nil then status.head = s.head end
      if status.state == nil and s.state ~= nil then
        status.state = s.state
        status.stateTransitionTimes = s.stateTransitionTimes
      end
    end
  end
  status.desiredGPU = tostring(gpu)
  status.desiredTPU = tostring(tpu)
  desiredObj.status = status
  return desiredObj
end
