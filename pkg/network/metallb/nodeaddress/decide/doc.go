// Package decide is what the node-address mode decides, with no client: what
// it serves (Scope), which nodes can take traffic and which of their
// addresses a Service publishes, what it loses to older Services that share
// a port with it, and the ingress written for it.
package decide
