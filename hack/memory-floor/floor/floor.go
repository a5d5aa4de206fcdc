// Package floor is what the floor programs share: a controller-runtime
// manager with leader election, and nothing of the operator's.
package floor

import (
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Marker is the line a floor program prints once its packages are
// initialized, before it has read anything.
const Marker = "initialized"

// Main prints Marker, sets up the manager, calls before with it when not nil,
// and runs the manager until the program is stopped.
func Main(before func(manager.Manager) error) {
	fmt.Println(Marker)
	if err := run(before); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(before func(manager.Manager) error) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{LeaderElection: true, LeaderElectionID: "floor", LeaderElectionNamespace: "floor"})
	if err != nil {
		return err
	}
	if before != nil {
		if err := before(mgr); err != nil {
			return err
		}
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
