package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
)

// nextVersion is the release the operator is upgraded to.
const nextVersion = "0.0.2-snapshot"

// nextRelease is the environment of the next release's operator: another
// version, and MetalLB's images of another tag.
func nextRelease() []string {
	tag := release.MetalLB + "-1"
	return []string{manifests.ReleaseVersionEnv + "=" + nextVersion,
		manifests.ControllerImageEnv + "=quay.io/metallb/controller:" + tag,
		manifests.SpeakerImageEnv + "=quay.io/metallb/speaker:" + tag}
}

// upgraded is what was measured of the operator's upgrade.
type upgraded struct {
	took       time.Duration // from the new operator's start to the version reported
	speakers   rollout       // from the DaemonSet's template change
	versionLag time.Duration // from the last speaker available to the version reported
	writes     writes
	cpu        time.Duration // the new operator's CPU time to the version reported
	cpuBefore  time.Duration // of which before the DaemonSet's template changed
	peakRSS    int64
}

// upgrade restarts the operator as the next release and measures it until
// the speakers have rolled out, the version is reported and the operator has
// written nothing for quietFor.
func upgrade(ctx context.Context, b *binarybench.Bench, c config, logFile string) (upgraded, error) {
	var up upgraded
	s, err := watchSpeakers(ctx, b)
	if err != nil {
		return up, err
	}
	defer s.w.Stop()
	from := s.generation()
	if err := b.Operator.Stop(); err != nil {
		return up, fmt.Errorf("stopping the operator: %v", err)
	}
	b.OperatorEnviron = nextRelease()
	if c.cpuProfile != "" {
		b.OperatorFlags = []string{"--pprof-bind-address=" + binarybench.PprofAddr}
	}
	start := time.Now()
	if err := b.StartOperator(ctx, c.binary, logFile); err != nil {
		return up, err
	}
	pid := b.Operator.PID()
	var versioned time.Time
	g, gctx := errgroup.WithContext(ctx)
	if c.cpuProfile != "" {
		g.Go(func() error { return binarybench.SaveProfile(ctx, "profile?seconds="+cpuProfileSeconds, c.cpuProfile) })
	}
	g.Go(func() (err error) {
		up.speakers, err = s.waitRolledOut(gctx, from, c.nodes, func() { up.cpuBefore, _ = binarybench.CPUTime(pid) })
		return err
	})
	g.Go(func() (err error) {
		if versioned, err = waitVersion(gctx, b, nextVersion); err == nil {
			up.cpu, err = binarybench.CPUTime(pid)
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return up, err
	}
	up.took, up.versionLag = versioned.Sub(start), versioned.Sub(up.speakers.done)
	if err := waitQuiet(ctx, b.Env.AuditLog); err != nil {
		return up, err
	}
	if up.writes, err = countWrites(b.Env.AuditLog, start); err != nil {
		return up, err
	}
	mem, err := binarybench.ProcessMemory(pid)
	up.peakRSS = mem.Peak
	return up, err
}

// restartSpeakers stops the operator and restarts the speakers as `kubectl
// rollout restart` does, and times the DaemonSet controller's rollout.
func restartSpeakers(ctx context.Context, b *binarybench.Bench, nodes int) (rollout, error) {
	if err := b.Operator.Stop(); err != nil {
		return rollout{}, fmt.Errorf("stopping the operator: %v", err)
	}
	s, err := watchSpeakers(ctx, b)
	if err != nil {
		return rollout{}, err
	}
	defer s.w.Stop()
	from := s.generation()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	_, err = b.Client.AppsV1().DaemonSets(binarybench.MetalLBNamespace).Patch(ctx, "speaker", types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return rollout{}, err
	}
	return s.waitRolledOut(ctx, from, nodes, nil)
}
