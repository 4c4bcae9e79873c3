-- target: kubeflow.org/v2beta1 MPIJob
local SPECS = "mpiReplicaSpecs"

-- the replica types in the order components are listed (nil: by name), and whether names are lower-cased
local ORDER = nil
-- replicas of a type that does not say (nil: 1 for every type), and whether a type needs a template
local DEFAULTS = {Launcher = 1}
local NEEDS_TEMPLATE = true
local LOWER = false

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

function ReflectStatus(observedObj)
  local status = {}
  if observedObj == nil or observedObj.status == nil then
    return status
  end
  local s = observedObj.status
  status.replicaStatuses = {}
  for name, replica in pairs(s.replicaStatuses or {}) do
    status.replicaStatuses[name] = {active = replica.active, succeeded = replica.succeeded, failed = replica.failed,
      selector = replica.selector}
  end
  status.conditions = {}
  for _, c in ipairs(s.conditions or {}) do
    status.conditions[#status.conditions + 1] = c
  end
  status.startTime = s.startTime
  status.completionTime = s.completionTime
  status.lastReconcileTime = s.lastReconcileTime
  return status
end

-- replica counts summed per type, the earliest start and latest completion and reconcile,
-- and per condition type the condition that changed last; one member's status is taken as it is
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil or #statusItems == 0 then
    return desiredObj
  end
  if #statusItems == 1 then
    desiredObj.status = statusItems[1].status
    return desiredObj
  end
  local replicaStatuses, latest = {}, {}
  local status = {}
  for _, item in ipairs(statusItems) do
    local s = item.status or {}
    for name, replica in pairs(s.replicaStatuses or {}) do
      local sum = replicaStatuses[name] or {active = 0, succeeded = 0, failed = 0}
      sum.active = sum.active + (replica.active or 0)
      sum.succeeded = sum.succeeded + (replica.succeeded or 0)
      sum.failed = sum.failed + (replica.failed or 0)
      replicaStatuses[name] = sum
    end
    if (s.startTime or "") ~= "" and (status.startTime == nil or s.startTime < status.startTime) then
      status.startTime = s.startTime
    end
    for _, f in ipairs({"completionTime", "lastReconcileTime"}) do
      if (s[f] or "") ~= "" and (status[f] == nil or s[f] > status[f]) then
        status[f] = s[f]
      end
    end
    for _, c in ipairs(s.conditions or {}) do
      local changed = c.lastUpdateTime or c.lastTransitionTime
      local seen = latest[c.type]
      if (changed or "") ~= "" and (seen == nil or changed > (seen.lastUpdateTime or seen.lastTransitionTime)) then
        latest[c.type] = c
      end
    end
  end
  local types = {}
  for t in pairs(latest) do types[#types + 1] = t end
  -- in the order they happened
  local function changed(c) return c.lastUpdateTime or c.lastTransitionTime end
  table.sort(types, function(a, b)
    local ta, tb = changed(latest[a]), changed(latest[b])
    if ta ~= tb then return ta < tb end
    return a < b
  end)
  local conditions = {}
  for _, t in ipairs(types) do conditions[#conditions + 1] = latest[t] end
  if next(replicaStatuses) ~= nil then status.replicaStatuses = replicaStatuses end
  if #conditions > 0 then status.conditions = conditions end
  desiredObj.status = status
  return desiredObj
end
