package metallb

import (
	"fmt"

	"github.com/distribution/reference"
)

// The operator's environment variables that name what it deploys.
const (
	ControllerImageEnv = "METALLB_CONTROLLER_IMAGE"
	SpeakerImageEnv    = "METALLB_SPEAKER_IMAGE"
	ReleaseVersionEnv  = "RELEASE_VERSION"
)

// UpstreamVersion is the MetalLB release the templates follow; its images are
// deployed when the operator's environment names none.
const UpstreamVersion = "v0.16.1"

// Images are the images MetalLB runs and the release they belong to.
type Images struct {
	Controller     string
	Speaker        string
	ReleaseVersion string
}

// ImagesFromEnv reads the images and the release version from the operator's
// environment, once at start. An unset image is upstream's at UpstreamVersion;
// an unset release version is defaultVersion (the operator's own). A malformed
// image reference is an error naming the variable.
func ImagesFromEnv(getenv func(string) string, defaultVersion string) (Images, error) {
	images := Images{
		Controller:     "quay.io/metallb/controller:" + UpstreamVersion,
		Speaker:        "quay.io/metallb/speaker:" + UpstreamVersion,
		ReleaseVersion: defaultVersion,
	}
	for env, dst := range map[string]*string{
		ControllerImageEnv: &images.Controller,
		SpeakerImageEnv:    &images.Speaker,
		ReleaseVersionEnv:  &images.ReleaseVersion,
	} {
		if v := getenv(env); v != "" {
			*dst = v
		}
	}
	if err := validateImage(ControllerImageEnv, images.Controller); err != nil {
		return Images{}, err
	}
	if err := validateImage(SpeakerImageEnv, images.Speaker); err != nil {
		return Images{}, err
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
