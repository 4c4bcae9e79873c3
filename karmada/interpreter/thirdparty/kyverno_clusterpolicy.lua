-- target: kyverno.io/v1 ClusterPolicy
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

