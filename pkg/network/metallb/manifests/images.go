package manifests

import (
	"fmt"

	"github.com/distribution/reference"

	"github.com/bmlb/cluster-network-operator/pkg/network/metallb/release"
)

// The operator's environment variables that name what it deploys.
const (
	ControllerImageEnv = "METALLB_CONTROLLER_IMAGE"
	SpeakerImageEnv    = "METALLB_SPEAKER_IMAGE"
	ReleaseVersionEnv  = "RELEASE_VERSION"
	// The frr-k8s BGP backend's images: frr-k8s's own, and FRR's.
	FRRK8sImageEnv = "FRRK8S_IMAGE"
	FRRImageEnv    = "FRR_IMAGE"
)

// The images of frr-k8s's release, and of FRR as that release's manifest runs it.
const (
	upstreamFRRK8sImage = "quay.io/metallb/frr-k8s:" + release.FRRK8s
	upstreamFRRImage    = "quay.io/frrouting/frr:10.4.3"
)

// Images are the images MetalLB runs and the release they belong to.
type Images struct {
	Controller     string
	Speaker        string
	FRRK8s, FRR    string
	ReleaseVersion string
}

// ImagesFromEnv reads the images and the release version from the operator's
// environment, once at start. An unset image is upstream's at release.MetalLB,
// the release the templates follow; an unset release version is
// defaultVersion (the operator's own). A malformed image reference is an
// error naming the variable.
func ImagesFromEnv(getenv func(string) string, defaultVersion string) (Images, error) {
	images := Images{
		Controller:     "quay.io/metallb/controller:" + release.MetalLB,
		Speaker:        "quay.io/metallb/speaker:" + release.MetalLB,
		FRRK8s:         upstreamFRRK8sImage,
		FRR:            upstreamFRRImage,
		ReleaseVersion: defaultVersion,
	}
	for _, v := range []struct {
		env   string
		dst   *string
		image bool
	}{
		{ControllerImageEnv, &images.Controller, true}, {SpeakerImageEnv, &images.Speaker, true},
		{FRRK8sImageEnv, &images.FRRK8s, true}, {FRRImageEnv, &images.FRR, true},
		{ReleaseVersionEnv, &images.ReleaseVersion, false},
	} {
		if value := getenv(v.env); value != "" {
			*v.dst = value
		}
		if v.image {
			if err := validateImage(v.env, *v.dst); err != nil {
				return Images{}, err
			}
		}
	}
	if images.ReleaseVersion == "" {
		return Images{}, fmt.Errorf("%s is empty and the operator has no version of its own to use", ReleaseVersionEnv)
	}
	return images, nil
}

func validateImage(env, image string) error {
	if _, err := reference.ParseNormalizedNamed(image); err != nil {
		return fmt.Errorf("%s=%q is not a valid image reference: %v", env, image, err)
	}
	return nil
}
