package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

type key struct{}

func TestDetach(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "request"))
	d := detach(parent)
	if d.Value(key{}) != nil {
		t.Fatal("a detached context forwards values")
	}
	if d.Err() != nil {
		t.Fatal("cancelled before its parent")
	}
	cancel()
	select {
	case <-d.Done():
	case <-time.After(time.Second):
		t.Fatal("not cancelled with its parent")
	}
	if !errors.Is(d.Err(), context.Canceled) {
		t.Fatalf("Err = %v", d.Err())
	}

	at := time.Now().Add(20 * time.Millisecond)
	timed, stop := context.WithDeadline(context.Background(), at)
	defer stop()
	d = detach(timed)
	if dl, ok := d.Deadline(); !ok || !dl.Equal(at) {
		t.Fatalf("deadline %v %v", dl, ok)
	}
	<-d.Done()
	if !errors.Is(d.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err after the deadline = %v", d.Err())
	}
	if detach(context.Background()) != context.Background() {
		t.Fatal("Background is wrapped")
	}
}
