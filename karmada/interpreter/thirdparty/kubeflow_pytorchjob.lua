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
