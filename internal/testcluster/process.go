package testcluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one control plane program running in its own process group.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	err     error // set before done is closed
}

// startProcess runs bin with args, logging to dir/<name>.log. The child gets
// its own process group (so Stop reaches anything it spawns) and is killed by
// the kernel if the process that started it dies, so a killed test binary
// leaves nothing behind.
func startProcess(dir, name, bin string, args ...string) (*process, error) {
	return startProcessTo(dir, name, nil, bin, args...)
}

// startProcessTo is startProcess that also copies the output to out, when set.
func startProcessTo(dir, name string, out io.Writer, bin string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log for %s: %w", name, err)
	}
	var w io.Writer = logFile
	if out != nil {
		w = io.MultiWriter(logFile, out)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.pid(), syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.done
	}
	// Children that outlived their leader.
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
}

// logTail returns the last lines of the process's log, for error messages.
func (p *process) logTail(lines int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// errPortTaken marks a component that exited because another program
// held the port it was given.
var errPortTaken = errors.New("port taken")

// failure describes a process that exited early.
func (p *process) failure() error {
	tail := p.logTail(20)
	err := fmt.Errorf("%s exited: %v; last log lines (%s):\n%s", p.name, p.err, p.logPath, tail)
	if strings.Contains(tail, "address already in use") {
		return fmt.Errorf("%w: %w", errPortTaken, err)
	}
	return err
}

// ownerFile records which process owns a cluster directory and the process
// groups it started, so a later run can clean up after a run that was killed
// before Pdeathsig could help (for example a SIGKILLed parent of a go test).
const ownerFile = "owner"

func writeOwner(dir string, pgids []int) error {
	var b bytes.Buffer
	fmt.Fprintln(&b, os.Getpid())
	for _, id := range pgids {
		fmt.Fprintln(&b, id)
	}
	tmp := filepath.Join(dir, ownerFile+".tmp")
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ownerFile))
}

// reapStale removes cluster directories under root whose owner is gone,
// killing their process groups first.
func reapStale(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), dirPrefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		data, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // starting, or not ours
		}
		ids := parseInts(string(data))
		if len(ids) == 0 || Alive(ids[0]) {
			continue
		}
		for _, pgid := range ids[1:] {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		_ = os.RemoveAll(dir)
	}
}

func parseInts(s string) []int {
	var out []int
	for _, f := range strings.Fields(s) {
		if n, err := strconv.Atoi(f); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// Alive reports whether a process exists and is not a zombie (a zombie has
// exited and only waits for its parent to collect it).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// The state follows the command name, which is in parentheses and may
	// itself contain spaces or parentheses.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
