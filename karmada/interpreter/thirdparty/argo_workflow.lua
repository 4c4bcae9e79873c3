-- target: argoproj.io/v1alpha1 Workflow
function GetReplicas(obj)
  -- a workflow's pods share its scheduling constraints
  local template = {spec = {affinity = obj.spec.affinity, nodeSelector = obj.spec.nodeSelector,
    tolerations = obj.spec.tolerations}}
  return obj.spec.parallelism or 1, kube.accuratePodRequirements(template)
end

function ReviseReplica(obj, replica)
  obj.spec.parallelism = replica
  return obj
end

function Retain(desiredObj, observedObj)
  if observedObj.spec.suspend ~= nil then
    desiredObj.spec.suspend = observedObj.spec.suspend
  end
  if observedObj.status ~= nil then
    desiredObj.status = observedObj.status
  end
  return desiredObj
end

function InterpretHealth(observedObj)
  local phase = (observedObj.status or {}).phase
  return phase ~= nil and phase ~= "" and phase ~= "Error" and phase ~= "Failed"
end

function GetDependencies(desiredObj)
  local spec = desiredObj.spec
  local template = {spec = {volumes = spec.volumes, imagePullSecrets = spec.imagePullSecrets,
    serviceAccountName = spec.serviceAccountName}}
  local found = kube.getPodDependencies(template, desiredObj.metadata.namespace)
  local accounts, claims = {}, {}
  if spec.executor ~= nil and spec.executor.serviceAccountName ~= nil and spec.executor.serviceAccountName ~= "" then
    accounts[spec.executor.serviceAccountName] = true
  end
  for _, claim in ipairs(spec.volumeClaimTemplates or {}) do
    if claim.metadata ~= nil and claim.metadata.name ~= nil and claim.metadata.name ~= "" then
      claims[claim.metadata.name] = true
    end
  end
  for _, ref in ipairs(found) do
    if ref.kind == "ServiceAccount" then accounts[ref.name] = nil end
    if ref.kind == "PersistentVolumeClaim" then claims[ref.name] = nil end
  end
  for _, ref in ipairs(refs(desiredObj, {{kind = "ServiceAccount", names = accounts},
    {kind = "PersistentVolumeClaim", names = claims}})) do
    found[#found + 1] = ref
  end
  return found
end
