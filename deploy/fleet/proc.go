package fleet

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procSpec describes a long-running process of the fleet.
type procSpec struct {
	name string // also its log file's name: <dir>/logs/<name>.log
	ns   string
	argv []string
	// cred runs the process as another user (PostgreSQL refuses root).
	cred *syscall.Credential
	// env is added to the process's environment (secrets stay out of argv and the logs).
	env []string
	// ready answers nil once the process serves; it is polled.
	ready func(ctx context.Context) error
	// stopSignal asks the process to stop (default SIGTERM); it is killed after stopTimeout.
	stopSignal  syscall.Signal
	stopTimeout time.Duration
}

// process is a started procSpec. mu guards cmd, done and exitErr across restarts.
type process struct {
	spec    procSpec
	logPath string

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{} // closed when the current run has exited
	exitErr  error
	started  time.Time
	restarts int
	ready    bool
}

// ProcessStatus is a process as Status shows it.
type ProcessStatus struct {
	Name      string    `json:"name"`
	Namespace string    `json:"namespace"`
	PID       int       `json:"pid"`
	Running   bool      `json:"running"`
	Ready     bool      `json:"ready"`
	Started   time.Time `json:"started"`
	Restarts  int       `json:"restarts"`
	Exit      string    `json:"exit,omitempty"`
	Log       string    `json:"log"`
}

func newProcess(logDir string, spec procSpec) *process {
	if spec.stopSignal == 0 {
		spec.stopSignal = syscall.SIGTERM
	}
	if spec.stopTimeout == 0 {
		spec.stopTimeout = 20 * time.Second
	}
	return &process{spec: spec, logPath: filepath.Join(logDir, spec.name+".log")}
}

// start starts the process in its namespace, its output appended to its log.
func (p *process) start() error {
	out, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer out.Close() // the child has its own descriptor
	fmt.Fprintf(out, "---- %s fleet: starting in %s: %s\n", time.Now().UTC().Format(time.RFC3339), p.spec.ns, strings.Join(p.spec.argv, " "))
	cmd := exec.Command(p.spec.argv[0], p.spec.argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	prepare(cmd, p.spec.cred, p.spec.env)
	if err := startIn(p.spec.ns, cmd); err != nil {
		return fmt.Errorf("fleet: start %s: %w", p.spec.name, err)
	}
	done := make(chan struct{})
	p.mu.Lock()
	if p.cmd != nil {
		p.restarts++
	}
	p.cmd, p.done, p.exitErr, p.started, p.ready = cmd, done, nil, time.Now(), false
	p.mu.Unlock()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.exitErr = err
		p.ready = false
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// exited returns an error naming the exit and the log's tail if the current run has ended.
func (p *process) exited() error {
	p.mu.Lock()
	done, exitErr := p.done, p.exitErr
	p.mu.Unlock()
	if done == nil {
		return fmt.Errorf("fleet: %s not started", p.spec.name)
	}
	select {
	case <-done:
		return fmt.Errorf("fleet: %s exited (%v): %s", p.spec.name, exitErr, tail(p.logPath, 1500))
	default:
		return nil
	}
}

// waitReady polls the readiness probe until it passes, the process exits or timeout passes.
func (p *process) waitReady(ctx context.Context, timeout time.Duration) error {
	if p.spec.ready == nil {
		p.setReady()
		return nil
	}
	deadline := time.Now().Add(timeout)
	var last error
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		last = p.spec.ready(pctx)
		cancel()
		if last == nil {
			p.setReady()
			return nil
		}
		if err := p.exited(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fleet: %s not ready within %v (last: %v); log %s", p.spec.name, timeout, last, p.logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (p *process) setReady() {
	p.mu.Lock()
	p.ready = true
	p.mu.Unlock()
}

// stop asks the process to stop, kills its process group after the stop timeout, and waits.
func (p *process) stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	pid := cmd.Process.Pid
	syscall.Kill(pid, p.spec.stopSignal)
	select {
	case <-done:
	case <-time.After(p.spec.stopTimeout):
		syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
	// Children it left behind in its group (none expected) go too.
	syscall.Kill(-pid, syscall.SIGKILL)
}

func (p *process) status() ProcessStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := ProcessStatus{Name: p.spec.name, Namespace: p.spec.ns, Ready: p.ready, Started: p.started, Restarts: p.restarts, Log: p.logPath}
	if p.cmd != nil {
		s.PID = p.cmd.Process.Pid
		select {
		case <-p.done:
			s.Exit = fmt.Sprint(p.exitErr)
		default:
			s.Running = true
		}
	}
	return s
}

// runOnce runs a command to completion in a namespace, its output appended to the log at
// logPath and returned.
func runOnce(ctx context.Context, logPath, ns string, cred *syscall.Credential, env []string, argv ...string) ([]byte, error) {
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	fmt.Fprintf(out, "---- %s fleet: running in %s: %s\n", time.Now().UTC().Format(time.RFC3339), ns, strings.Join(argv, " "))
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	w := io.MultiWriter(out, &buf)
	cmd.Stdout, cmd.Stderr = w, w
	prepare(cmd, cred, env)
	if err := startIn(ns, cmd); err != nil {
		return nil, fmt.Errorf("fleet: run %s: %w", argv[0], err)
	}
	if err := cmd.Wait(); err != nil {
		return buf.Bytes(), fmt.Errorf("fleet: %s: %v: %s", strings.Join(argv, " "), err, lastBytes(buf.Bytes(), 1500))
	}
	return buf.Bytes(), nil
}

// prepare sets what every child of the fleet shares: its own process group, death with its
// parent, the user it runs as, and an environment without the caller's Vitrine settings (which
// would point a fleet process at the caller's database or NATS) plus env.
func prepare(cmd *exec.Cmd, cred *syscall.Credential, env []string) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if cred != nil {
		cmd.Dir = "/" // the caller's working directory may be closed to that user
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VITRINE_") && !strings.HasPrefix(kv, "DATABASE_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
}

// alive reports whether a process exists and is not a zombie.
func alive(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may hold spaces.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// Alive reports whether a process (such as a fleet's supervisor) exists and is not a zombie.
func Alive(pid int) bool { return alive(pid) }

// tail returns the last n bytes of a file, trimmed.
func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	return lastBytes(b, n)
}

func lastBytes(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
