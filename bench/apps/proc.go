package main

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

// procWatch samples a process's CPU time and RSS every 100 ms.
type procWatch struct {
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

func newProcWatch(pid int) *procWatch {
	p := &procWatch{pid: pid, done: make(chan struct{})}
	p.lastCPU, _ = cpuSeconds(pid)
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

func (p *procWatch) sample() {
	rss, err := statusKB(p.pid, "VmRSS")
	if err != nil {
		return
	}
	anon, errAnon := statusKB(p.pid, "RssAnon")
	file, errFile := statusKB(p.pid, "RssFile")
	p.mu.Lock()
	defer p.mu.Unlock()
	if mib := rss / 1024; mib > p.peakRSS {
		p.peakRSS = mib
	}
	if errAnon == nil && errFile == nil && anon/1024 > p.peakAnon {
		p.peakAnon, p.fileAtPeakAnon = anon/1024, file/1024
	}
}

// anonPeak returns the peak of anonymous memory and the file-backed RSS at
// that moment (MiB).
func (p *procWatch) anonPeak() (anon, file float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peakAnon, p.fileAtPeakAnon
}

// phase returns CPU-seconds and peak RSS (MiB) since the previous call.
func (p *procWatch) phase() (cpu, rss float64) {
	p.sample()
	now, _ := cpuSeconds(p.pid)
	p.mu.Lock()
	defer p.mu.Unlock()
	cpu, rss = now-p.lastCPU, p.peakRSS
	p.lastCPU = now
	cur, err := statusKB(p.pid, "VmRSS")
	if err == nil {
		p.peakRSS = cur / 1024
	} else {
		p.peakRSS = 0
	}
	return cpu, rss
}

func (p *procWatch) hwm() float64 {
	v, _ := statusKB(p.pid, "VmHWM")
	return v / 1024
}

func (p *procWatch) stop() {
	close(p.done)
	p.wg.Wait()
}

// cpuMeter reads a process's CPU-seconds per phase.
type cpuMeter struct {
	pid  int
	last float64
}

func newCPUMeter(pid int) *cpuMeter {
	m := &cpuMeter{pid: pid}
	m.last, _ = cpuSeconds(pid)
	return m
}

// phase returns the CPU-seconds since the previous call.
func (m *cpuMeter) phase() float64 {
	now, err := cpuSeconds(m.pid)
	if err != nil {
		return 0
	}
	d := now - m.last
	m.last = now
	return d
}

func cpuSeconds(pid int) (float64, error) {
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

func statusKB(pid int, field string) (float64, error) {
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

// procGroup watches the processes of every replica as one: a phase's CPU
// is their sum, its peak RSS the largest replica's; each holds the last
// phase's figures per replica. With one replica it is that process's
// procWatch.
type procGroup struct {
	procs []*procWatch
	each  []procPhase
}

// procPhase is one process's CPU-seconds and peak RSS (MiB) in a phase.
type procPhase struct{ cpu, rss float64 }

func newProcGroup(pids []int) *procGroup {
	g := &procGroup{}
	for _, pid := range pids {
		g.procs = append(g.procs, newProcWatch(pid))
	}
	return g
}

// phase returns the CPU-seconds of all replicas and the largest replica's
// peak RSS (MiB) since the previous call; each holds them per replica.
func (g *procGroup) phase() (cpu, rss float64) {
	g.each = g.each[:0]
	for _, p := range g.procs {
		c, r := p.phase()
		g.each = append(g.each, procPhase{c, r})
		cpu += c
		rss = max(rss, r)
	}
	return cpu, rss
}

// hwm returns the largest replica's VmHWM (MiB).
func (g *procGroup) hwm() float64 {
	peak := 0.0
	for _, p := range g.procs {
		peak = max(peak, p.hwm())
	}
	return peak
}

// anonPeak returns the peak of anonymous memory of the replica with the
// largest one, and its file-backed RSS then (MiB).
func (g *procGroup) anonPeak() (anon, file float64) {
	for _, p := range g.procs {
		if a, f := p.anonPeak(); a > anon {
			anon, file = a, f
		}
	}
	return anon, file
}

func (g *procGroup) stop() {
	for _, p := range g.procs {
		p.stop()
	}
}
