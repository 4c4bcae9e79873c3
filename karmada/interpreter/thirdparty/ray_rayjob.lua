-- target: ray.io/v1 RayJob
function GetComponents(desiredObj)
  return rayComponents((desiredObj.spec or {}).rayClusterSpec)
end

function InterpretHealth(observedObj)
  local status = observedObj.status
  if status == nil then
    return false
  end
  if status.jobDeploymentStatus == "Running" then
    return true
  end
  return status.jobDeploymentStatus == "Complete" and status.jobStatus == "SUCCEEDED"
end

function ReflectStatus(observedObj)
  return pick(observedObj, {"jobId", "jobStatus", "jobDeploymentStatus", "rayClusterName", "dashboardURL",
    "startTime", "endTime", "failed", "succeeded", "message", "reason", "rayClusterStatus", "observedGeneration"}, false)
end


-- how bad each state is: the aggregate shows the worst member's
local DEPLOYMENT_RANK = {[""] = 0, Initializing = 1, Waiting = 2, Suspending = 3, Suspended = 3, Retrying = 4,
  Running = 5, Complete = 6, ValidationFailed = 7, Failed = 8}
local JOB_RANK = {[""] = 0, PENDING = 1, RUNNING = 2, SUCCEEDED = 3, STOPPED = 4, FAILED = 5}

function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    return desiredObj
  end
  desiredObj.spec = nil  -- only the status is written back
  if #statusItems == 1 then
    desiredObj.status = statusItems[1].status or {}
    return desiredObj
  end
  local status = desiredObj.status or {}
  local worstDeployment, worstJob = -1, -1
  local deployment, job, reason, message
  for _, item in ipairs(statusItems) do
    local s = item.status
    if s ~= nil then
      if s.jobDeploymentStatus ~= nil and (DEPLOYMENT_RANK[s.jobDeploymentStatus] or 0) > worstDeployment then
        worstDeployment = DEPLOYMENT_RANK[s.jobDeploymentStatus] or 0
        deployment, reason, message = s.jobDeploymentStatus, s.reason, s.message
      end
      if (s.jobStatus or "") ~= "" and (JOB_RANK[s.jobStatus] or 0) > worstJob then
        worstJob = JOB_RANK[s.jobStatus] or 0
        job = s.jobStatus
      end
    end
  end
  status.jobStatus = job
  status.jobDeploymentStatus = deployment
  status.reason = reason
  status.message = message
  desiredObj.status = status
  return desiredObj
end

-- what the cluster's head and workers and the job's submitter pod reference
function GetDependencies(desiredObj)
  local spec = desiredObj.spec or {}
  local cluster = spec.rayClusterSpec or {}
  local templates = {}
  if cluster.headGroupSpec ~= nil then templates[#templates + 1] = cluster.headGroupSpec.template end
  for _, group in ipairs(cluster.workerGroupSpecs or {}) do templates[#templates + 1] = group.template end
  templates[#templates + 1] = spec.submitterPodTemplate
  return templatesDependencies(desiredObj, templates)
end
