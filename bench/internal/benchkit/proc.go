// Package benchkit holds what the end-to-end benchmarks under bench/ share:
// a skiff binary built as `make build` builds it, a process's CPU and RSS
// from /proc, clients of a control plane, bounded parallel work, waits that
// follow a watch, kube-apiserver's request counts and pprof fetches.
package benchkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

var clockTicks = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && v > 0 {
			return v
		}
	}
	return 100
}()

// ProcWatch samples a process's CPU time and RSS every 100 ms.
type ProcWatch struct {
	pid     int
	mu      sync.Mutex
	lastCPU float64
	peakRSS float64 // MiB, since the last phase()
	// peakAnon and fileAtPeakAnon split the peak: anonymous memory (heap,
	// stacks) against file-backed pages (the binary's code, clean and
	// reclaimable), MiB, over the whole run.
	peakAnon, fileAtPeakAnon float64
	done                     chan struct{}
	wg                       sync.WaitGroup
}

// NewProcWatch starts sampling pid.
func NewProcWatch(pid int) *ProcWatch {
	p := &ProcWatch{pid: pid, done: make(chan struct{})}
	p.lastCPU, _ = CPUSeconds(pid)
	p.sample()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				p.sample()
			}
		}
	}()
	return p
}

func (p *ProcWatch) sample() {
	rss, err := StatusKB(p.pid, "VmRSS")
	if err != nil {
		return
	}
	anon, errAnon := StatusKB(p.pid, "RssAnon")
	file, errFile := StatusKB(p.pid, "RssFile")
	p.mu.Lock()
	defer p.mu.Unlock()
	if mib := rss / 1024; mib > p.peakRSS {
		p.peakRSS = mib
	}
	if errAnon == nil && errFile == nil && anon/1024 > p.peakAnon {
		p.peakAnon, p.fileAtPeakAnon = anon/1024, file/1024
	}
}

// AnonPeak returns the peak of anonymous memory and the file-backed RSS at
// that moment (MiB).
func (p *ProcWatch) AnonPeak() (anon, file float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakAnon, p.fileAtPeakAnon
}

// Phase returns CPU-seconds and peak RSS (MiB) since the previous call.
func (p *ProcWatch) Phase() (cpu, rss float64) {
	p.sample()
	now, _ := CPUSeconds(p.pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	cpu, rss = now-p.lastCPU, p.peakRSS
	p.lastCPU = now
	cur, err := StatusKB(p.pid, "VmRSS")
	if err == nil {
		p.peakRSS = cur / 1024
	} else {
		p.peakRSS = 0
	}
	return cpu, rss
}

// HWM returns the process's peak RSS (VmHWM, MiB).
func (p *ProcWatch) HWM() float64 {
	v, _ := StatusKB(p.pid, "VmHWM")
	return v / 1024
}

// Stop ends the sampling.
func (p *ProcWatch) Stop() {
	close(p.done)
	p.wg.Wait()
}

// CPUMeter reads a process's CPU-seconds per phase.
type CPUMeter struct {
	pid  int
	last float64
}

// NewCPUMeter starts metering pid.
func NewCPUMeter(pid int) *CPUMeter {
	m := &CPUMeter{pid: pid}
	m.last, _ = CPUSeconds(pid)
	return m
}

// Phase returns the CPU-seconds since the previous call.
func (m *CPUMeter) Phase() float64 {
	now, err := CPUSeconds(m.pid)
	if err != nil {
		return 0
	}
	d := now - m.last
	m.last = now
	return d
}

// CPUSeconds is the user and system CPU time pid has used.
func CPUSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name, which is in parentheses: state is field 3,
	// utime 14, stime 15.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return (ut + st) / clockTicks, nil
}

// StatusKB reads a kB field of /proc/PID/status.
func StatusKB(pid int, field string) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				return strconv.ParseFloat(f[0], 64)
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
