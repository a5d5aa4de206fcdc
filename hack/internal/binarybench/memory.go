package binarybench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Memory is what the kernel says of a process's memory, in bytes.
type Memory struct {
	RSS  int64 // VmRSS: resident now
	Peak int64 // VmHWM: the most resident at once
	Anon int64 // RssAnon: of RSS, the heap, stacks and other private memory
	File int64 // RssFile: of RSS, mapped files: mostly the binary's own pages
}

// ProcessMemory reads a process's memory from /proc/<pid>/status.
func ProcessMemory(pid int) (Memory, error) {
	file := fmt.Sprintf("/proc/%d/status", pid)
	f, err := os.Open(file)
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	var m Memory
	fields := map[string]*int64{"VmRSS:": &m.RSS, "VmHWM:": &m.Peak, "RssAnon:": &m.Anon, "RssFile:": &m.File}
	s := bufio.NewScanner(f)
	for s.Scan() {
		// "VmRSS:	   63412 kB"
		words := strings.Fields(s.Text())
		if len(words) != 3 || words[2] != "kB" || fields[words[0]] == nil {
			continue
		}
		kb, err := strconv.ParseInt(words[1], 10, 64)
		if err != nil {
			return Memory{}, fmt.Errorf("%s: %q: %v", file, s.Text(), err)
		}
		*fields[words[0]] = kb << 10
		delete(fields, words[0])
	}
	if err := s.Err(); err != nil {
		return Memory{}, err
	}
	if len(fields) > 0 {
		return Memory{}, fmt.Errorf("%s lacks some of VmRSS, VmHWM, RssAnon, RssFile", file)
	}
	return m, nil
}

// MiB formats bytes in MiB, one decimal.
func MiB(bytes int64) string { return fmt.Sprintf("%.1f MiB", float64(bytes)/(1<<20)) }
