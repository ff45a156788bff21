package scimsvc

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLazyDeadline: the request deadline answers Err from the clock before anything waits on
// it, closes Done when it passes once something does, follows its parent, and reports Canceled
// once the request has ended.
func TestLazyDeadline(t *testing.T) {
	ctx := withLazyDeadline(context.Background(), 20*time.Millisecond)
	release := ctx.release
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > 20*time.Millisecond {
		t.Fatalf("Deadline() = %v, %v", d, ok)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("Err() before the deadline = %v", err)
	}
	if ctx.armed.Load() != nil {
		t.Fatal("Err armed a timer")
	}
	time.Sleep(25 * time.Millisecond)
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err() after the deadline, unarmed = %v", err)
	}
	release()

	ctx = withLazyDeadline(context.Background(), 20*time.Millisecond)
	release = ctx.release
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done never closed")
	}
	if err := ctx.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err() after Done = %v", err)
	}
	release()

	parent, cancel := context.WithCancel(context.Background())
	ctx = withLazyDeadline(parent, time.Hour)
	release = ctx.release
	cancel()
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() after the parent's cancel = %v", err)
	}
	<-ctx.Done()
	release()

	ctx = withLazyDeadline(context.Background(), time.Hour)
	release = ctx.release
	release()
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() after release = %v", err)
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done open after release")
	}
	ctx = withLazyDeadline(context.Background(), time.Hour)
	release = ctx.release
	child, stop := context.WithCancel(ctx)
	release()
	<-child.Done() // a derived context follows the release
	stop()
}
