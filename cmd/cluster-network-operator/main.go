package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/nodeaddress"
	"github.com/bmlb/cluster-network-operator/pkg/operator"
	"github.com/bmlb/cluster-network-operator/pkg/version"
)

// Exit codes: a usage mistake is told apart from a failure at run time.
const (
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks errors in how the command was called.
type usageError struct{ error }

func main() {
	root := newRootCommand()
	if err := root.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", root.Name(), err)
		if _, ok := err.(usageError); ok {
			os.Exit(exitUsage)
		}
		os.Exit(exitFailure)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "cluster-network-operator",
		Short:         "Runs MetalLB as a built-in of bare-metal Kubernetes and OpenShift clusters",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q: use start, render, version or help", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newStartCommand(), newRenderCommand(), newVersionCommand())
	return root
}

// modules are what the operator runs: the MetalLB module, and the
// node-address mode, which it tells what to serve.
func modules() []operator.Module {
	nodeAddress := nodeaddress.NewModule()
	return []operator.Module{metallb.NewModule(nodeAddress), nodeAddress}
}

func newStartCommand() *cobra.Command {
	opts := operator.DefaultOptions(modules()...)
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Run the operator",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			operator.SetGCPercent() // before the first burst: Validate renders every object
			if err := opts.Validate(); err != nil {
				return usageError{err}
			}
			return operator.Run(ctrl.SetupSignalHandler(), opts)
		},
	}
	opts.AddFlags(cmd.Flags())
	return cmd
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the operator's version",
		Args:  noArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), version.Version)
		},
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%q takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}
