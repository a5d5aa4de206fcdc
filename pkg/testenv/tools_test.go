package testenv

import (
	"os"
	"strings"
	"testing"
)

// The tests' image tag of the previous release is the release the tools build.
func TestPreviousMetalLBIsThePinnedOne(t *testing.T) {
	data, err := os.ReadFile("../../hack/tools/metallb-previous/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if want := "require go.universe.tf/metallb " + PreviousMetalLB + "\n"; !strings.Contains(string(data), want) {
		t.Errorf("hack/tools/metallb-previous/go.mod does not pin %s:\n%s", PreviousMetalLB, data)
	}
}
