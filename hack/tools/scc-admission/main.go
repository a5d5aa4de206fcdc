// Command scc-admission puts OpenShift's SecurityContextConstraints admission
// in front of a plain kube-apiserver, for tests: the admission plugin of
// OpenShift's own API server (github.com/openshift/apiserver-library-go,
// sccadmission), served as a mutating webhook for pods, run exactly as the
// API server runs it (Admit, then Validate), with the requester's identity
// checked by SubjectAccessReviews as OpenShift's authorizer would. It also
// gives every namespace the UID, group and SELinux ranges OpenShift's
// cluster-policy-controller gives it, which the SCCs read.
//
// The API server must serve OpenShift's SCC API and hold the default SCCs;
// pkg/testenv installs both.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"time"

	"github.com/openshift/apiserver-library-go/pkg/securitycontextconstraints/sccadmission"
	securityclient "github.com/openshift/client-go/security/clientset/versioned"
	securityinformers "github.com/openshift/client-go/security/informers/externalversions"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// plugin is the SCC admission plugin, mutating and validating.
type plugin interface {
	admission.MutationInterface
	admission.ValidationInterface
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the kube-apiserver, an administrator's")
	listen := flag.String("listen", "127.0.0.1:0", "address to serve the webhook on (HTTPS)")
	cert := flag.String("tls-cert", "", "serving certificate (PEM)")
	key := flag.String("tls-key", "", "serving key (PEM)")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	// A pod's admission asks a SubjectAccessReview for each SCC, of the
	// requester and of the pod's account: some thirty requests, which
	// client-go's default rate limit (5 a second) would stretch to seconds.
	// OpenShift's in-process authorizer has no such limit.
	cfg.QPS, cfg.Burst = 1000, 2000
	ctx := context.Background()
	p, err := newPlugin(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	kube := kubernetes.NewForConfigOrDie(cfg)
	go allocateNamespaceRanges(ctx, kube)
	http.HandleFunc("/pods", func(w http.ResponseWriter, r *http.Request) { serve(w, r, p) })
	http.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	log.Printf("serving OpenShift's SCC admission on https://%s/pods", *listen)
	log.Fatal(http.ListenAndServeTLS(*listen, *cert, *key, nil))
}

// newPlugin makes the admission plugin as OpenShift's API server initializes
// it: its SCC and namespace informers, and an authorizer that asks the API
// server whether the requester, or the pod's service account, may use an SCC.
func newPlugin(ctx context.Context, cfg *rest.Config) (plugin, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	security, err := securityclient.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: kube.AuthorizationV1(),
		// A grant given or taken away counts within a second, as it does
		// with OpenShift's in-process authorizer.
		AllowCacheTTL: time.Second, DenyCacheTTL: time.Second,
		WebhookRetryBackoff: &wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 5},
	}.New()
	if err != nil {
		return nil, err
	}
	kubeInformers := informers.NewSharedInformerFactory(kube, 0)
	securityInformers := securityinformers.NewSharedInformerFactory(security, 0)
	c := sccadmission.NewConstraint()
	c.SetSecurityInformers(securityInformers.Security().V1().SecurityContextConstraints())
	c.SetExternalKubeInformerFactory(kubeInformers)
	c.SetAuthorizer(authz)
	if err := c.ValidateInitialization(); err != nil {
		return nil, err
	}
	kubeInformers.Start(ctx.Done())
	securityInformers.Start(ctx.Done())
	return c, nil
}
