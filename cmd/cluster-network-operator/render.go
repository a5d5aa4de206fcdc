package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/apis/metallb/v1beta1"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/version"
)

// renderOptions are the flags of `render`; each one sets a field of the MetalLB
// object, over what --file holds.
type renderOptions struct {
	file              string
	namespace         string
	logLevel          string
	loadBalancerClass string
	nodeSelector      map[string]string
	maxUnavailable    string
	webhooks          bool
	openshift         bool
}

func newRenderCommand() *cobra.Command {
	o := renderOptions{namespace: manifests.DefaultNamespace, webhooks: true}
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Print the manifests the operator would apply, as multi-document YAML",
		Long: `Print the manifests the operator would apply for a MetalLB object (--file)
and the flags, with the images and release version of the operator's environment
(` + manifests.ControllerImageEnv + `, ` + manifests.SpeakerImageEnv + `, ` + manifests.FRRK8sImageEnv + `, ` +
			manifests.FRRImageEnv + `, ` + manifests.ReleaseVersionEnv + `).
The memberlist Secret's key is a placeholder: the operator generates the real one.

  cluster-network-operator render --file metallb.yaml | kubectl apply --dry-run=server -f -`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			obj, err := o.object(cmd)
			if err != nil {
				return usageError{err}
			}
			env := manifests.Environment{Namespace: o.namespace, Webhooks: o.webhooks, OpenShift: o.openshift, SCCAdmission: o.openshift}
			if o.openshift {
				env.PlatformFRRK8s = &manifests.PlatformFRRK8s{Namespace: manifests.OpenShiftFRRK8sNamespace, Enabled: true}
			}
			return render(cmd.OutOrStdout(), env, obj)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "file", "f", "", "a file holding a metallb.io/v1beta1 MetalLB object")
	f.StringVar(&o.namespace, "namespace", o.namespace, "namespace MetalLB runs in")
	f.BoolVar(&o.webhooks, "metallb-webhooks", o.webhooks, "have MetalLB's controller serve its validating webhooks, as `start` does")
	f.BoolVar(&o.openshift, "openshift", false, "render for OpenShift, as `start` does where OpenShift's APIs are served (SCC grants, workload partitioning; the frr-k8s backend uses the network operator's frr-k8s, FRR enabled)")
	f.StringVar(&o.logLevel, "log-level", "", "spec.logLevel: all, debug, info, warn, error or none")
	f.StringVar(&o.loadBalancerClass, "load-balancer-class", "", "spec.loadBalancerClass")
	f.StringToStringVar(&o.nodeSelector, "speaker-node-selector", nil, "spec.nodeSelector, as key=value,...")
	f.StringVar(&o.maxUnavailable, "max-unavailable", "", `spec.speakerConfig.maxUnavailable: a number or a percentage such as "10%"`)
	return cmd
}

// object reads --file, if given, and sets the fields named by flags.
func (o *renderOptions) object(cmd *cobra.Command) (*v1beta1.MetalLB, error) {
	if errs := validation.IsDNS1123Label(o.namespace); len(errs) > 0 {
		return nil, fmt.Errorf("--namespace %q is not a valid namespace name: %s", o.namespace, errs[0])
	}
	obj := &v1beta1.MetalLB{}
	if o.file != "" {
		data, err := os.ReadFile(o.file)
		if err != nil {
			return nil, fmt.Errorf("--file: %v", err)
		}
		if obj, err = manifests.DecodeMetalLB(data); err != nil {
			return nil, fmt.Errorf("--file %s: %v", o.file, err)
		}
	}
	flags := cmd.Flags()
	if flags.Changed("log-level") {
		obj.Spec.LogLevel = v1beta1.LogLevel(o.logLevel)
	}
	if flags.Changed("load-balancer-class") {
		obj.Spec.LoadBalancerClass = o.loadBalancerClass
	}
	if flags.Changed("speaker-node-selector") {
		obj.Spec.NodeSelector = v1beta1.NodeSelector{}
		for k, v := range o.nodeSelector {
			obj.Spec.NodeSelector[k] = v1beta1.LabelValue(v)
		}
	}
	if flags.Changed("max-unavailable") {
		if obj.Spec.SpeakerConfig == nil {
			obj.Spec.SpeakerConfig = &v1beta1.SpeakerConfig{}
		}
		v := intstr.Parse(o.maxUnavailable)
		obj.Spec.SpeakerConfig.MaxUnavailable = &v
	}
	return obj, nil
}

func render(out io.Writer, env manifests.Environment, obj *v1beta1.MetalLB) error {
	var err error
	if env.Images, err = manifests.ImagesFromEnv(os.Getenv, version.Version); err != nil {
		return err
	}
	settings, err := manifests.SettingsFor(env, obj)
	if err != nil {
		return err
	}
	objs, err := manifests.Render(settings, "")
	if err != nil {
		return err
	}
	return writeYAML(out, objs)
}

func writeYAML(out io.Writer, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}
