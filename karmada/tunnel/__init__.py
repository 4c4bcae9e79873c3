"""The agent's outbound tunnel: HTTP/2 streams over one WebSocket it dials to the
control plane, carrying cluster-proxy requests to its member (:mod:`.link`),
WebSocket messages inside a stream (:mod:`.messages`), the agent's side that
dials and answers (:mod:`.dialer`) and the control plane's that accepts
(:mod:`.hub`)."""
