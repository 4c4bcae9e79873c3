-- target: kubeflow.org/v1 PyTorchJob
local SPECS = "pytorchReplicaSpecs"

-- the replica types in the order components are listed (nil: by name), and whether names are lower-cased
local ORDER = {"Master", "Worker"}
-- replicas of a type that does not say (nil: 1 for every type), and whether a type needs a template
local DEFAULTS = nil
local NEEDS_TEMPLATE = false
local LOWER = true

-- one component per replica type (Master, Worker, ...), each with its pod template's needs
function GetComponents(desiredObj)
  local components = {}
  local specs = desiredObj.spec[SPECS] or {}
  local names = ORDER
  if names == nil then
    names = {}
    for name in pairs(specs) do names[#names + 1] = name end
    table.sort(names)
  end
  for _, name in ipairs(names) do
    local replicaSpec = specs[name]
    -- a type the job does not use (or, where required, without a template) is no component
    if replicaSpec ~= nil and not (NEEDS_TEMPLATE and replicaSpec.template == nil) then
      local default = 1
      if DEFAULTS ~= nil then default = DEFAULTS[name] or 0 end
      local requirements = {}
      if replicaSpec.template ~= nil then
        requirements = kube.accuratePodRequirements(replicaSpec.template)
      end
      local componentName = name
      if LOWER then componentName = string.lower(name) end
      components[#components + 1] = {name = componentName, replicas = tonumber(replicaSpec.replicas) or default,
        replicaRequirements = requirements}
    end
  end
  return components
end

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

-- zero counts, empty strings and empty tables are left out of the aggregate, as the operator omits them
local function compact(value)
  if type(value) ~= "table" then
    if value == 0 or value == "" or value == "0s" then return nil end
    return value
  end
  local out, any = {}, false
  for k, v in pairs(value) do
    local kept = compact(v)
    if kept ~= nil then
      out[k] = kept
      any = true
    end
  end
  if any then return out end
  return nil
end

-- the job across members: counts summed, earliest start, latest completion, and one condition per
-- phase that some member reached (failed anywhere beats succeeded everywhere)
function AggregateStatus(desiredObj, statusItems)
  desiredObj.status = desiredObj.status or {}
  if statusItems == nil or #statusItems == 0 then
    desiredObj.status.startTime = nil
    desiredObj.status.completionTime = nil
    desiredObj.status.replicaStatuses = {}
    desiredObj.status.conditions = {}
    return desiredObj
  end
  local replicaStatuses = {Master = {active = 0, failed = 0, succeeded = 0}, Worker = {active = 0, failed = 0, succeeded = 0}}
  local startTime, completionTime, lastReconcileTime
  local succeeded, created, failedIn = 0, 0, {}
  local running, runningUpdate, runningTransition = false, nil, nil
  for _, item in ipairs(statusItems) do
    local s = item.status
    if s ~= nil then
      if s.startTime ~= nil and (startTime == nil or s.startTime < startTime) then startTime = s.startTime end
      if s.completionTime ~= nil and (completionTime == nil or s.completionTime > completionTime) then
        completionTime = s.completionTime
      end
      if s.lastReconcileTime ~= nil and (lastReconcileTime == nil or s.lastReconcileTime > lastReconcileTime) then
        lastReconcileTime = s.lastReconcileTime
      end
      for name, sum in pairs(replicaStatuses) do
        local r = (s.replicaStatuses or {})[name]
        if r ~= nil then
          sum.active = sum.active + (r.active or 0)
          sum.failed = sum.failed + (r.failed or 0)
          sum.succeeded = sum.succeeded + (r.succeeded or 0)
        end
      end
      local hasFailed, hasSucceeded, hasCreated = false, false, false
      for _, c in ipairs(s.conditions or {}) do
        if c.type == "Failed" and c.status == "True" then
          hasFailed = true
        elseif c.type == "Succeeded" and c.status == "True" then
          hasSucceeded = true
        end
        if c.type == "Running" then
          running, runningUpdate, runningTransition = true, c.lastUpdateTime, c.lastTransitionTime
        end
        if c.type == "Created" and c.status == "True" then hasCreated = true end
      end
      if hasFailed then
        failedIn[#failedIn + 1] = item.clusterName
      elseif hasSucceeded then
        succeeded = succeeded + 1
      end
      if hasCreated then created = created + 1 end
    end
  end
  local conditions = {}
  if created > 0 then
    conditions[#conditions + 1] = {type = "Created", status = "True", lastUpdateTime = startTime,
      lastTransitionTime = startTime, reason = "PyTorchJobCreated", message = "PyTorchJob is created."}
  end
  local finished = #failedIn > 0 or succeeded == #statusItems
  if running then
    local runningStatus = "True"
    if finished then runningStatus = "False" end
    conditions[#conditions + 1] = {type = "Running", status = runningStatus, lastUpdateTime = runningUpdate,
      lastTransitionTime = runningTransition, reason = "PyTorchJobRunning", message = "PyTorchJob is running."}
  end
  if #failedIn > 0 then
    conditions[#conditions + 1] = {type = "Failed", status = "True", lastUpdateTime = completionTime,
      lastTransitionTime = completionTime, reason = "PyTorchJobFailed",
      message = "PyTorchJob executed failed in member clusters: " .. table.concat(failedIn, ", ")}
  elseif succeeded == #statusItems and succeeded > 0 then
    conditions[#conditions + 1] = {type = "Succeeded", status = "True", lastUpdateTime = completionTime,
      lastTransitionTime = completionTime, reason = "PyTorchJobSucceeded", message = "PyTorchJob is successfully completed."}
    desiredObj.status.completionTime = completionTime
  end
  desiredObj.status.startTime = startTime
  desiredObj.status.lastReconcileTime = lastReconcileTime
  desiredObj.status.replicaStatuses = replicaStatuses
  desiredObj.status.conditions = conditions
  desiredObj.status = compact(desiredObj.status)
  return desiredObj
end
