package binarybench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the times in /proc/<pid>/stat: USER_HZ, 100 on every
// architecture Linux runs Go programs on (sysconf(_SC_CLK_TCK) needs cgo).
const userHZ = 100

// CPUTime reads the CPU time a process has used, user and system, from
// /proc/<pid>/stat.
func CPUTime(pid int) (time.Duration, error) {
	file := fmt.Sprintf("/proc/%d/stat", pid)
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	// "pid (comm) state ppid ...": comm may hold spaces; utime and stime are
	// the 14th and 15th fields, the 12th and 13th after comm's ")".
	_, rest, ok := strings.Cut(string(data), ") ")
	words := strings.Fields(rest)
	if !ok || len(words) < 13 {
		return 0, fmt.Errorf("%s: %q", file, data)
	}
	var ticks int64
	for _, w := range words[11:13] {
		n, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %v", file, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
