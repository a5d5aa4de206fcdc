package metallb

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/bmlb/cluster-network-operator/pkg/apply"
	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/manifests"
	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// InstallAPI creates the MetalLB object's CRD if it does not exist, so that
// the module can watch MetalLB objects from its start, wherever the operator
// was installed from. One that exists is left to the reconcile: it may be
// another MetalLB operator's, whose own fields applying this one's schema
// would prune from the user's object.
func InstallAPI(ctx context.Context, c client.Client) error {
	objs, err := manifests.Render(manifests.Settings{}, "") // the CRD depends on no setting
	if err != nil {
		return err
	}
	i := slices.IndexFunc(objs, func(o *unstructured.Unstructured) bool {
		return o.GroupVersionKind() == objects.CustomResourceDefinition && o.GetName() == manifests.MetalLBCRD
	})
	if i < 0 {
		return fmt.Errorf("bindata/metallb holds no CRD %s", manifests.MetalLBCRD)
	}
	live := objects.Metadata(objects.CustomResourceDefinition)
	err = c.Get(ctx, client.ObjectKeyFromObject(objs[i]), live)
	if !apierrors.IsNotFound(err) {
		return err
	}
	_, err = (&apply.Applier{Client: c, FieldOwner: manifests.FieldOwner}).Write(ctx, objs[i:i+1], func(*unstructured.Unstructured) bool { return false })
	return err
}
