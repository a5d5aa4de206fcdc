package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/bmlb/cluster-network-operator/hack/internal/binarybench"
	"github.com/bmlb/cluster-network-operator/hack/memory-floor/floor"
	"github.com/bmlb/cluster-network-operator/pkg/testenv"
)

// operatorMarker is what the operator logs once its packages are
// initialized, before it has read anything.
const operatorMarker = "waiting for the Kubernetes API server"

// floors are the programs built here, by folder.
var floors = []string{"manager", "templates"}

func main() {
	binary := flag.String("binary", "bin/cluster-network-operator", "the operator binary (`make build`)")
	tries := flag.Int("tries", 5, "starts of each binary; the median RSS is reported")
	flag.Parse()
	if flag.NArg() > 0 || *tries < 1 {
		fmt.Fprintln(os.Stderr, "memory-floor: no arguments, and -tries at least 1")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *binary, *tries); err != nil {
		fmt.Fprintln(os.Stderr, "memory-floor:", err)
		os.Exit(2)
	}
}

func run(ctx context.Context, binary string, tries int) error {
	dir, err := os.MkdirTemp("", "memory-floor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	kubeconfig, err := testenv.ClosedPortKubeconfig(dir)
	if err != nil {
		return err
	}
	for _, name := range floors {
		if err := build(ctx, name, filepath.Join(dir, name)); err != nil {
			return err
		}
		args := []string{filepath.Join(dir, name)}
		if err := report(name, args, []string{"KUBECONFIG=" + kubeconfig}, floor.Marker, tries); err != nil {
			return err
		}
	}
	args := []string{binary, "start", "--kubeconfig=" + kubeconfig}
	return report(binary, args, binarybench.OperatorEnv(), operatorMarker, tries)
}

func build(ctx context.Context, floor, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./hack/memory-floor/"+floor)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %v", floor, err)
	}
	return nil
}

// report starts the binary tries times and prints its median resident set.
func report(name string, args, env []string, marker string, tries int) error {
	var seen []binarybench.Memory
	for range tries {
		m, err := initialized(args, env, marker)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		seen = append(seen, m)
	}
	slices.SortFunc(seen, func(a, b binarybench.Memory) int { return int(a.RSS - b.RSS) })
	m := seen[len(seen)/2]
	size, err := os.Stat(args[0])
	if err != nil {
		return err
	}
	fmt.Printf("%s (%.0f MB): RSS %s (anonymous %s, files %s), median of %d\n",
		name, float64(size.Size())/1e6, binarybench.MiB(m.RSS), binarybench.MiB(m.Anon), binarybench.MiB(m.File), tries)
	return nil
}

// initialized starts a binary, reads its memory once it has printed the
// marker, and kills it.
func initialized(args, env []string, marker string) (binarybench.Memory, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return binarybench.Memory{}, err
	}
	cmd.Stderr = cmd.Stdout // one stream: the operator logs to stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return binarybench.Memory{}, err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if strings.Contains(lines.Text(), marker) {
			m, err := binarybench.ProcessMemory(cmd.Process.Pid)
			go io.Copy(io.Discard, out) //nolint:errcheck // drained until killed
			return m, err
		}
	}
	return binarybench.Memory{}, fmt.Errorf("exited without printing %q", marker)
}
