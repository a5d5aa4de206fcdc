package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// The annotations OpenShift's cluster-policy-controller gives every
// namespace, and the blocks it takes the ranges from: 10,000 IDs each, from
// 1,000,000,000 on.
const (
	uidRangeAnnotation = "openshift.io/sa.scc.uid-range"
	groupsAnnotation   = "openshift.io/sa.scc.supplemental-groups"
	mcsAnnotation      = "openshift.io/sa.scc.mcs"
	firstID            = 1_000_000_000
	blockSize          = 10_000
)

// allocateNamespaceRanges gives each namespace without a UID range the next
// free block, as the cluster-policy-controller does: restricted-v2 runs a
// namespace's pods with a UID from its range, and refuses one outside it.
func allocateNamespaceRanges(ctx context.Context, kube kubernetes.Interface) {
	factory := informers.NewSharedInformerFactory(kube, 0)
	used := map[int]bool{}
	allocate := func(obj any) {
		ns, ok := obj.(*corev1.Namespace)
		if !ok {
			return
		}
		if block, ok := blockOf(ns.Annotations[uidRangeAnnotation]); ok {
			used[block] = true
			return
		}
		block := 0
		for used[block] {
			block++
		}
		if err := annotate(ctx, kube, ns.Name, block); err != nil {
			log.Printf("namespace %s: %v", ns.Name, err)
			return
		}
		used[block] = true
	}
	// The informer calls its handlers one at a time: used needs no lock.
	if _, err := factory.Core().V1().Namespaces().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: allocate, UpdateFunc: func(_, obj any) { allocate(obj) },
	}); err != nil {
		log.Fatal(err)
	}
	factory.Start(ctx.Done())
}

// blockOf reads the block of a "first/size" UID range.
func blockOf(uidRange string) (int, bool) {
	first, _, ok := strings.Cut(uidRange, "/")
	id, err := strconv.Atoi(first)
	if !ok || err != nil || id < firstID {
		return 0, false
	}
	return (id - firstID) / blockSize, true
}

// annotate gives a namespace the ranges of a block: UIDs and supplemental
// groups from it, and SELinux categories of its own.
func annotate(ctx context.Context, kube kubernetes.Interface, namespace string, block int) error {
	ids := fmt.Sprintf("%d/%d", firstID+block*blockSize, blockSize)
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		uidRangeAnnotation: ids, groupsAnnotation: ids, mcsAnnotation: fmt.Sprintf("s0:c%d,c%d", block/1000+1, block%1000+2),
	}}})
	if err != nil {
		return err
	}
	_, err = kube.CoreV1().Namespaces().Patch(ctx, namespace, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}
