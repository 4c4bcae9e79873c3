-- target: kubeflow.org/v1 TFJob
local SPECS = "tfReplicaSpecs"

-- the replica types in the order components are listed (nil: by name), and whether names are lower-cased
local ORDER = {"PS", "Worker", "Chief", "Master", "Evaluator"}
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

local REPLICA_TYPES = {"PS", "Worker", "Chief", "Master", "Evaluator"}

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

-- counts summed per replica type, earliest start, latest completion; Failed when a member failed,
-- Succeeded when every member succeeded (stamped with the time of aggregation)
function AggregateStatus(desiredObj, statusItems)
  desiredObj.status = desiredObj.status or {}
  if statusItems == nil then
    desiredObj.status.startTime = nil
    desiredObj.status.completionTime = nil
    desiredObj.status.replicaStatuses = {}
    desiredObj.status.conditions = {}
    return desiredObj
  end
  local replicaStatuses = {}
  for _, t in ipairs(REPLICA_TYPES) do replicaStatuses[t] = {active = 0, failed = 0, succeeded = 0} end
  local startTime, completionTime, lastReconcileTime
  local succeeded, failedIn = 0, {}
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
      for _, t in ipairs(REPLICA_TYPES) do
        local r = (s.replicaStatuses or {})[t]
        if r ~= nil then
          local sum = replicaStatuses[t]
          sum.active = sum.active + (r.active or 0)
          sum.failed = sum.failed + (r.failed or 0)
          sum.succeeded = sum.succeeded + (r.succeeded or 0)
        end
      end
      local finished = ""
      for _, c in ipairs(s.conditions or {}) do
        if (c.type == "Succeeded" or c.type == "Failed") and c.status == "True" then finished = c.type end
      end
      if finished == "Succeeded" then succeeded = succeeded + 1 end
      if finished == "Failed" then failedIn[#failedIn + 1] = item.clusterName end
    end
  end
  local now = os.date("!%Y-%m-%dT%H:%M:%SZ")
  local conditions = {}
  if #failedIn > 0 then
    conditions[#conditions + 1] = {type = "Failed", status = "True", lastProbeTime = now, lastTransitionTime = now,
      reason = "TFJobFailed", message = "TFJob executed failed in member clusters: " .. table.concat(failedIn, ", ")}
  end
  if succeeded > 0 and succeeded == #statusItems then
    conditions[#conditions + 1] = {type = "Succeeded", status = "True", lastProbeTime = now, lastTransitionTime = now,
      reason = "Completed", message = "TFJob completed successfully"}
    desiredObj.status.completionTime = completionTime
  end
  desiredObj.status.startTime = startTime
  desiredObj.status.lastReconcileTime = lastReconcileTime
  desiredObj.status.replicaStatuses = replicaStatuses
  desiredObj.status.conditions = conditions
  desiredObj.status = compact(desiredObj.status)
  return desiredObj
end
