package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/bmlb/cluster-network-operator/pkg/operator"
)

// openShiftNetworkOperator is what OpenShift's own network operator ships and
// renders (testdata/openshift-network-operator.yaml says from which commit).
type openShiftNetworkOperator struct {
	Files     []string `json:"files"`
	Objects   []string `json:"objects"`
	Rendered  []string `json:"rendered"`
	ImageTags []string `json:"imageTags"`
	Lease     string   `json:"lease"`
}

// A real OpenShift payload holds the platform's network operator (the CNO)
// beside this one: the cluster-version operator would give two components'
// manifests of one name, or one object, to both, and fight over them (the
// CNO's ClusterRoleBinding cluster-network-operator binds cluster-admin). No
// file name, object, image tag or Lease of the manifests, and no namespace or
// cluster-wide role the operator renders, is the CNO's.
func TestBesideOpenShiftsNetworkOperator(t *testing.T) {
	var cno openShiftNetworkOperator
	data, err := os.ReadFile(filepath.Join("testdata", "openshift-network-operator.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.UnmarshalStrict(data, &cno); err != nil {
		t.Fatal(err)
	}
	files, err := os.ReadDir(manifestsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		// image-references is every component's: the release tooling reads it
		// from each component's image, and applies none.
		if f.Name() != "image-references" && slices.Contains(cno.Files, f.Name()) {
			t.Errorf("manifests/%s is also the CNO's manifest", f.Name())
		}
	}
	theirs := slices.Concat(cno.Objects, cno.Rendered)
	ours := slices.Concat(readManifests(t), renderMetalLB(t))
	for _, o := range ours {
		if id := identity(o); slices.Contains(theirs, id) {
			t.Errorf("%s is also the CNO's", id)
		}
	}
	for _, tag := range imageTags(t) {
		if slices.Contains(cno.ImageTags, tag) {
			t.Errorf("image-references: the tag %s is also the CNO's", tag)
		}
	}
	if lease := operator.DefaultOptions().OperatorNamespace + "/" + operator.LeaseName; lease == cno.Lease {
		t.Errorf("the leader Lease %s is also the CNO's", lease)
	}
}

// identity is an object as the CNO's list names it.
func identity(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetKind() + " " + o.GetName()
	}
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// imageTags are the tags of manifests/image-references.
func imageTags(t *testing.T) []string {
	t.Helper()
	var refs struct {
		Spec struct {
			Tags []struct {
				Name string `json:"name"`
			} `json:"tags"`
		} `json:"spec"`
	}
	if err := sigsyaml.Unmarshal([]byte(readFile(t, "image-references")), &refs); err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, tag := range refs.Spec.Tags {
		tags = append(tags, strings.TrimSpace(tag.Name))
	}
	if len(tags) == 0 {
		t.Fatal("image-references has no tag")
	}
	return tags
}
