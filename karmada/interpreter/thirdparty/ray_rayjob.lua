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

