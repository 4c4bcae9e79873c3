-- Helpers compiled into every third-party script (this file is prepended to each).
local kube = require("kube")
local TEMPLATE_GENERATION = "resourcetemplate.karmada.io/generation"

local function statusOf(item)
  return item.status or {}
end

local function hasCondition(obj, kind)
  local conditions = (obj.status or {}).conditions or {}
  for _, c in ipairs(conditions) do
    if c.type == kind and c.status == "True" then
      return true
    end
  end
  return false
end

-- the generation fields the aggregation below compares: the member's own and the template's it applied
local function withGenerations(observed, status)
  if observed.metadata == nil then
    return status
  end
  status.generation = observed.metadata.generation
  local annotations = observed.metadata.annotations or {}
  local generation = tonumber(annotations[TEMPLATE_GENERATION])
  if generation ~= nil then
    status.resourceTemplateGeneration = generation
  end
  return status
end

-- observed's status reduced to fields, plus generation tracking when track is true
local function pick(observed, fields, track)
  local status = {}
  if observed == nil or observed.status == nil then
    return status
  end
  for _, f in ipairs(fields) do
    status[f] = observed.status[f]
  end
  if track then
    return withGenerations(observed, status)
  end
  return status
end

-- the template's generation once every member has seen it and settled, else what it had
local function aggregatedGeneration(desired, items)
  local generation = desired.metadata.generation
  local settled = 0
  for _, item in ipairs(items) do
    local s = statusOf(item)
    if (s.resourceTemplateGeneration or 0) == generation and (s.generation or 0) == (s.observedGeneration or 0) then
      settled = settled + 1
    end
  end
  if settled == #items then
    return generation
  end
  return desired.status.observedGeneration
end

local function prepare(desired)
  desired.status = desired.status or {}
  desired.metadata.generation = desired.metadata.generation or 0
  desired.status.observedGeneration = desired.status.observedGeneration or 0
end

-- counters summed, strings taken from the last member reporting one, observedGeneration tracked
local function sumStatus(desired, items, counters, strings, emptyStrings)
  prepare(desired)
  if items == nil then
    desired.status.observedGeneration = desired.metadata.generation
    for _, f in ipairs(counters) do
      desired.status[f] = 0
    end
    for _, f in ipairs(emptyStrings or {}) do
      desired.status[f] = ""
    end
    return desired
  end
  local totals, texts = {}, {}
  for _, f in ipairs(counters) do totals[f] = 0 end
  for _, f in ipairs(strings) do texts[f] = "" end
  for _, item in ipairs(items) do
    local s = statusOf(item)
    for _, f in ipairs(counters) do
      if s[f] ~= nil then totals[f] = totals[f] + s[f] end
    end
    for _, f in ipairs(strings) do
      if s[f] ~= nil and s[f] ~= "" then texts[f] = s[f] end
    end
  end
  desired.status.observedGeneration = aggregatedGeneration(desired, items)
  for f, v in pairs(totals) do desired.status[f] = v end
  for f, v in pairs(texts) do desired.status[f] = v end
  return desired
end

-- conditions of every member merged by type and status, each message prefixed by its cluster
local function mergeConditions(items)
  local merged = {}
  for _, item in ipairs(items) do
    for _, c in ipairs(statusOf(item).conditions or {}) do
      c.message = item.clusterName .. "=" .. (c.message or "")
      local found = false
      for _, m in ipairs(merged) do
        if m.type == c.type and m.status == c.status and m.reason == c.reason then
          m.message = m.message .. ", " .. c.message
          found = true
          break
        end
      end
      if not found then
        merged[#merged + 1] = c
      end
    end
  end
  return merged
end

-- the objects named in a set, as DependentObjectReferences in the desired object's namespace
local function refs(desired, groups)
  local out = {}
  for _, group in ipairs(groups) do
    local names = {}
    for name in pairs(group.names) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      out[#out + 1] = {apiVersion = "v1", kind = group.kind, namespace = desired.metadata.namespace, name = name}
    end
  end
  return out
end

-- a Ray cluster spec's components: the head (one replica) and each worker group
local function rayComponents(clusterSpec)
  local components = {}
  if clusterSpec == nil then
    return components
  end
  local head = clusterSpec.headGroupSpec
  if head ~= nil and head.template ~= nil then
    components[#components + 1] = {name = "ray-head", replicas = 1,
      replicaRequirements = kube.accuratePodRequirements(head.template)}
  end
  for i, group in ipairs(clusterSpec.workerGroupSpecs or {}) do
    local name = group.groupName
    if name == nil or name == "" then
      name = "worker-" .. i
    end
    local requirements
    if group.template ~= nil then
      requirements = kube.accuratePodRequirements(group.template)
    end
    components[#components + 1] = {name = name, replicas = group.replicas or 0, replicaRequirements = requirements}
  end
  return components
end

-- the dependencies of several pod templates, each object once
local function templatesDependencies(desired, templates)
  local found, seen = {}, {}
  for _, template in ipairs(templates) do
    if template ~= nil and template.spec ~= nil then
      for _, ref in ipairs(kube.getPodDependencies(template, desired.metadata.namespace)) do
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
