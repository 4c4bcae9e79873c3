"""``kubectl karmada local``: a whole pull-mode Karmada on 127.0.0.1 from
local processes (localkube API servers, the control plane, one agent per
member), running in the background with its state, kubeconfigs and logs in
one directory."""
