package transient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

func TestWhichErrorsPass(t *testing.T) {
	crd := schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}
	post := func(err error) error {
		return fmt.Errorf("applying CRD metallbs.metallb.io: %w", &url.Error{Op: "Post", URL: "https://apiserver/apis", Err: err})
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{apierrors.NewInternalError(errors.New("etcdserver: request timed out")), true},
		{apierrors.NewServiceUnavailable("etcd leader changed"), true},
		{apierrors.NewTooManyRequests("slow down", 1), true},
		{apierrors.NewTimeoutError("timed out", 1), true},
		{apierrors.NewServerTimeout(crd, "create", 1), true},
		{apierrors.NewGenericServerResponse(502, "post", crd, "metallbs.metallb.io", "bad gateway", 0, true), true},
		{apierrors.NewConflict(crd, "metallbs.metallb.io", errors.New("modified")), true},
		{fmt.Errorf("wrapped: %w", apierrors.NewInternalError(errors.New("boom"))), true},
		{post(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), true},
		{post(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), true},
		{post(io.EOF), true},
		{post(io.ErrUnexpectedEOF), true},
		{post(errors.New("http2: client connection lost")), true},
		{post(&net.DNSError{Err: "i/o timeout", IsTimeout: true}), true},
		{apierrors.NewForbidden(crd, "metallbs.metallb.io", errors.New("no RBAC")), false},
		{apierrors.NewUnauthorized("bad token"), false},
		{apierrors.NewGenericServerResponse(401, "get", schema.GroupResource{}, "", "", 0, true), false},
		{apierrors.NewGenericServerResponse(403, "get", schema.GroupResource{}, "", "", 0, true), false},
		{apierrors.NewNotFound(crd, "metallbs.metallb.io"), false},
		{apierrors.NewAlreadyExists(crd, "metallbs.metallb.io"), false},
		{apierrors.NewBadRequest("no such field"), false},
		{apierrors.NewInvalid(schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}, "x", nil), false},
		{post(errors.New("x509: certificate signed by unknown authority")), false},
		{errors.New("bindata/metallb holds no CRD"), false},
		{nil, false},
	} {
		if got := Is(tc.err); got != tc.want {
			t.Errorf("Is(%v) = %t, want %t", tc.err, got, tc.want)
		}
	}
}

// Retry tries a step again after errors that pass, logging each, and
// returns at once an error that lasts, or a step's success.
func TestRetryUntilWhatLasts(t *testing.T) {
	unavailable := apierrors.NewServiceUnavailable("etcd leader changed")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, "", errors.New("no RBAC"))
	for _, tc := range []struct {
		name   string
		errs   []error // what the step returns, try by try
		want   error
		logged int
	}{
		{"succeeds at once", []error{nil}, nil, 0},
		{"succeeds after errors that pass", []error{unavailable, unavailable, nil}, nil, 2},
		{"an error that lasts", []error{unavailable, forbidden, nil}, forbidden, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})
			tries := 0
			err := Retry(t.Context(), log, "listing nodes", func(context.Context) error {
				tries++
				return tc.errs[tries-1]
			})
			if err != tc.want || tries != len(tc.errs)-boolInt(tc.want != nil) {
				t.Errorf("Retry returned %v after %d tries, want %v", err, tries, tc.want)
			}
			if len(lines) != tc.logged || tc.logged > 0 && !strings.Contains(lines[0], `"step"="listing nodes"`) {
				t.Errorf("logged %q, want %d lines naming the step", lines, tc.logged)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A step that keeps failing ends with its context, with an error naming the
// step and its last error.
func TestRetryEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	err := Retry(ctx, logr.Discard(), "installing the API", func(context.Context) error {
		return apierrors.NewInternalError(errors.New("boom"))
	})
	if err == nil || !strings.Contains(err.Error(), "stopped while installing the API") || !apierrors.IsInternalError(err) {
		t.Errorf("Retry returned %v, want it to name the step and wrap the last error", err)
	}
}

// Served, against kube-apiserver with its discovery failing (each request
// twice: a 500, a lost connection, a 503, a 429), tells a served kind from one the cluster lacks
// rather than taking a failed discovery for a missing kind.
func TestServedThroughFailedDiscovery(t *testing.T) {
	env := testenv.New(t, testenv.Options{})
	for _, tc := range []struct {
		kind schema.GroupKind
		want bool
	}{
		{schema.GroupKind{Group: "apps", Kind: "DaemonSet"}, true},
		{schema.GroupKind{Group: "config.openshift.io", Kind: "Infrastructure"}, false},
	} {
		faults := testenv.NewFaults(testenv.FaultSeed(t), testenv.FaultRates{FailFirstTries: 2})
		cfg := rest.CopyConfig(env.Config)
		cfg.Wrap(faults.Wrap)
		httpClient, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Served(t.Context(), logr.Discard(), mapper, tc.kind)
		if err != nil || got != tc.want {
			t.Errorf("Served(%s) = %t, %v; want %t", tc.kind, got, err, tc.want)
		}
		if seen := faults.Seen(); len(seen.FailedFirst) != 4 {
			t.Errorf("%s: %d discovery requests failed (%q), want 4", tc.kind, len(seen.FailedFirst), seen.FailedFirst)
		}
	}
}
