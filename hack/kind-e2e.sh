#!/usr/bin/env bash
# Build the image, create a host and member kind clusters, load the image,
# deploy Karmada into the host with `kubectl karmada init` (its own
# karmada-apiserver: localkube by default, kube-apiserver on etcd with
# --apiserver kube, or the host's own API server with --apiserver external),
# register the members with `kubectl karmada register`, and run tests/e2e
# against them.
#
# Needs docker, kind, kubectl and this project installed (pip install -e .);
# --apiserver kube also needs the kind nodes to pull from registry.k8s.io.
# The members reach karmada-apiserver at the host node's address on the kind
# network (its NodePort), which the machine running this script must reach
# too (Linux). --dry-run prints the commands instead of running them.
set -euo pipefail

usage() {
  cat <<USAGE
usage: hack/kind-e2e.sh [--prefix NAME] [--members N] [--apiserver KIND] [--image IMAGE] [--skip-build] [--keep] [--dry-run]

  --prefix NAME   kind cluster names: NAME-host, NAME-member1.. (karmada-e2e)
  --apiserver KIND  localkube, kube or external: init's --apiserver (localkube)
  --members N     member clusters, at least 2 (2)
  --image IMAGE   image to build and deploy (karmada.images.IMAGE: the package version)
  --skip-build    use an IMAGE already built
  --keep          leave the clusters running afterwards
  --dry-run       print the commands, run none
USAGE
}

cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
PREFIX=karmada-e2e
MEMBERS=2
APISERVER=localkube
IMAGE=""
BUILD=1
KEEP=0
DRY_RUN=0

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX=${2:?--prefix needs a value}; shift 2 ;;
    --members) MEMBERS=${2:?--members needs a value}; shift 2 ;;
    --apiserver) APISERVER=${2:?--apiserver needs a value}; shift 2 ;;
    --image) IMAGE=${2:?--image needs a value}; shift 2 ;;
    --skip-build) BUILD=0; shift ;;
    --keep) KEEP=1; shift ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$MEMBERS" in
  '' | *[!0-9]*) echo "--members must be a number, got: $MEMBERS" >&2; exit 2 ;;
esac
if [ "$MEMBERS" -lt 2 ]; then
  echo "--members must be at least 2 (the suite divides a workload over two)" >&2
  exit 2
fi
case "$APISERVER" in
  localkube | kube | external) ;;
  *) echo "--apiserver must be localkube, kube or external, got: $APISERVER" >&2; exit 2 ;;
esac
if [ -z "$IMAGE" ]; then
  IMAGE=$("$PYTHON" -c 'from karmada.images import IMAGE; print(IMAGE)')
fi

run() {
  echo "+ $*"
  if [ "$DRY_RUN" = 0 ]; then "$@"; fi
}

# the output of a command, or PLACEHOLDER in a dry run
capture() {
  local placeholder=$1
  shift
  echo "+ $*" >&2
  if [ "$DRY_RUN" = 0 ]; then "$@"; else echo "$placeholder"; fi
}

if [ "$DRY_RUN" = 0 ]; then
  for tool in docker kind kubectl kubectl-karmada; do
    command -v "$tool" >/dev/null || { echo "$tool is required on PATH" >&2; exit 1; }
  done
fi

WORK=$(mktemp -d)
HOST="$PREFIX-host"
NAMES=()
for i in $(seq 1 "$MEMBERS"); do NAMES+=("member$i"); done

cleanup() {
  if [ "$KEEP" = 0 ]; then
    for name in "$HOST" "${NAMES[@]/#/$PREFIX-}"; do run kind delete cluster --name "$name" || true; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ "$BUILD" = 1 ]; then run docker build -t "$IMAGE" .; fi

run kind create cluster --name "$HOST" --kubeconfig "$WORK/host.config"
for name in "${NAMES[@]}"; do
  run kind create cluster --name "$PREFIX-$name" --kubeconfig "$WORK/$name.config"
  run kubectl config rename-context "kind-$PREFIX-$name" "$name" --kubeconfig "$WORK/$name.config"
done
for name in "$HOST" "${NAMES[@]/#/$PREFIX-}"; do
  run kind load docker-image "$IMAGE" --name "$name"
done

# the host node's address on the kind network: both this machine and the members' pods reach it
HOST_IP=$(capture 172.18.0.2 docker inspect -f '{{.NetworkSettings.Networks.kind.IPAddress}}' "$HOST-control-plane")
run kubectl config set-cluster "kind-$HOST" --server "https://$HOST_IP:6443" --kubeconfig "$WORK/host.config"

if [ "$APISERVER" = external ]; then
  # Karmada's API in the host's own API server, the components beside it
  KARMADA_CONFIG="$WORK/host.config"
  run kubectl karmada init --apiserver external --deploy --image "$IMAGE" --kubeconfig "$WORK/host.config"
else
  # a dedicated karmada-apiserver on the host node's NodePort 32443; init waits for every part
  KARMADA_CONFIG="$WORK/karmada/karmada.config"
  run kubectl karmada init --apiserver "$APISERVER" --image "$IMAGE" --apiserver-advertise-address "$HOST_IP" \
    --karmada-data "$WORK/karmada" --timeout 10m --kubeconfig "$WORK/host.config"
fi
run kubectl --kubeconfig "$WORK/host.config" -n karmada-system rollout status deploy/karmada-controlplane --timeout=180s
run kubectl --kubeconfig "$WORK/host.config" -n karmada-system rollout status deploy/karmada-webhook --timeout=180s

REGISTER=$(capture "kubectl karmada register $HOST_IP:32443 --token TOKEN --discovery-token-ca-cert-hash sha256:HASH" \
  kubectl karmada token create --print-register-command --kubeconfig "$KARMADA_CONFIG")
read -r -a REGISTER_WORDS <<<"$REGISTER"
for name in "${NAMES[@]}"; do
  run "${REGISTER_WORDS[@]}" --cluster-name "$name" --agent-image "$IMAGE" --kubeconfig "$WORK/$name.config"
done

MEMBER_CONFIGS=$(printf "$WORK/%s.config:" "${NAMES[@]}")
capture "" env KUBECONFIG="${MEMBER_CONFIGS%:}" kubectl config view --flatten >"$WORK/members.config"

MEMBER_LIST=$(IFS=,; echo "${NAMES[*]}")
run env KARMADA_E2E_KIND=1 KARMADA_E2E_TIMEOUT=180 \
  KARMADA_E2E_KUBECONFIG="$KARMADA_CONFIG" \
  KARMADA_E2E_MEMBERS_KUBECONFIG="$WORK/members.config" \
  KARMADA_E2E_MEMBERS="$MEMBER_LIST" \
  "$PYTHON" -m pytest tests/e2e -v -p no:cacheprovider
