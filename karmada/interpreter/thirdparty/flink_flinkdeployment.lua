-- target: flink.apache.org/v1beta1 FlinkDeployment
-- errors that leave a starting job healthy: rescheduling elsewhere would not fix them
local USER_ERRORS = {"ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff"}
local SETTLED = {RUNNING = true, FINISHED = true, FAILED = true, CANCELED = true, SUSPENDED = true,
  CANCELLING = true, FAILING = true, RESTARTING = true}
local STARTING = {CREATED = true, INITIALIZING = true, RECONCILING = true}

function InterpretHealth(observedObj)
  local status = observedObj.status or {}
  local state = (status.jobStatus or {}).state
  if state == nil then
    return status.jobManagerDeploymentStatus == "READY" and status.lifecycleState == "STABLE"
  end
  if SETTLED[state] then
    return true
  end
  if STARTING[state] and status.error ~= nil and status.error ~= "" then
    for _, e in ipairs(USER_ERRORS) do
      if string.find(status.error, e, 1, true) then return true end
    end
  end
  return false
end

