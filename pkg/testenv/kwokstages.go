package testenv

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// podReadyStage is the stage of kwok's release that makes a pending pod
// running and ready.
const podReadyStage = "pod-ready"

// kwokStages returns the stages of kwok's release, in the file given, with
// the pod-ready stage delayed by podsReadyAfter.
func kwokStages(file string, podsReadyAfter time.Duration) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if podsReadyAfter <= 0 {
		return data, nil
	}
	docs := bytes.Split(data, []byte("\n---\n"))
	for i, doc := range docs {
		stage := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &stage.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if stage.GetKind() != "Stage" || stage.GetName() != podReadyStage {
			continue
		}
		if err := unstructured.SetNestedField(stage.Object, podsReadyAfter.Milliseconds(), "spec", "delay", "durationMilliseconds"); err != nil {
			return nil, err
		}
		if docs[i], err = yaml.Marshal(stage.Object); err != nil {
			return nil, err
		}
		return bytes.Join(docs, []byte("\n---\n")), nil
	}
	return nil, fmt.Errorf("%s has no %s stage to delay", file, podReadyStage)
}
