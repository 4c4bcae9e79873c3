"""Default container images of the programs that installers deploy: the one
image the root ``Dockerfile`` builds, tagged with the package version (the
manifests in ``manifests/deploy`` pin the same tag; a test keeps them equal).
Plain constants, so command-line parsers can show them without importing
the installers."""

from karmada.version import __version__

IMAGE_REPOSITORY = "karmada-py"
IMAGE = f"{IMAGE_REPOSITORY}:{__version__}"
CONTROLPLANE_IMAGE = IMAGE
AGENT_IMAGE = IMAGE

# --apiserver kube: Kubernetes' images, pinned (karmadactl init's versions); a mirror replaces the registry
KUBE_REGISTRY = "registry.k8s.io"
KUBE_VERSION = "v1.36.2"
ETCD_VERSION = "3.6.8-0"
