package main

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
)

// rolloutTimeout bounds one rollout over every node: 2,000 take about two
// minutes.
const rolloutTimeout = 10 * time.Minute

var metallbs = schema.GroupVersionResource{Group: "metallb.io", Version: "v1beta1", Resource: "metallbs"}

// rollout is what a watch of the speaker DaemonSet saw of one rollout.
type rollout struct {
	took            time.Duration // from the template's change to the last speaker updated and available
	done            time.Time     // when the watch saw the last speaker available
	mostUnavailable int64         // the most speakers unavailable at once
}

// speakers follows the speaker DaemonSet.
type speakers struct{ w *binarybench.Watch }

func watchSpeakers(ctx context.Context, b *binarybench.Bench) (speakers, error) {
	w, err := binarybench.NewWatch(ctx, b.Dynamic.Resource(binarybench.DaemonSets).Namespace(binarybench.MetalLBNamespace), binarybench.ByName("speaker"))
	return speakers{w}, err
}

// generation is the DaemonSet's as the watch saw it last, 0 while it does not
// exist.
func (s speakers) generation() int64 {
	if ds := s.w.Get("speaker"); ds != nil {
		return ds.GetGeneration()
	}
	return 0
}

// waitRolledOut waits until the DaemonSet, changed since generation after,
// runs an updated, available speaker on each of nodes, and times that from
// the change, calling changed (when given) once the watch sees it.
func (s speakers) waitRolledOut(ctx context.Context, after int64, nodes int, changed func()) (rollout, error) {
	ctx, cancel := context.WithTimeout(ctx, rolloutTimeout)
	defer cancel()
	var r rollout
	var change time.Time
	err := s.w.Until(ctx, func(o binarybench.Objects) bool {
		ds := o["speaker"]
		if ds == nil || ds.GetGeneration() <= after {
			return false
		}
		if change.IsZero() {
			change = time.Now()
			if changed != nil {
				changed()
			}
		}
		status := func(field string) int64 { n, _, _ := unstructured.NestedInt64(ds.Object, "status", field); return n }
		r.mostUnavailable = max(r.mostUnavailable, status("numberUnavailable"))
		return status("observedGeneration") == ds.GetGeneration() && status("desiredNumberScheduled") == int64(nodes) &&
			status("updatedNumberScheduled") == int64(nodes) && status("numberAvailable") == int64(nodes)
	})
	if err != nil {
		return r, fmt.Errorf("waiting for the speakers to roll out on %d nodes: %v", nodes, err)
	}
	r.done = time.Now()
	r.took = r.done.Sub(change)
	return r, nil
}

// waitVersion waits until the MetalLB object reports the version, and
// returns when it saw that.
func waitVersion(ctx context.Context, b *binarybench.Bench, version string) (time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, rolloutTimeout)
	defer cancel()
	err := b.WaitFor(ctx, metallbs, binarybench.MetalLBNamespace, "metallb", func(o *unstructured.Unstructured) bool {
		v, _, _ := unstructured.NestedString(o.Object, "status", "version")
		return v == version
	})
	return time.Now(), err
}

// activate starts the operator, configures MetalLB and waits until the
// speakers run on every node and the version is reported.
func activate(ctx context.Context, b *binarybench.Bench, c config, logFile string) error {
	s, err := watchSpeakers(ctx, b)
	if err != nil {
		return err
	}
	defer s.w.Stop()
	if err := b.StartOperator(ctx, c.binary, logFile); err != nil {
		return err
	}
	if err := createMetalLB(ctx, b, c.maxUnavailable); err != nil {
		return err
	}
	if err := b.CreatePool(ctx, binarybench.MetalLBNamespace, "bench"); err != nil {
		return err
	}
	r, err := s.waitRolledOut(ctx, 0, c.nodes, nil)
	if err != nil {
		return err
	}
	if _, err := waitVersion(ctx, b, binarybench.ReleaseVersion); err != nil {
		return err
	}
	fmt.Printf("activated: speakers available on %d nodes %s after their DaemonSet was created\n", c.nodes, ms(r.took))
	return nil
}

func createMetalLB(ctx context.Context, b *binarybench.Bench, maxUnavailable string) error {
	v := intstr.Parse(maxUnavailable)
	var value any = v.StrVal
	if v.Type == intstr.Int {
		value = int64(v.IntVal)
	}
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "metallb.io/v1beta1",
		"kind":       "MetalLB",
		"metadata":   map[string]any{"name": "metallb", "namespace": binarybench.MetalLBNamespace},
		"spec":       map[string]any{"speakerConfig": map[string]any{"maxUnavailable": value}},
	}}
	_, err := b.Dynamic.Resource(metallbs).Namespace(binarybench.MetalLBNamespace).Create(ctx, o, metav1.CreateOptions{})
	return err
}
