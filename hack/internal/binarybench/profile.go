package binarybench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
)

// PprofAddr is where the operator serves its profiles when a benchmark asks
// for one (--pprof-bind-address).
const PprofAddr = "127.0.0.1:6060"

// SaveProfile saves one of the operator's profiles, for `go tool pprof`:
// "heap", or "profile?seconds=N" (its CPU for the next N seconds).
func SaveProfile(ctx context.Context, profile, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+PprofAddr+"/debug/pprof/"+profile, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reading the %s profile: %v", profile, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading the %s profile: %s", profile, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	fmt.Printf("%s profile in %s (go tool pprof %s)\n", profile, path, path)
	return f.Close()
}
