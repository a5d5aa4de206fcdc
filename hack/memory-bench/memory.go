package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// memory is what the kernel says of a process's memory, in bytes.
type memory struct {
	rss  int64 // VmRSS: resident now
	peak int64 // VmHWM: the most resident at once
	anon int64 // RssAnon: of rss, the heap, stacks and other private memory
	file int64 // RssFile: of rss, mapped files: mostly the binary's own pages
}

// processMemory reads a process's memory from /proc/<pid>/status.
func processMemory(pid int) (memory, error) {
	file := fmt.Sprintf("/proc/%d/status", pid)
	f, err := os.Open(file)
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	fields := map[string]*int64{"VmRSS:": &m.rss, "VmHWM:": &m.peak, "RssAnon:": &m.anon, "RssFile:": &m.file}
	s := bufio.NewScanner(f)
	for s.Scan() {
		// "VmRSS:	   63412 kB"
		words := strings.Fields(s.Text())
		if len(words) != 3 || words[2] != "kB" || fields[words[0]] == nil {
			continue
		}
		kb, err := strconv.ParseInt(words[1], 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("%s: %q: %v", file, s.Text(), err)
		}
		*fields[words[0]] = kb << 10
		delete(fields, words[0])
	}
	if err := s.Err(); err != nil {
		return memory{}, err
	}
	if len(fields) > 0 {
		return memory{}, fmt.Errorf("%s lacks some of VmRSS, VmHWM, RssAnon, RssFile", file)
	}
	return m, nil
}
