package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkServiceStart starts the built binary, outside demo mode, on a SQLite store of no
// tenant and on one of N tenants (N is 10,000; VISID_BENCH_START_TENANTS sets another, 100000
// for the figures of docs/production.md), and reports the time from the process's start until
// it has printed its start lines, which it does once it listens (ns/op), and its resident memory
// then (rss-MiB). The service counts the tenants and reads none, so both stay those of the
// empty store. Run it with -benchtime 5x or so: each iteration is a process.
func BenchmarkServiceStart(b *testing.B) {
	n := 10_000
	if s := os.Getenv("VISID_BENCH_START_TENANTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	bin := buildIDP(b)
	for _, tenants := range []int{0, n} {
		b.Run(fmt.Sprintf("tenants=%d", tenants), func(b *testing.B) {
			db := "sqlite:" + filepath.Join(b.TempDir(), "idp.db")
			fillTenants(b, db, tenants)
			var rss float64
			for b.Loop() {
				rss = startAndMeasure(b, bin, db, tenants)
			}
			b.ReportMetric(rss, "rss-MiB")
		})
	}
}

// fillTenants makes the store db and puts n tenants in it, tenant-000000 on, 1,000 rows an
// INSERT in one transaction: a few seconds for 100,000, where as many Tenants.Create would take
// minutes.
func fillTenants(b *testing.B, db string, n int) {
	ctx := context.Background()
	d, err := openDB(ctx, db) // makes the file, its key and its schema
	if err != nil {
		b.Fatal(err)
	}
	if err := d.close(); err != nil {
		b.Fatal(err)
	}
	conn, err := sql.Open("sqlite", strings.TrimPrefix(db, "sqlite:"))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	created := time.Now().UnixNano()
	for start := 0; start < n; start += 1000 {
		var q strings.Builder
		q.WriteString("INSERT INTO tenants (id, display_name, created) VALUES ")
		var args []any
		for i := start; i < min(start+1000, n); i++ {
			if i > start {
				q.WriteString(",")
			}
			q.WriteString("(?, ?, ?)")
			args = append(args, fmt.Sprintf("tenant-%06d", i), fmt.Sprintf("Tenant %d", i), created)
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// startAndMeasure starts bin on db, waits for its start lines (which must count tenants), reads
// its resident memory, stops it, and returns the memory in MiB. Only the wait is timed.
func startAndMeasure(b *testing.B, bin, db string, tenants int) float64 {
	b.StopTimer()
	cmd := exec.Command(bin, "-db", db, "-demo=false", "-addr", "127.0.0.1:0", "-admin-addr", "")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	_, vars, err := readVars(bufio.NewReader(stdout))
	b.StopTimer()
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.StartTimer()
	}()
	if err != nil {
		b.Fatal(err)
	}
	if vars["tenants"] != strconv.Itoa(tenants) {
		b.Fatalf("tenants=%s, want %d", vars["tenants"], tenants)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0 // no /proc: no figure
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
