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


local STATUS = {"clusterInfo", "error", "jobManagerDeploymentStatus", "jobStatus", "observedGeneration",
  "lifecycleState", "reconciliationStatus", "taskManager"}

local function number(value, default)
  return tonumber(value) or default
end

local function managers(obj)
  local spec = obj.spec or {}
  local jm, tm = spec.jobManager or {}, spec.taskManager or {}
  local taskManagers = number(tm.replicas, nil)
  if taskManagers == nil then
    -- enough task managers for the job's parallelism at the configured slots each
    local parallelism = number((spec.job or {}).parallelism, nil)
    local slots = number((spec.flinkConfiguration or {})["taskmanager.numberOfTaskSlots"], nil)
    if parallelism == nil or slots == nil or slots == 0 then
      taskManagers = 1
    else
      taskManagers = math.ceil(parallelism / slots)
    end
  end
  return number(jm.replicas, 1), taskManagers, jm.resource or {}, tm.resource or {}, (spec.podTemplate or {}).spec
end

-- both managers' pods in one requirement: the larger cpu and memory, the shared pod template's placement
function GetReplicas(observedObj)
  local jmReplicas, tmReplicas, jm, tm, podSpec = managers(observedObj)
  local requires = {resourceRequest = {}, nodeClaim = {}}
  if tm.cpu ~= nil and jm.cpu ~= nil then
    requires.resourceRequest.cpu = math.max(tm.cpu, jm.cpu)
  else
    requires.resourceRequest.cpu = tm.cpu or jm.cpu
  end
  if jm.memory ~= nil and tm.memory ~= nil then
    if kube.getResourceQuantity(jm.memory) > kube.getResourceQuantity(tm.memory) then
      requires.resourceRequest.memory = jm.memory
    else
      requires.resourceRequest.memory = tm.memory
    end
  else
    requires.resourceRequest.memory = jm.memory or tm.memory
  end
  if podSpec ~= nil then
    requires.nodeClaim.nodeSelector = podSpec.nodeSelector
    requires.nodeClaim.tolerations = podSpec.tolerations
    if (podSpec.priorityClassName or "") ~= "" then
      requires.priorityClassName = podSpec.priorityClassName
    end
  end
  local namespace = (observedObj.metadata or {}).namespace
  if (namespace or "") ~= "" then
    requires.namespace = namespace
  end
  return jmReplicas + tmReplicas, requires
end

local function managerRequirements(resource, podSpec)
  local requires = {resourceRequest = {}}
  requires.resourceRequest.cpu = resource.cpu
  if resource.memory ~= nil then
    requires.resourceRequest.memory = kube.getResourceQuantity(resource.memory)
  end
  if podSpec ~= nil then
    if podSpec.nodeSelector ~= nil or podSpec.tolerations ~= nil then
      requires.nodeClaim = {nodeSelector = podSpec.nodeSelector, tolerations = podSpec.tolerations}
    end
    if (podSpec.priorityClassName or "") ~= "" then
      requires.priorityClassName = podSpec.priorityClassName
    end
  end
  return requires
end

function GetComponents(observedObj)
  local jmReplicas, tmReplicas, jm, tm, podSpec = managers(observedObj)
  return {
    {name = "jobmanager", replicas = jmReplicas, replicaRequirements = managerRequirements(jm, podSpec)},
    {name = "taskmanager", replicas = tmReplicas, replicaRequirements = managerRequirements(tm, podSpec)},
  }
end

function ReflectStatus(observedObj)
  return pick(observedObj, STATUS, false)
end

-- a Flink job runs in one cluster at a time: the template shows the last member's report
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    return desiredObj
  end
  desiredObj.status = desiredObj.status or {}
  local last = {jobStatus = {}, clusterInfo = {}, reconciliationStatus = {}, taskManager = {}, error = "",
    jobManagerDeploymentStatus = "", lifecycleState = "", observedGeneration = 0}
  for _, item in ipairs(statusItems) do
    if item.status ~= nil then
      last = {}
      for _, f in ipairs(STATUS) do last[f] = item.status[f] end
    end
  end
  for _, f in ipairs(STATUS) do desiredObj.status[f] = last[f] end
  return desiredObj
end
