package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Request is what the audit log tells of one request: enough to match RBAC,
// to count writes, and, for a watch, whether it is still open.
type Request struct {
	Verb, Group, Resource, Namespace, Name string
	Code                                   int
	Received                               time.Time
	Open                                   bool
}

func (r Request) String() string {
	where := "cluster-wide"
	if r.Namespace != "" {
		where = "in " + r.Namespace
	}
	return fmt.Sprintf("%s %s %s", r.Verb, r.GroupResource(), where)
}

// GroupResource is "resource.group", or "resource" in the core group; a
// subresource is part of the resource ("daemonsets/status").
func (r Request) GroupResource() string {
	return schema.GroupResource{Group: r.Group, Resource: r.Resource}.String()
}

// writeVerbs are the verbs that change what the API server stores.
var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// IsWrite tells whether the request asked to change something, whether or
// not the API server refused it.
func (r Request) IsWrite() bool { return IsWriteVerb(r.Verb) }

// IsWriteVerb tells whether an API verb changes what the API server stores.
func IsWriteVerb(verb string) bool { return slices.Contains(writeVerbs, verb) }

// auditEvent is what ReadAudit reads of an event of the audit log.
type auditEvent struct {
	AuditID string `json:"auditID"`
	Stage   string `json:"stage"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource, Subresource, APIGroup, Namespace, Name string
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestURI string    `json:"requestURI"`
	Received   time.Time `json:"requestReceivedTimestamp"`
}

func (e auditEvent) request() Request {
	resource := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		resource += "/" + e.ObjectRef.Subresource
	}
	return Request{Verb: e.Verb, Group: e.ObjectRef.APIGroup, Resource: resource,
		Namespace: e.ObjectRef.Namespace, Name: e.ObjectRef.Name, Code: e.ResponseStatus.Code, Received: e.Received,
		Open: e.Stage == "ResponseStarted"}
}

// ReadAudit returns the resource requests a user made, in the order the API
// server logged them, as RBAC authorizes them: a watch that starts with the
// initial events (client-go's informers list that way) is also the list it
// replaces, and a server-side apply that created its object is also a
// create. A watch is logged when it starts, and again when it ends: it is one
// request, Open until then. Discovery, which every user may do, is left out.
func ReadAudit(file, user string) ([]Request, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Request
	started := map[string]int{} // a watch's audit ID: its place in out
	scanner := bufio.NewScanner(f)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	for scanner.Scan() {
		var e auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		if e.User.Username != user || e.ObjectRef == nil {
			continue
		}
		if i, ok := started[e.AuditID]; ok {
			out[i].Open = false
			continue
		}
		r := e.request()
		if r.Open {
			started[e.AuditID] = len(out)
		}
		out = append(out, r)
		r.Open = false
		switch {
		case r.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true"):
			r.Verb = "list"
			out = append(out, r)
		case r.Verb == "patch" && r.Code == 201:
			r.Verb = "create"
			out = append(out, r)
		}
	}
	return out, scanner.Err()
}
