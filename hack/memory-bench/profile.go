package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
)

// pprofAddr is where -heap-profile has the operator serve its profiles.
const pprofAddr = "127.0.0.1:6060"

// writeHeapProfile saves the operator's heap profile, read after measuring so
// that reading it does not change the figures.
func writeHeapProfile(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+pprofAddr+"/debug/pprof/heap", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reading the heap profile: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading the heap profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	fmt.Printf("heap profile in %s (go tool pprof -sample_index=inuse_space %s)\n", path, path)
	return f.Close()
}
