// Command backend is the workload of the end-to-end stories whose traffic is
// real: an HTTP server on $PORT (8080 by default) that answers every request
// with its pod's name ($POD_NAME), so that a client can tell which pod kube-proxy
// took it to.
package main

import (
	"cmp"
	"fmt"
	"log"
	"net/http"
	"os"
)

func main() {
	name := cmp.Or(os.Getenv("POD_NAME"), "backend")
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, name)
	})
	log.Fatal(http.ListenAndServe(":"+cmp.Or(os.Getenv("PORT"), "8080"), nil))
}
