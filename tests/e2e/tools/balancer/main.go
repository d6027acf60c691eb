// balancer: what a Service with two endpoints does for the API server's webhook calls, on loopback.
// It accepts TCP on -listen and splices each connection to one backend, in turn, choosing only among
// backends whose GET /readyz answered 200 at the last probe (every -probe), as the endpoints controller
// and kube-proxy do with a pod's readiness probe; with none ready, it tries each backend in turn, as
// connections to a Service without ready endpoints would fail anyway. TLS passes through untouched.
//
// With -plain, backends are not probed (any that accepts will do): a plain TCP proxy, as between gpuadmit
// and the API server. While the file named by -pause exists, no byte passes in either direction and new
// connections are held unanswered: a network partition, not a refusal (nothing is reset or closed).
//
// First line on stdout: "listening ADDR". Then one line per readiness change: "ready BACKEND true|false".
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var pauseFile string

// holdWhilePaused blocks while the pause file exists.
func holdWhilePaused() {
	if pauseFile == "" {
		return
	}
	for {
		if _, err := os.Stat(pauseFile); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pump copies src to dst, holding every chunk while paused. End of stream is passed on as a half close; an
// error closes both connections, so the other direction's pump ends too.
func pump(dst, src net.Conn) {
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			holdWhilePaused()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				dst.Close()
				return
			}
		}
		if err == io.EOF {
			dst.(*net.TCPConn).CloseWrite()
			return
		}
		if err != nil {
			src.Close()
			dst.Close()
			return
		}
	}
}

type backend struct {
	addr  string
	ready atomic.Bool
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to accept on")
	backends := flag.String("backends", "", "comma-separated HOST:PORT of the replicas")
	probe := flag.Duration("probe", 250*time.Millisecond, "readiness probe period")
	plain := flag.Bool("plain", false, "do not probe /readyz: forward to any backend that accepts")
	flag.StringVar(&pauseFile, "pause", "", "while this file exists, forward nothing")
	flag.Parse()
	var bs []*backend
	for _, a := range strings.Split(*backends, ",") {
		if a = strings.TrimSpace(a); a != "" {
			bs = append(bs, &backend{addr: a})
		}
	}
	if len(bs) == 0 {
		fmt.Fprintln(os.Stderr, "balancer: -backends is empty")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "balancer:", err)
		os.Exit(1)
	}
	fmt.Printf("listening %s\n", ln.Addr())
	var out sync.Mutex
	for _, b := range bs {
		if !*plain {
			go watch(b, *probe, &out)
		}
	}
	var next atomic.Uint64
	for {
		c, err := ln.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "balancer:", err)
			os.Exit(1)
		}
		go serve(c, bs, next.Add(1))
	}
}

// watch probes one backend's /readyz (the certificate is not checked: this is the kubelet's probe, which
// does not check it either).
func watch(b *backend, period time.Duration, out *sync.Mutex) {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
	for {
		ok := false
		if r, err := client.Get("https://" + b.addr + "/readyz"); err == nil {
			ok = r.StatusCode == http.StatusOK
			r.Body.Close()
		}
		if b.ready.Swap(ok) != ok {
			out.Lock()
			fmt.Printf("ready %s %v\n", b.addr, ok)
			out.Unlock()
		}
		time.Sleep(period)
	}
}

func serve(c net.Conn, bs []*backend, turn uint64) {
	defer c.Close()
	var order []*backend
	for i := range bs {
		if b := bs[(int(turn)+i)%len(bs)]; b.ready.Load() {
			order = append(order, b)
		}
	}
	if len(order) == 0 {
		for i := range bs {
			order = append(order, bs[(int(turn)+i)%len(bs)])
		}
	}
	holdWhilePaused()
	for _, b := range order {
		up, err := net.DialTimeout("tcp", b.addr, time.Second)
		if err != nil {
			continue
		}
		defer up.Close()
		done := make(chan struct{}, 2)
		go func() { pump(up, c); done <- struct{}{} }()
		go func() { pump(c, up); done <- struct{}{} }()
		<-done
		<-done
		return
	}
}
