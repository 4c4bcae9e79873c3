-- target: kyverno.io/v1 Policy
function InterpretHealth(observedObj)
  local status = observedObj.status
  if status ~= nil and status.ready ~= nil then
    return status.ready
  end
  return hasCondition(observedObj, "Ready") and readyReason(observedObj)
end

function readyReason(observedObj)
  for _, c in ipairs(observedObj.status.conditions) do
    if c.type == "Ready" and c.status == "True" then
      return c.reason == "Succeeded"
    end
  end
  return false
end


function ReflectStatus(observedObj)
  return pick(observedObj, {"ready", "conditions", "autogen", "rulecount"}, false)
end

local RULES = {"validate", "generate", "mutate", "verifyimages"}

-- a policy is as ready as the last member says; rules counted across members
function AggregateStatus(desiredObj, statusItems)
  if statusItems == nil then
    return desiredObj
  end
  local status = {}
  local rulecount = {}
  for _, r in ipairs(RULES) do rulecount[r] = 0 end
  for _, item in ipairs(statusItems) do
    local s = statusOf(item)
    if s.autogen ~= nil then status.autogen = s.autogen end
    if s.ready ~= nil then status.ready = s.ready end
    if s.rulecount ~= nil then
      for _, r in ipairs(RULES) do rulecount[r] = rulecount[r] + (s.rulecount[r] or 0) end
    end
  end
  status.rulecount = rulecount
  status.conditions = mergeConditions(statusItems)
  desiredObj.status = status
  return desiredObj
end
