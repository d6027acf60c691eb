// nullwebhook: the floor a webhook call costs a pod create. It answers every AdmissionReview with the
// response gpuadmit gave the first review it saw on that path for that kind (the same patch, the same
// warnings, the same bytes) with only the uid swapped in, and evaluates nothing. By kind, because a Job's
// patch is not a Pod's (tests/e2e/burst.sh sends both). tests/e2e/overhead.sh registers it
// in place of gpuadmit for its "do-nothing webhook" phase.
//
//	nullwebhook -listen 127.0.0.1:PORT -cert tls.crt -key tls.key -upstream https://127.0.0.1:P -ca ca.crt
//
// stdout: "listening ADDR", then one line "<path> <uid>" per review answered, which is how overhead.sh sees that the API
// server calls this server rather than gpuadmit.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
)

// The response template is split around the uid, so an answer is three writes and no encoding.
type template struct{ before, after []byte }

type server struct {
	upstream string
	client   *http.Client
	mu       sync.Mutex
	learned  map[string]template
	out      *log.Logger
}

const uidMark = "\x00uid\x00"

func (s *server) learn(path, kind string, body []byte) (template, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.learned[path+" "+kind]; ok {
		return t, nil
	}
	resp, err := s.client.Post(s.upstream+path, "application/json", bytes.NewReader(body))
	if err != nil {
		return template{}, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return template{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return template{}, fmt.Errorf("upstream %s answered %d: %s", path, resp.StatusCode, answer)
	}
	var review map[string]any
	if err := json.Unmarshal(answer, &review); err != nil {
		return template{}, err
	}
	response, ok := review["response"].(map[string]any)
	if !ok {
		return template{}, errors.New("upstream answer has no response object")
	}
	response["uid"] = uidMark
	marked, err := json.Marshal(review)
	if err != nil {
		return template{}, err
	}
	// json.Marshal writes the NUL bytes as \u0000.
	parts := bytes.SplitN(marked, []byte(`\u0000uid\u0000`), 2)
	if len(parts) != 2 {
		return template{}, errors.New("cannot place the uid in the learned answer")
	}
	t := template{parts[0], parts[1]}
	s.learned[path+" "+kind] = t
	return t, nil
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review struct {
		Request struct {
			UID  string `json:"uid"`
			Kind struct {
				Group string `json:"group"`
				Kind  string `json:"kind"`
			} `json:"kind"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &review); err != nil || review.Request.UID == "" {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	t, err := s.learn(r.URL.Path, review.Request.Kind.Group+"/"+review.Request.Kind.Kind, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	uid, _ := json.Marshal(review.Request.UID)
	w.Header().Set("Content-Type", "application/json")
	w.Write(t.before)
	w.Write(uid[1 : len(uid)-1])
	w.Write(t.after)
	s.out.Printf("%s %s", r.URL.Path, review.Request.UID)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to serve on (loopback)")
	cert := flag.String("cert", "", "serving certificate (PEM)")
	key := flag.String("key", "", "serving key (PEM)")
	upstream := flag.String("upstream", "", "gpuadmit's base URL, asked once per path")
	ca := flag.String("ca", "", "CA that signed the upstream's certificate")
	flag.Parse()
	if *cert == "" || *key == "" || *upstream == "" || *ca == "" {
		fmt.Fprintln(os.Stderr, "usage: nullwebhook -listen ADDR -cert FILE -key FILE -upstream URL -ca FILE")
		os.Exit(2)
	}
	pem, err := os.ReadFile(*ca)
	if err != nil {
		log.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		log.Fatalf("no certificate in %s", *ca)
	}
	s := &server{
		upstream: *upstream,
		client:   &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}},
		learned:  map[string]template{},
		out:      log.New(os.Stdout, "", 0),
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	// The first line tells the caller the port (-listen 127.0.0.1:0 picks a free one).
	s.out.Printf("listening %s", ln.Addr())
	// HTTP/1.1 only, as gpuadmit speaks: the API server's client would otherwise take HTTP/2, and the
	// floor would measure a different protocol.
	srv := &http.Server{Handler: s, TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}}
	log.Fatal(srv.ServeTLS(ln, *cert, *key))
}
