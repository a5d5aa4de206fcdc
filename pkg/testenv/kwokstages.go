package testenv

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// podReadyStage is the stage of kwok's release that makes a pending pod
// running and ready.
const podReadyStage = "pod-ready"

// kwokStages returns the file of kwok's stages to run: the release's, or,
// with podsReadyAfter, a copy in Dir whose pod-ready stage is delayed by it.
func (e *Env) kwokStages(release string, podsReadyAfter time.Duration) (string, error) {
	if podsReadyAfter <= 0 {
		return release, nil
	}
	data, err := os.ReadFile(release)
	if err != nil {
		return "", err
	}
	delayed, err := delayPodReady(data, podsReadyAfter)
	if err != nil {
		return "", fmt.Errorf("%s: %w", release, err)
	}
	file := filepath.Join(e.Dir, "kwok-stages.yaml")
	return file, os.WriteFile(file, delayed, 0o600)
}

// delayPodReady returns the stages with the pod-ready stage delayed.
func delayPodReady(stages []byte, after time.Duration) ([]byte, error) {
	docs := bytes.Split(stages, []byte("\n---\n"))
	for i, doc := range docs {
		stage := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &stage.Object); err != nil {
			return nil, err
		}
		if stage.GetKind() != "Stage" || stage.GetName() != podReadyStage {
			continue
		}
		if err := unstructured.SetNestedField(stage.Object, after.Milliseconds(), "spec", "delay", "durationMilliseconds"); err != nil {
			return nil, err
		}
		var err error
		if docs[i], err = yaml.Marshal(stage.Object); err != nil {
			return nil, err
		}
		return bytes.Join(docs, []byte("\n---\n")), nil
	}
	return nil, fmt.Errorf("no %s stage to delay", podReadyStage)
}
