package version

// Version is set by the build: -ldflags "-X github.com/bmlb/cluster-network-operator/pkg/version.Version=...".
var Version = "unknown"
