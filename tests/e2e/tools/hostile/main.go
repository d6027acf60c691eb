// Hostile clients for tests/e2e/faults.sh: -count connections to each HOST:PORT for -seconds, a third each of
//   - idle: the TLS handshake, then nothing;
//   - slow header: a request header trickled one byte a second (slowloris);
//   - slow body: a header whose Content-Length promises 1 MB, the body trickled likewise.
//
// With -mode answered, every connection instead asks GET /healthz once, reads the answer and then holds the
// connection idle: what any pod can do, since probes need no client certificate.
//
// Each reconnects a second after the server closes it, as a determined client would. Meanwhile, every
// second, over connections of their own, a body over the 7 MiB limit and a 100,000-deep JSON are sent to
// each target and their status codes counted. Prints one summary line. Goroutines, not threads: the Python
// version of this stopped near 3,000 connections on a 2-core machine.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type counters struct {
	opened, refused, closedByServer, heldToEnd, open, peakOpen atomic.Int64
	mu                                                         sync.Mutex
	answers                                                    map[string]int
}

func (c *counters) answer(what string) {
	c.mu.Lock()
	c.answers[what]++
	c.mu.Unlock()
}

// source: the local address to connect from ("" for the kernel's choice), so a test on loopback can be a
// client of its own (127.0.0.2).
var source string

func dial(addr string) (*tls.Conn, error) {
	d := &net.Dialer{Timeout: 10 * time.Second}
	if source != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(source)}
	}
	// A hostile client does not care who answers.
	return tls.DialWithDialer(d, "tcp", addr, &tls.Config{InsecureSkipVerify: true, ServerName: "localhost"}) //nolint:gosec
}

var header = []byte("POST /mutate HTTP/1.1\r\nHost: gpuadmit\r\nContent-Type: application/json\r\n")

// hold runs one hostile connection of `kind` (0 idle, 1 slow header, 2 slow body, 3 answered then idle) until `until`,
// reconnecting after the server closes it.
func hold(addr string, kind int, until time.Time, c *counters) {
	for time.Now().Before(until) {
		conn, err := dial(addr)
		if err != nil {
			c.refused.Add(1)
			time.Sleep(time.Second)
			continue
		}
		c.opened.Add(1)
		for n, peak := c.open.Add(1), c.peakOpen.Load(); n > peak && !c.peakOpen.CompareAndSwap(peak, n); {
			peak = c.peakOpen.Load()
		}
		closed := trickle(conn, kind, until)
		c.open.Add(-1)
		conn.Close()
		if !closed {
			c.heldToEnd.Add(1)
			return
		}
		c.closedByServer.Add(1)
		time.Sleep(time.Second)
	}
}

// trickle sends a byte a second as `kind` says and reports whether the server closed the connection first.
func trickle(conn *tls.Conn, kind int, until time.Time) bool {
	head := header
	if kind == 2 {
		head = append(append([]byte{}, header...), []byte("Content-Length: 1000000\r\n\r\n")...)
	}
	sent := 0
	buf := make([]byte, 4096)
	if kind == 3 {
		if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: gpuadmit\r\n\r\n")); err != nil {
			return true
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Read(buf); err != nil {
			return true
		}
	}
	for time.Now().Before(until) {
		var err error
		switch {
		case kind == 1 && sent < len(head):
			_, err = conn.Write(head[sent : sent+1])
			sent++
		case kind == 2 && sent < len(head):
			_, err = conn.Write(head)
			sent = len(head)
		case kind == 2:
			_, err = conn.Write([]byte("["))
		}
		if err != nil {
			return true
		}
		_ = conn.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := conn.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return true // EOF or reset: the server closed it (or answered and closed)
		}
	}
	return false
}

// request sends one whole request on a connection of its own and returns its status code, or the error.
func request(addr string, body []byte) string {
	conn, err := dial(addr)
	if err != nil {
		return "refused"
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
	fmt.Fprintf(conn, "POST /mutate HTTP/1.1\r\nHost: gpuadmit\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", len(body))
	// The server may answer 413 and close before taking the whole body: the write fails, the answer is read.
	_, _ = conn.Write(body)
	line, err := bufio.NewReader(conn).ReadString('\n')
	fields := strings.Fields(line)
	if len(fields) < 2 {
		if err != nil {
			return "no answer"
		}
		return "garbled"
	}
	return fields[1]
}

func main() {
	seconds := flag.Float64("seconds", 25, "how long to keep at it")
	count := flag.Int("count", 1500, "hostile connections per target")
	ramp := flag.Duration("ramp", 5*time.Second, "spread the first connections over this long")
	mode := flag.String("mode", "mixed", "mixed (idle, slow header, slow body) or answered (GET /healthz, then idle)")
	flag.StringVar(&source, "source", "", "local address to connect from")
	flag.Parse()
	targets := flag.Args()
	if len(targets) == 0 || *count < 0 || *seconds <= 0 || (*mode != "mixed" && *mode != "answered") {
		fmt.Fprintln(os.Stderr, "usage: hostile [-seconds S] [-count N] [-ramp D] [-mode mixed|answered] [-source ADDR] HOST:PORT...")
		os.Exit(2)
	}
	until := time.Now().Add(time.Duration(*seconds * float64(time.Second)))
	c := &counters{answers: map[string]int{}}
	big := append(append([]byte("["), bytes.Repeat([]byte("1,"), 4*1024*1024)...), []byte("1]")...)
	nested := []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":` +
		strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "}")

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for time.Now().Before(until) {
			for _, t := range targets {
				c.answer("oversized=" + request(t, big))
				c.answer("nested=" + request(t, nested))
			}
			time.Sleep(time.Second)
		}
	}()
	total := *count * len(targets)
	for i := 0; i < total; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Duration(int64(*ramp) * int64(i) / int64(total)))
			kind := (i / len(targets)) % 3
			if *mode == "answered" {
				kind = 3
			}
			hold(targets[i%len(targets)], kind, until, c)
		}(i)
	}
	wg.Wait()
	keys := make([]string, 0, len(c.answers))
	for k := range c.answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s x%d", k, c.answers[k]))
	}
	fmt.Printf("%d connections opened (%d refused, peak %d open), %d closed by the server early, %d held to the end; answers: %s\n",
		c.opened.Load(), c.refused.Load(), c.peakOpen.Load(), c.closedByServer.Load(), c.heldToEnd.Load(), strings.Join(parts, ", "))
}
