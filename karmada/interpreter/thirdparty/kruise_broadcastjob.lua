-- target: apps.kruise.io/v1alpha1 BroadcastJob
function GetReplicas(obj)
  return obj.spec.parallelism or 1, kube.accuratePodRequirements(obj.spec.template)
end

function ReviseReplica(obj, replica)
  obj.spec.parallelism = replica
  return obj
end

function Retain(desiredObj, observedObj)
  -- the controller labels the pod template; keep what it set
  local meta = observedObj.spec.template.metadata
  if meta ~= nil and meta.labels ~= nil then
    desiredObj.spec.template.metadata.labels = meta.labels
  end
  return desiredObj
end

function ReflectStatus(observedObj)
  return pick(observedObj, {"conditions", "startTime", "completionTime", "active", "succeeded", "failed",
    "desired", "phase"}, false)
end

function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    return desiredObj
  end
  desiredObj.status = desiredObj.status or {}
  local totals = {active = 0, succeeded = 0, failed = 0, desired = 0}
  local phase, completed, failedIn = "", 0, {}
  for _, item in ipairs(statusItems) do
    local s = statusOf(item)
    for f in pairs(totals) do
      if s[f] ~= nil then totals[f] = totals[f] + s[f] end
    end
    if s.phase ~= nil then phase = s.phase end
    local outcome = ""
    for _, c in ipairs(s.conditions or {}) do
      if (c.type == "Complete" or c.type == "Failed") and c.status == "True" then
        outcome = c.type
        break
      end
    end
    if outcome == "Complete" then completed = completed + 1 end
    if outcome == "Failed" then failedIn[#failedIn + 1] = item.clusterName end
  end
  local conditions = {}
  if #failedIn > 0 then
    conditions[#conditions + 1] = {type = "Failed", status = "True", reason = "JobFailed",
      message = "Job executed failed in member clusters: " .. table.concat(failedIn, ", ")}
  end
  if completed > 0 and completed == #statusItems then
    conditions[#conditions + 1] = {type = "Completed", status = "True", reason = "Completed", message = "Job completed"}
  end
  for f, v in pairs(totals) do desiredObj.status[f] = v end
  desiredObj.status.phase = phase
  desiredObj.status.conditions = conditions
  return desiredObj
end

function InterpretHealth(observedObj)
  local s = observedObj.status
  if s.desired == 0 or s.failed ~= 0 then
    return false
  end
  return not (s.succeeded == 0 and s.active == 0)
end

function GetDependencies(desiredObj)
  return kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
end
