package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	coreapi "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install" // the internal Pod, its conversions and defaults
)

// serve answers one AdmissionReview.
func serve(w http.ResponseWriter, r *http.Request, p plugin) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
		return
	}
	review.Response = admit(r.Context(), review.Request, p)
	review.Response.UID = review.Request.UID
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&review)
}

// admit runs the plugin's Admit, then its Validate, on the internal form of
// the pod, as OpenShift's API server does, and answers with what Admit made
// of the pod: its spec (the security contexts the SCC assigns) and its
// annotations (openshift.io/scc names the SCC that admitted it).
func admit(ctx context.Context, req *admissionv1.AdmissionRequest, p plugin) *admissionv1.AdmissionResponse {
	pod, err := internalPod(req.Object.Raw)
	if err != nil {
		return deny(err)
	}
	var old runtime.Object
	if len(req.OldObject.Raw) > 0 {
		if old, err = internalPod(req.OldObject.Raw); err != nil {
			return deny(err)
		}
	}
	requester := &user.DefaultInfo{Name: req.UserInfo.Username, UID: req.UserInfo.UID, Groups: req.UserInfo.Groups}
	attrs := admission.NewAttributesRecord(pod, old, coreapi.Kind("Pod").WithVersion(""), req.Namespace, req.Name,
		schema.GroupVersionResource{Version: "v1", Resource: req.Resource.Resource}, req.SubResource,
		admission.Operation(req.Operation), nil, req.DryRun != nil && *req.DryRun, requester)
	if err := p.Admit(ctx, attrs, nil); err != nil {
		return deny(err)
	}
	if err := p.Validate(ctx, attrs, nil); err != nil {
		return deny(err)
	}
	var admitted corev1.Pod
	if err := legacyscheme.Scheme.Convert(pod, &admitted, nil); err != nil {
		return deny(err)
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "replace", "path": "/spec", "value": admitted.Spec},
		{"op": "add", "path": "/metadata/annotations", "value": admitted.Annotations},
	})
	if err != nil {
		return deny(err)
	}
	jsonPatch := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &jsonPatch}
}

// internalPod is a pod, defaulted as the API server has it, in the internal
// form the plugin reads.
func internalPod(raw []byte) (*coreapi.Pod, error) {
	var external corev1.Pod
	if err := json.Unmarshal(raw, &external); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(&external)
	var pod coreapi.Pod
	if err := legacyscheme.Scheme.Convert(&external, &pod, nil); err != nil {
		return nil, err
	}
	return &pod, nil
}

// deny refuses with the plugin's own answer, as the API server gives it.
func deny(err error) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{Result: &metav1.Status{
		Status: metav1.StatusFailure, Message: err.Error(), Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden,
	}}
}
