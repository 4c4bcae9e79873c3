"""Default container images of the programs that installers deploy.
Plain constants, so command-line parsers can show them without importing
the installers."""

CONTROLPLANE_IMAGE = "karmada-py:latest"
AGENT_IMAGE = "karmada-py:latest"
