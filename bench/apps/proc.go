package main

import "github.com/skiffcd/skiff/bench/internal/benchkit"

// procGroup watches the processes of every replica as one: a phase's CPU
// is their sum, its peak RSS the largest replica's; each holds the last
// phase's figures per replica. With one replica it is that process's
// procWatch.
type procGroup struct {
	procs []*benchkit.ProcWatch
	each  []procPhase
}

// procPhase is one process's CPU-seconds and peak RSS (MiB) in a phase.
type procPhase struct{ cpu, rss float64 }

func newProcGroup(pids []int) *procGroup {
	g := &procGroup{}
	for _, pid := range pids {
		g.procs = append(g.procs, benchkit.NewProcWatch(pid))
	}
	return g
}

// phase returns the CPU-seconds of all replicas and the largest replica's
// peak RSS (MiB) since the previous call; each holds them per replica.
func (g *procGroup) phase() (cpu, rss float64) {
	g.each = g.each[:0]
	for _, p := range g.procs {
		c, r := p.Phase()
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
		peak = max(peak, p.HWM())
	}
	return peak
}

// anonPeak returns the peak of anonymous memory of the replica with the
// largest one, and its file-backed RSS then (MiB).
func (g *procGroup) anonPeak() (anon, file float64) {
	for _, p := range g.procs {
		if a, f := p.AnonPeak(); a > anon {
			anon, file = a, f
		}
	}
	return anon, file
}

func (g *procGroup) stop() {
	for _, p := range g.procs {
		p.Stop()
	}
}
