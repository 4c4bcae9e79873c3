# syntax=docker/dockerfile:1
# One image with the three programs (karmada-controlplane, karmada-agent,
# karmada-webhook) and kubectl-karmada. The Deployment's `command` picks the
# program; nothing here needs a shell at run time, and nothing writes to the
# root filesystem (bytecode is compiled at build time), so pods run it with
# readOnlyRootFilesystem. Tag it with the package version (karmada/images.py):
#   docker build -t karmada-py:"$(python3 -c 'import karmada.version as v; print(v.__version__)')" .

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# Stage 1: the project's wheel and the wheels of its dependencies.
FROM ${PYTHON_IMAGE} AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY karmada ./karmada
COPY controlplane ./controlplane
COPY agent ./agent
COPY webhook ./webhook
COPY kubectl_karmada ./kubectl_karmada
COPY localkube ./localkube
COPY manifests ./manifests
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# Stage 2: a slim Python with the wheels installed, no build tools.
FROM ${PYTHON_IMAGE}
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-cache-dir --no-index --find-links=/wheels --compile /wheels/karmada_py-*.whl \
    && python -m compileall -q /usr/local/lib
# A numeric user, so runAsNonRoot can verify it without /etc/passwd.
USER 65532:65532
WORKDIR /tmp
ENTRYPOINT ["karmada-controlplane"]
CMD ["--help"]
