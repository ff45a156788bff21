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
	ctx, release := withLazyDeadline(context.Background(), 20*time.Millisecond)
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

	ctx, release = withLazyDeadline(context.Background(), 20*time.Millisecond)
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
	ctx, release = withLazyDeadline(parent, time.Hour)
	cancel()
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() after the parent's cancel = %v", err)
	}
	<-ctx.Done()
	release()

	ctx, release = withLazyDeadline(context.Background(), time.Hour)
	release()
	if err := ctx.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() after release = %v", err)
	}
	select {
	case <-ctx.Done():
	default:
		t.Fatal("Done open after release")
	}
	ctx, release = withLazyDeadline(context.Background(), time.Hour)
	child, stop := context.WithCancel(ctx)
	release()
	<-child.Done() // a derived context follows the release
	stop()
}
