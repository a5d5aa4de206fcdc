// The helper of the node runner's tests of the kubelet's rules
// (TestKubeletRules): a small static program that a container runs.
package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() { os.Exit(run(os.Args[1:])) }

// run prints its user, capabilities and
// no_new_privs from /proc/self/status, then
//
//	raw-socket       opens a packet socket (NET_RAW) and sleeps, or exits 1
//	serve PORT       serves /ok (200), /fail (500), /after?s=N (200 once it ran N s)
//	write-after N F  writes the file F once it ran N s, and sleeps
//	alloc MIB        allocates and touches MIB MiB, and sleeps
//	exists F         exits 0 if the file F exists, 1 if not (an exec probe)
//	exit CODE        exits with CODE
//	sleep            sleeps
func run(args []string) int {
	started := time.Now()
	status, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(status), "\n") {
		if key, _, _ := strings.Cut(line, ":"); key == "Uid" || key == "CapEff" || key == "CapBnd" || key == "NoNewPrivs" {
			fmt.Println(line)
		}
	}
	if len(args) == 0 {
		args = []string{"sleep"}
	}
	arg := func(i int) string { return args[min(i, len(args)-1)] }
	switch args[0] {
	case "raw-socket":
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		if err != nil {
			fmt.Println("raw socket:", err)
			return 1
		}
		unix.Close(fd)
		fmt.Println("raw socket: ok")
	case "serve":
		http.HandleFunc("/ok", func(http.ResponseWriter, *http.Request) {})
		http.HandleFunc("/fail", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
		http.HandleFunc("/after", func(w http.ResponseWriter, r *http.Request) {
			if s, _ := strconv.Atoi(r.URL.Query().Get("s")); time.Since(started) < time.Duration(s)*time.Second {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		})
		fmt.Println(http.ListenAndServe(":"+arg(1), nil))
		return 1
	case "write-after":
		s, _ := strconv.Atoi(arg(1))
		time.Sleep(time.Until(started.Add(time.Duration(s) * time.Second)))
		if err := os.WriteFile(arg(2), nil, 0o644); err != nil {
			fmt.Println(err)
			return 1
		}
	case "alloc":
		mib, _ := strconv.Atoi(arg(1))
		held := make([]byte, mib<<20)
		for i := range held {
			held[i] = 1
		}
		fmt.Println("allocated", len(held)>>20, "MiB")
	case "exists":
		if _, err := os.Stat(arg(1)); err != nil {
			return 1
		}
		return 0
	case "exit":
		code, _ := strconv.Atoi(arg(1))
		return code
	}
	for {
		time.Sleep(time.Hour)
	}
}
