package operator

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"

	"github.com/bmlb/cluster-network-operator/pkg/transient"
)

// PodNameEnv names the variable the install manifests set to the pod's name
// (the downward API): the leader-election identity.
const PodNameEnv = "POD_NAME"

// leaderIdentity is who holds the Lease: the pod, by its name, so that a
// container restarted in the same pod (a crash, an OOM kill) renews its own
// Lease at once rather than wait it out as a stranger; another pod still
// waits for the Lease to expire. Out of a pod, a name of its own per process.
func leaderIdentity(getenv func(string) string) (string, error) {
	if pod := getenv(PodNameEnv); pod != "" {
		return pod, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", err
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// newLeaderLock is the operator's Lease lock, held under identity, whose
// requests that fail on a passing error are tried again within a couple of
// seconds (retryingLock). Its Events ("... became leader") are recorded until
// ctx ends.
func newLeaderLock(ctx context.Context, cfg *rest.Config, namespace, identity string, t LeaseTimings) (resourcelock.Interface, error) {
	cfg = rest.AddUserAgent(rest.CopyConfig(cfg), "leader-election")
	// As controller-runtime does: one hung request must not cost the Lease.
	cfg.Timeout = max(t.RenewDeadline/2, time.Second)
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	events := record.NewBroadcaster(record.WithContext(ctx))
	events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.CoreV1().Events(namespace)})
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, LeaseName, c.CoreV1(), c.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: identity, EventRecorder: events.NewRecorder(clientgoscheme.Scheme, corev1.EventSource{Component: identity})})
	if err != nil {
		return nil, err
	}
	return &retryingLock{lock}, nil
}

// leaseRetryBackoff spaces the tries of a Lease request that failed on a
// passing error: 0.2 s, 0.4 s, 0.8 s, within 1.4 s in all.
var leaseRetryBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 4}

// retryingLock tries a Lease request again, with backoff, when it failed on
// an error that passes (a 5xx, a 429, a broken connection), and an update
// that conflicted when the Lease, read again, is free or already its own.
// client-go's elector waits a whole retry period after any failed attempt
// (26 s with OpenShift's timings, jittered up to 57 s), which is right for
// waiting on a Lease another replica holds, and too long for one error.
type retryingLock struct{ resourcelock.Interface }

func (l *retryingLock) Get(ctx context.Context) (*resourcelock.LeaderElectionRecord, []byte, error) {
	var record *resourcelock.LeaderElectionRecord
	var raw []byte
	err := l.retry(ctx, func() (err error) {
		record, raw, err = l.Interface.Get(ctx)
		return err
	})
	return record, raw, err
}

func (l *retryingLock) Create(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.retry(ctx, func() error { return l.Interface.Create(ctx, ler) })
}

// Update tries again after a conflict when the Lease, read again (which
// gives the lock the Lease's new version), is held by nobody or by this
// identity: a replica that released it on SIGTERM between the elector's read
// and its write, or its own renewal the elector did not see.
func (l *retryingLock) Update(ctx context.Context, ler resourcelock.LeaderElectionRecord) error {
	return l.retry(ctx, func() error {
		err := l.Interface.Update(ctx, ler)
		if !apierrors.IsConflict(err) {
			return err
		}
		record, _, getErr := l.Interface.Get(ctx)
		if getErr != nil || record.HolderIdentity != "" && record.HolderIdentity != l.Identity() {
			return err
		}
		return errRetryUpdate{err}
	})
}

// errRetryUpdate marks a conflict worth another try.
type errRetryUpdate struct{ error }

func (e errRetryUpdate) Unwrap() error { return e.error }

// retry runs do until it succeeds, fails on an error that lasts, or the
// backoff ends; it returns do's last error.
func (l *retryingLock) retry(ctx context.Context, do func() error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, leaseRetryBackoff, func(context.Context) (bool, error) {
		last = do()
		return last == nil || !passing(last), nil
	})
	if err != nil && last == nil {
		return fmt.Errorf("lease: %w", err)
	}
	if retry, ok := last.(errRetryUpdate); ok {
		return retry.error
	}
	return last
}

// passing tells whether a request that failed on err may succeed if tried
// again at once: a conflict only when Update found it worth another try.
func passing(err error) bool {
	if _, ok := err.(errRetryUpdate); ok {
		return true
	}
	return transient.Is(err) && !apierrors.IsConflict(err)
}
