// Command templates is the manager of ../manager with the operator's
// templating linked in: text/template and sprig.
package main

import (
	"os"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/bmlb/cluster-network-operator/hack/memory-floor/floor"
)

func main() { floor.Main(render) }

// render executes a template over the manager: reaching its fields and
// methods through reflection, as the operator's templates reach their data.
func render(mgr manager.Manager) error {
	t, err := template.New("floor").Funcs(sprig.TxtFuncMap()).Parse(`{{ printf "%T" . | lower }}` + "\n")
	if err != nil {
		return err
	}
	return t.Execute(os.Stdout, mgr)
}
