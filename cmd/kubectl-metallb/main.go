package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
)

// Exit codes: a usage mistake is told apart from a failure at run time.
const (
	exitFailure = 1
	exitUsage   = 2
)

type usageError struct{ error }

func main() {
	root := newRootCommand(os.Stdout)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "kubectl metallb: %v\n", err)
		if _, ok := err.(usageError); ok {
			os.Exit(exitUsage)
		}
		os.Exit(exitFailure)
	}
}

// options are the flags every command shares.
type options struct {
	kube      clientcmd.ClientConfig
	metallbNS string
	output    string
	color     string
	out       io.Writer
}

func newRootCommand(out io.Writer) *cobra.Command {
	o := &options{out: out}
	root := &cobra.Command{
		Use:           "kubectl-metallb",
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl metallb"},
		Short:         "Tells the state of MetalLB, and why a Service has no address or is not announced",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	overrides := &clientcmd.ConfigOverrides{}
	flags := root.PersistentFlags()
	flags.StringVar(&rules.ExplicitPath, "kubeconfig", "", "path to the kubeconfig file")
	clientcmd.BindOverrideFlags(overrides, flags, clientcmd.RecommendedConfigOverrideFlags(""))
	flags.StringVar(&o.metallbNS, "metallb-namespace", manifests.DefaultNamespace, "MetalLB's namespace")
	flags.StringVarP(&o.output, "output", "o", "text", "output format: text, json or yaml")
	flags.StringVar(&o.color, "color", "auto", "colour the text: auto (on a terminal), always or never")
	o.kube = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	root.AddCommand(newStatusCommand(o), newExplainCommand(o))
	return root
}

// client connects to the cluster of the kubeconfig.
func (o *options) client() (client.Client, error) {
	cfg, err := o.kube.ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "kubectl-metallb"
	return client.New(cfg, client.Options{Scheme: scheme})
}

func (o *options) check() error {
	switch o.output {
	case "text", "json", "yaml":
	default:
		return usageError{fmt.Errorf("--output %q: use text, json or yaml", o.output)}
	}
	switch o.color {
	case "auto", "always", "never":
	default:
		return usageError{fmt.Errorf("--color %q: use auto, always or never", o.color)}
	}
	return nil
}

func newStatusCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "The operator, MetalLB, its pools, advertisements, peers and speakers, and what is wrong",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			r, err := readStatus(cmd.Context(), c, o.metallbNS)
			if err != nil {
				return err
			}
			return o.print(r, func(p *printer) { p.status(r) })
		},
	}
}

func newExplainCommand(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "explain service/NAME",
		Short: "Where a Service's address is announced, or why it has none or nobody announces it, with the fix",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, name, ok := strings.Cut(args[0], "/")
			if !ok || name == "" || !slices.Contains([]string{"service", "services", "svc"}, kind) {
				return usageError{fmt.Errorf("%q: name a Service as service/NAME", args[0])}
			}
			if err := o.check(); err != nil {
				return err
			}
			ns, _, err := o.kube.Namespace()
			if err != nil {
				return err
			}
			c, err := o.client()
			if err != nil {
				return err
			}
			e, err := readExplanation(cmd.Context(), c, o.metallbNS, ns, name)
			if err != nil {
				return err
			}
			return o.print(e, func(p *printer) { p.explanation(e) })
		},
	}
}
