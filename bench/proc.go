package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"vitrine/bench/load"
)

// proc is a child process of a scenario: a Vitrine server, nginx, varnish or the fixed-body
// server. Its output goes to a log file in the run's scratch folder.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, valid once done is closed
}

// startProc starts name (argv) pinned to cpus: through taskset when it is installed, so that
// every thread, and every process it forks, is pinned from its first instruction; else by
// pinning its threads right after the start. Go children get GOMAXPROCS sized to cpus. The child
// is killed by the kernel if the bench process dies (Pdeathsig).
func startProc(name, dir string, cpus []int, env []string, argv ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	out, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the child keeps its own descriptor
	taskset, _ := exec.LookPath("taskset")
	if len(cpus) > 0 && taskset != "" {
		argv = append([]string{taskset, "-c", cpuList(cpus)}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = dir
	// No load balancer polls a bench process's /readyz: edges and origins stop without a drain
	// delay (env given overrides it).
	cmd.Env = append(append(os.Environ(), "VITRINE_DRAIN_DELAY=0s"), env...)
	if len(cpus) > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(len(cpus)))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if len(cpus) > 0 && taskset == "" {
		if err := load.PinProcess(cmd.Process.Pid, cpus); err != nil {
			p.stop()
			return nil, err
		}
	}
	return p, nil
}

// pid is the child's process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// exited returns an error with the tail of the child's log if it has exited, else nil.
func (p *proc) exited() error {
	select {
	case <-p.done:
		return fmt.Errorf("bench: %s exited (%v): %s", p.name, p.err, p.tail())
	default:
		return nil
	}
}

// tail returns the last lines of the child's log.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	s := strings.TrimSpace(string(b))
	if len(s) > 1500 {
		s = "…" + s[len(s)-1500:]
	}
	return s
}

// stop sends SIGTERM to the child's process group, then SIGKILL after 10 s.
func (p *proc) stop() {
	if p == nil {
		return
	}
	syscall.Kill(-p.pid(), syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.pid(), syscall.SIGKILL)
		<-p.done
	}
}

// groupPIDs returns the child and its descendants (nginx and varnish fork their workers), for
// CPU accounting.
func (p *proc) groupPIDs() []int {
	pids := []int{p.pid()}
	for i := 0; i < len(pids); i++ {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pids[i], pids[i]))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// cpuList formats cpus for taskset -c.
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitHTTP polls url until it answers status want, the child exits or timeout passes.
func waitHTTP(ctx context.Context, p *proc, url string, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		status, _, err := fasthttp.GetTimeout(nil, url, time.Second)
		if err == nil && status == want {
			return nil
		}
		last = fmt.Sprintf("status %d, %v", status, err)
		if err := p.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: %s did not answer %d at %s within %v (last: %s)", p.name, want, url, timeout, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// scratchDir makes a temporary folder for a scenario's servers, readable by the unprivileged
// users nginx and varnish switch to.
func scratchDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	return dir, err
}
