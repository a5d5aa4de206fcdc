package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// quietFor is how long the operator must have written nothing for its
// writes to be counted.
const quietFor = metallb.QuietAfter

// writes counts the operator's writes by verb and kind, those refused apart,
// its Lease's renewals aside.
type writes struct {
	total  int
	byKind map[string]int // "patch namespaces"
	leases int
}

func (w writes) String() string {
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(w.byKind)) {
		kinds = append(kinds, fmt.Sprintf("%d %s", w.byKind[k], k))
	}
	return fmt.Sprintf("%s; and %d to its Lease", strings.Join(kinds, ", "), w.leases)
}

// isLease tells a leader Lease's renewal from the operator's other writes.
func isLease(r testenv.Request) bool { return r.Resource == "leases" }

// countWrites counts the operator's writes since a time.
func countWrites(auditLog string, since time.Time) (writes, error) {
	requests, err := testenv.ReadAudit(auditLog, operatorUser)
	w := writes{byKind: map[string]int{}}
	for _, r := range requests {
		switch {
		case !r.IsWrite() || r.Received.Before(since):
		case isLease(r):
			w.leases++
		default:
			w.total++
			kind := r.Verb + " " + r.GroupResource()
			if r.Code >= 400 {
				kind += fmt.Sprintf(" (refused: %d)", r.Code)
			}
			w.byKind[kind]++
		}
	}
	return w, err
}

// waitQuiet waits until the operator has written nothing, but to its Lease,
// for quietFor.
func waitQuiet(ctx context.Context, auditLog string) error {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, false, func(context.Context) (bool, error) {
		requests, err := testenv.ReadAudit(auditLog, operatorUser)
		for _, r := range slices.Backward(requests) {
			if r.IsWrite() && !isLease(r) {
				return time.Since(r.Received) > quietFor, err
			}
		}
		return true, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the operator to write nothing for %s: %v", quietFor, err)
	}
	return nil
}
