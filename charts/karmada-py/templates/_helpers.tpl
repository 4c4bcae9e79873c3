{{/* The chart's objects live in karmada-system: Karmada's components look there. */}}
{{- define "karmada-py.namespace" -}}
{{- if ne .Release.Namespace "karmada-system" -}}
{{- fail "install into the namespace karmada-system: helm install karmada charts/karmada-py -n karmada-system --create-namespace" -}}
{{- end -}}
karmada-system
{{- end -}}

{{- define "karmada-py.image" -}}
{{- .Values.image | default (printf "karmada-py:%s" .Chart.AppVersion) -}}
{{- end -}}

{{- define "karmada-py.kubeImage" -}}
{{- $root := index . 0 -}}{{- $name := index . 1 -}}{{- $given := index . 2 -}}
{{- $tag := ternary "3.6.8-0" $root.Values.kube.imageTag (eq $name "etcd") -}}
{{- $given | default (printf "%s/%s:%s" (trimSuffix "/" $root.Values.kube.imageRegistry) $name $tag) -}}
{{- end -}}

{{- define "karmada-py.checks" -}}
{{- if not (has .Values.apiserver.mode (list "localkube" "kube")) -}}
{{- fail (printf "apiserver.mode must be localkube or kube, not %q" .Values.apiserver.mode) -}}
{{- end -}}
{{- if not (has (int .Values.kube.etcdReplicas) (list 1 3 5)) -}}
{{- fail (printf "kube.etcdReplicas must be 1, 3 or 5 (a quorum of an odd size), not %v" .Values.kube.etcdReplicas) -}}
{{- end -}}
{{- if and (eq .Values.apiserver.serviceType "ClusterIP") (not .Values.apiserver.advertiseAddress) -}}
{{- fail "a ClusterIP Service needs apiserver.advertiseAddress (where it is reachable)" -}}
{{- end -}}
{{- if and (eq .Values.apiserver.serviceType "LoadBalancer") (not .Values.apiserver.advertiseAddress) -}}
{{- fail "a LoadBalancer Service needs apiserver.advertiseAddress: its address goes into the certificate, which the pre-install hook makes before the Service exists" -}}
{{- end -}}
{{- if and .Values.clusterProxy.enabled (ne .Values.apiserver.serviceType "NodePort") (not .Values.clusterProxy.advertiseAddress) -}}
{{- fail (printf "a %s Service needs clusterProxy.advertiseAddress (https://HOST[:PORT], where agents dial the cluster proxy), or clusterProxy.enabled=false" .Values.apiserver.serviceType) -}}
{{- end -}}
{{- end -}}

{{/* The pod security every container of the chart runs with. */}}
{{- define "karmada-py.podSecurity" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "karmada-py.containerSecurity" -}}
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: true
capabilities:
  drop:
  - ALL
{{- end -}}

{{/* init's flags that decide the certificates and cluster-info, for the hooks. */}}
{{- define "karmada-py.initFlags" -}}
- --apiserver={{ .Values.apiserver.mode }}
- --apiserver-service-type={{ .Values.apiserver.serviceType }}
- --apiserver-node-port={{ .Values.apiserver.nodePort }}
{{- with .Values.apiserver.advertiseAddress }}
- --apiserver-advertise-address={{ . }}
{{- end }}
{{- with .Values.apiserver.certExternalIPs }}
- --cert-external-ip={{ join "," . }}
{{- end }}
{{- with .Values.apiserver.certExternalDNS }}
- --cert-external-dns={{ join "," . }}
{{- end }}
{{- if eq .Values.apiserver.mode "kube" }}
- --etcd-replicas={{ .Values.kube.etcdReplicas }}
{{- end }}
{{- with .Values.webhookURL }}
- --webhook-url={{ . }}
{{- end }}
- --cluster-proxy={{ .Values.clusterProxy.enabled }}
{{- if .Values.clusterProxy.enabled }}
- --cluster-proxy-node-port={{ .Values.clusterProxy.nodePort }}
{{- with .Values.clusterProxy.advertiseAddress }}
- --cluster-proxy-advertise-address={{ . }}
{{- end }}
{{- end }}
- --image={{ include "karmada-py.image" . }}
- --timeout={{ .Values.hooks.timeout }}
{{- end -}}
